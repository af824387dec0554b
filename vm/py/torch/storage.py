"""Storages as Python sees them: ``tensor.untyped_storage()`` (the bytes
a tensor's elements live in, shared by all its views), ``tensor.storage()``
(the deprecated typed form), and the legacy typed classes
(``torch.FloatStorage`` …) PyTorch's checkpoints name dtypes by. fxvm keeps
each storage inside its tensors; a storage object holds one of them."""

import io

import torch

__all__ = [
    "TypedStorage",
    "UntypedStorage",
    "FloatStorage",
    "DoubleStorage",
    "HalfStorage",
    "BFloat16Storage",
    "LongStorage",
    "IntStorage",
    "ShortStorage",
    "CharStorage",
    "ByteStorage",
    "BoolStorage",
]


class _CpuStorage:
    """What every storage answers alike: it is on the CPU, indexed through ``tolist``."""

    @property
    def device(self):
        return torch.device("cpu")

    @property
    def is_cuda(self):
        return False

    def cpu(self):
        return self

    def __getitem__(self, index):
        return self.tolist()[index]


class UntypedStorage(_CpuStorage):
    """The bytes behind a tensor and its views: ``torch.UntypedStorage(n)``
    makes ``n`` zero bytes; ``tensor.untyped_storage()`` gives a tensor's
    (a new object each call, with the same ``data_ptr()``)."""

    def __init__(self, *args, device=None):
        if device is not None and torch.device(device).type != "cpu":
            torch.empty(0, device=device)
        if not args:
            data = torch.zeros(0, dtype=torch.uint8)
        elif len(args) == 1 and isinstance(args[0], int):
            data = torch.zeros(args[0], dtype=torch.uint8)
        elif len(args) == 1:
            data = torch.tensor(list(args[0]), dtype=torch.uint8)
        else:
            raise TypeError(f"UntypedStorage(): expected a size or a sequence of bytes, got {len(args)} arguments")
        self._tensor = data

    @classmethod
    def _of(cls, tensor):
        storage = cls.__new__(cls)
        storage._tensor = tensor
        return storage

    def _whole(self):
        """A 1-d tensor over every element of the storage."""
        t = self._tensor
        numel = torch._C._storage_info(t)[1]
        return torch._C._storage_view(t, 0, [numel], [1])

    def nbytes(self):
        t = self._tensor
        return torch._C._storage_info(t)[1] * t.element_size()

    def size(self):
        return self.nbytes()

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        t = self._tensor
        if torch._C._storage_info(t)[1] == 0:
            return 0
        return t.data_ptr() - t.storage_offset() * t.element_size()

    def tolist(self):
        import _fxvm_numpy

        return list(_fxvm_numpy.tensor_bytes(self._whole()))

    def is_shared(self):
        return False

    def share_memory_(self):
        return self

    def __repr__(self):
        lines = "".join(f" {b}\n" for b in self.tolist())
        return f"{lines}[torch.storage.UntypedStorage(device=cpu) of size {self.nbytes()}]"


class TypedStorage(_CpuStorage):
    """``tensor.storage()``: a tensor's storage seen in its dtype (PyTorch
    deprecates it in favour of ``untyped_storage()``)."""

    is_sparse = False

    def __init__(self, tensor):
        self._tensor = tensor
        self.dtype = tensor.dtype

    def _untyped_storage(self):
        return UntypedStorage._of(self._tensor)

    def untyped(self):
        return self._untyped_storage()

    def size(self):
        return torch._C._storage_info(self._tensor)[1]

    def __len__(self):
        return self.size()

    def nbytes(self):
        return self._untyped_storage().nbytes()

    def element_size(self):
        return self._tensor.element_size()

    def data_ptr(self):
        return self._untyped_storage().data_ptr()

    def tolist(self):
        return self._untyped_storage()._whole().tolist()

    def __repr__(self):
        lines = "".join(f" {v}\n" for v in self.tolist())
        return f"{lines}[torch.storage.TypedStorage(dtype={self.dtype}, device=cpu) of size {self.size()}]"


def _untyped_of(tensor):
    return UntypedStorage._of(tensor)


def _typed_of(tensor):
    import warnings

    warnings.warn(
        "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. "
        "This should only matter to you if you are using storages directly.  To access UntypedStorage directly, "
        "use tensor.untyped_storage() instead of tensor.storage()",
        UserWarning,
        stacklevel=3,
    )
    return TypedStorage(tensor)


class _LegacyStorage:
    dtype = None

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(f"fxvm has no standalone storages; use a tensor of dtype {self.dtype}")


class _PickledStorage:
    """A tensor's whole storage inside a pickle: it reduces, as PyTorch's
    storages do, to ``_load_from_bytes`` over the storage saved by ``torch.save``."""

    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def __reduce__(self):
        data = io.BytesIO()
        torch.save(self, data)
        return (_load_from_bytes, (data.getvalue(),))


def _load_from_bytes(b):
    return torch.load(io.BytesIO(b), weights_only=False)


def _storage_class(name, dtype):
    cls = type(name, (_LegacyStorage,), {"dtype": dtype, "__module__": "torch"})
    cls.__qualname__ = name
    return cls


FloatStorage = _storage_class("FloatStorage", torch.float32)
DoubleStorage = _storage_class("DoubleStorage", torch.float64)
HalfStorage = _storage_class("HalfStorage", torch.float16)
BFloat16Storage = _storage_class("BFloat16Storage", torch.bfloat16)
LongStorage = _storage_class("LongStorage", torch.int64)
ShortStorage = _storage_class("ShortStorage", torch.int16)
CharStorage = _storage_class("CharStorage", torch.int8)
ByteStorage = _storage_class("ByteStorage", torch.uint8)
IntStorage = _storage_class("IntStorage", torch.int32)
BoolStorage = _storage_class("BoolStorage", torch.bool)
