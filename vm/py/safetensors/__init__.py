"""``safetensors`` for fxvm: the file format read and written natively (on
the ``safetensors`` Rust crate; nothing in a file can run code), with the
Python API of safetensors 0.8 for ``framework="pt"``. Files are
memory-mapped and their tensors read in place (paged in as they are
touched) until written."""

import os as _os

import _fxvm_metadata

import torch as _torch  # `torch` would be shadowed by the submodule safetensors.torch

__all__ = ["PySafeSlice", "SafetensorError", "deserialize", "safe_open", "serialize"]

# The API this module follows.
__version__ = _fxvm_metadata.VERSIONS["safetensors"]


class SafetensorError(Exception):
    """A file that is not valid safetensors, or a tensor it does not hold."""


def _load_file(filename):
    try:
        with open(filename, "rb"):
            pass
    except FileNotFoundError:
        raise FileNotFoundError(f"No such file or directory: {filename}") from None
    try:
        return _torch._C._safetensors_load_file(_os.fspath(filename))
    except ValueError as e:
        raise SafetensorError(f"Error while deserializing: {e}") from None


def deserialize(data):
    """``[(name, tensor)]`` (sorted by name) and the ``__metadata__`` of a file's bytes."""
    try:
        return _torch._C._safetensors_load(bytes(data))
    except ValueError as e:
        raise SafetensorError(f"Error while deserializing: {e}") from None


def serialize(tensors, metadata=None):
    """The bytes of a safetensors file holding ``tensors`` (name → tensor)."""
    names = list(tensors)
    return _torch._C._safetensors_save(names, [tensors[n] for n in names], metadata)


# The safetensors dtype names, by torch dtype.
_DTYPE_NAMES = {
    _torch.bool: "BOOL",
    _torch.uint8: "U8",
    _torch.int8: "I8",
    _torch.int16: "I16",
    _torch.int32: "I32",
    _torch.int64: "I64",
    _torch.float16: "F16",
    _torch.bfloat16: "BF16",
    _torch.float32: "F32",
    _torch.float64: "F64",
}


class PySafeSlice:
    """One tensor of an open file, read when indexed (``f.get_slice(name)[1:, ::2]``)."""

    def __init__(self, tensor):
        self._tensor = tensor

    def get_shape(self):
        return list(self._tensor.shape)

    def get_dtype(self):
        return _DTYPE_NAMES[self._tensor.dtype]

    def __getitem__(self, index):
        return self._tensor[index].contiguous()


PySafeSlice.__module__ = "builtins"


class safe_open:
    """``with safe_open(path, framework="pt") as f:`` — ``keys()``,
    ``get_tensor(name)``, ``get_slice(name)``, ``metadata()``. Both
    backends (``mmap``, ``pread``) read the memory-mapped file."""

    def __init__(self, filename, framework, device="cpu", backend="mmap"):
        if backend not in ("mmap", "pread"):
            raise SafetensorError(f'backend "{backend}" is invalid (expected one of: "mmap", "pread")')
        if framework not in ("pt", "torch", "pytorch"):
            raise SafetensorError(f"framework {framework} is not supported by fxvm (only 'pt')")
        if str(device) != "cpu":
            _torch.zeros(0, device=device)  # PyTorch's error for a device fxvm has not
        tensors, self._metadata = _load_file(filename)
        self._tensors = dict(tensors)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def keys(self):
        return sorted(self._tensors)

    def offset_keys(self):
        return list(self._tensors)

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        try:
            return self._tensors[name]
        except KeyError:
            raise SafetensorError(f"File does not contain tensor {name}") from None

    def get_tensors(self):
        return {name: self._tensors[name] for name in self.keys()}

    def get_slice(self, name):
        return PySafeSlice(self.get_tensor(name))
