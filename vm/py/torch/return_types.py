"""Named result tuples of ops that return several tensors, printed as PyTorch does."""

__all__ = [
    "aminmax",
    "cummax",
    "cummin",
    "kthvalue",
    "linalg_eigh",
    "linalg_qr",
    "linalg_slogdet",
    "linalg_svd",
    "max",
    "median",
    "min",
    "nanmedian",
    "slogdet",
    "sort",
    "svd",
    "topk",
]


def _structseq(name, fields):
    def __new__(cls, values):
        values = tuple(values)
        if len(values) != len(fields):
            raise TypeError(f"torch.return_types.{name} takes a {len(fields)}-sequence ({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self):
        items = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{items})"

    def __reduce__(self):
        return (type(self), (tuple(self),))

    namespace = {
        "__new__": __new__,
        "__repr__": __repr__,
        "__reduce__": __reduce__,
        "__slots__": (),
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
    }
    for i, f in enumerate(fields):
        namespace[f] = property(lambda self, i=i: tuple.__getitem__(self, i))
    cls = type(name, (tuple,), namespace)
    cls.__module__ = "torch.return_types"
    return cls


_FIELDS = {
    "linalg_qr": ("Q", "R"),
    "aminmax": ("min", "max"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"),
    "linalg_slogdet": ("sign", "logabsdet"),
    "slogdet": ("sign", "logabsdet"),
    "linalg_svd": ("U", "S", "Vh"),
    "svd": ("U", "S", "V"),
}
for _name in __all__:
    globals()[_name] = _structseq(_name, _FIELDS.get(_name, ("values", "indices")))
del _name
