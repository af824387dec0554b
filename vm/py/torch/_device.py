"""``torch.device``: fxvm computes on the CPU only."""


class device:
    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        kind, _, idx = str(type).partition(":")
        if kind != "cpu":
            raise RuntimeError(f"fxvm runs on the CPU only; device '{type}' is not available")
        self.type = kind
        self.index = int(idx) if idx else index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


# PyTorch defines it in C and exposes it as torch.device; pickles name it so.
device.__module__ = "torch"
