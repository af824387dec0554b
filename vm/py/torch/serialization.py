"""``torch.save`` / ``torch.load``: objects (tensors, modules, state dicts)
pickled to a file. The format is a plain pickle of fxvm tensors, not
PyTorch's zip archive: files round-trip within fxvm."""

import collections
import copyreg
import io
import os
import pickle

import torch

__all__ = ["save", "load"]


def _rebuild_tensor(data, dtype, shape, requires_grad):
    t = torch.tensor(data, dtype=getattr(torch, dtype)).reshape(shape)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    dtype = str(t.dtype).split(".")[-1]
    return (_rebuild_tensor, (t.tolist(), dtype, tuple(t.shape), t.requires_grad))


def _reduce_dtype(d):
    return (getattr, (torch, str(d).split(".")[-1]))


copyreg.pickle(torch.Tensor, _reduce_tensor)
copyreg.pickle(torch.dtype, _reduce_dtype)

# What `weights_only=True` (the default) may rebuild: tensors and containers.
_SAFE = {
    ("torch.serialization", "_rebuild_tensor"),
    ("torch.nn.parameter", "Parameter"),
    ("collections", "OrderedDict"),
    ("builtins", "getattr"),
    ("torch", "torch"),
}


class _WeightsUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _SAFE:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(
            f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an allowed global by default. "
            "Use `weights_only=False` only if you trust the file."
        )


def _open(f, mode):
    if isinstance(f, (str, bytes, os.PathLike)):
        return open(f, mode), True
    return f, False


def save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Writes ``obj`` to the path or binary file ``f``."""
    handle, owned = _open(f, "wb")
    try:
        pickle_module.dump(obj, handle, protocol=pickle_protocol)
    finally:
        if owned:
            handle.close()


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args):
    """Reads an object written by ``save``; ``weights_only`` (the default)
    allows only tensors and plain containers."""
    handle, owned = _open(f, "rb")
    try:
        if weights_only:
            return _WeightsUnpickler(handle).load()
        return (pickle_module or pickle).load(handle)
    finally:
        if owned:
            handle.close()
