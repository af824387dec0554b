"""Objects PyTorch exposes as named constants (`torch.channels_last`,
`torch.strided`): they print and pickle as their `torch.` name."""


class _TorchName:
    __module__ = "torch"

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name
