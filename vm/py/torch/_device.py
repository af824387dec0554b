"""``torch.device``: names any device PyTorch knows, as PyTorch does; fxvm
computes on the CPU only, so tensors refuse other devices when created."""

from torch import _C

# The device types PyTorch names (the list tensor creation checks against).
_TYPES = _C._device_types


class device:
    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            # A bare index names the accelerator's device of that index.
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            type, index = "cuda", type
        kind, _, idx = str(type).partition(":")
        if kind not in _TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type}")
        self.type = kind
        self.index = int(idx) if idx else index

    def __repr__(self):
        return (
            f"device(type='{self.type}')" if self.index is None else f"device(type='{self.type}', index={self.index})"
        )

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    # `with torch.device(...)`: where factory calls put their tensors.
    # fxvm's tensors all live on the CPU; a meta context (transformers
    # builds models under one before loading their weights) makes CPU
    # tensors, said once; any other device raises as making a tensor there.
    # `torch.get_default_device()` answers the innermost context's device.
    def __enter__(self):
        if self.type == "meta":
            _warn_meta_once()
        elif self.type != "cpu":
            import torch

            torch.empty(0, device=self)
        _contexts.append(self)
        return self

    def __exit__(self, *args):
        _contexts.remove(self)
        return None


# The `with torch.device(...)` contexts entered and not yet left, innermost last.
_contexts = []
_meta_warned = []


def _warn_meta_once():
    if not _meta_warned:
        import warnings

        _meta_warned.append(True)
        warnings.warn(
            "fxvm has no meta device: tensors made on it (or under torch.device('meta')) are allocated on the CPU",
            UserWarning,
            stacklevel=3,
        )


# PyTorch defines it in C and exposes it as torch.device; pickles name it so.
device.__module__ = "torch"
