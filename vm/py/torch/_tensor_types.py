"""The legacy tensor types, ``torch.FloatTensor`` … ``torch.BoolTensor``
and their ``torch.cuda`` twins: classes (of metaclass ``torch.tensortype``)
whose instances are the tensors of their dtype and device, and whose call
is PyTorch's legacy constructor (``torch.LongTensor([1, 2])``,
``torch.FloatTensor(2, 3)``). Code uses them in annotations
(``input_ids: torch.LongTensor``), ``isinstance`` checks and ``x.type(...)``."""

import torch
from torch import _C

__all__ = ["tensortype"]


class tensortype(type):
    """The metaclass of the legacy tensor types."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, torch.Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device

    def __call__(cls, *args, **kwargs):
        if cls._device != "cpu":
            raise TypeError(
                f"type {cls.__module__}.{cls.__name__} not available. Torch not compiled with CUDA enabled."
            )
        return _C._legacy_new(cls.dtype, *args, **kwargs)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


tensortype.__module__ = "torch"

# (class name, dtype) as PyTorch names them.
_TYPES = (
    ("FloatTensor", torch.float32),
    ("DoubleTensor", torch.float64),
    ("HalfTensor", torch.float16),
    ("BFloat16Tensor", torch.bfloat16),
    ("ByteTensor", torch.uint8),
    ("CharTensor", torch.int8),
    ("ShortTensor", torch.int16),
    ("IntTensor", torch.int32),
    ("LongTensor", torch.int64),
    ("BoolTensor", torch.bool),
)


def _make(module, device):
    """The ten legacy types of ``device``, by name."""
    return {
        name: tensortype(
            name,
            (),
            {"dtype": dtype, "_device": device, "is_cuda": device == "cuda", "is_sparse": False, "__module__": module},
        )
        for name, dtype in _TYPES
    }


cpu_types = _make("torch", "cpu")
cuda_types = _make("torch.cuda", "cuda")
