"""The legacy typed-storage classes (``torch.FloatStorage`` …). fxvm keeps
storages inside tensors; these classes exist because PyTorch's checkpoints
name a storage's dtype by them."""

import io

import torch

__all__ = [
    "FloatStorage", "DoubleStorage", "HalfStorage", "BFloat16Storage", "LongStorage", "IntStorage", "ShortStorage",
    "CharStorage", "ByteStorage", "BoolStorage",
]


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
