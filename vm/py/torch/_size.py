"""``torch.Size``: the tuple subclass that ``Tensor.shape`` returns."""


class Size(tuple):
    __slots__ = ()

    def __repr__(self):
        return "torch.Size([" + ", ".join(repr(d) for d in self) + "])"

    __str__ = __repr__

    def numel(self):
        n = 1
        for d in self:
            n *= d
        return n

    def __getitem__(self, key):
        item = tuple.__getitem__(self, key)
        return Size(item) if isinstance(key, slice) else item

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


# PyTorch defines it in C and exposes it as torch.Size; pickles name it so.
Size.__module__ = "torch"
