"""``safetensors.torch``: dicts of tensors to and from safetensors bytes and files."""

import torch
from torch._utils import _write_atomically

from safetensors import SafetensorError, deserialize, safe_open, serialize

__all__ = ["load", "load_file", "safe_open", "save", "save_file"]


def _check(tensors):
    """safetensors' own rules: tensors only, dense, and no two sharing memory."""
    shared = {}
    for k, v in tensors.items():
        if not isinstance(v, torch.Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received {type(v)}")
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It either means you are trying "
                "to save tensors which are reference of each other in which case it's recommended to save only the full "
                "tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to pack it before saving."
            )
        if v.numel():
            shared.setdefault(torch._C._storage_info(v)[0], set()).add(k)
    failing = [names for names in shared.values() if len(names) > 1]
    if failing:
        raise RuntimeError(
            f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {failing}.
            A potential way to correctly save your model is to use `save_model`.
            More information at https://huggingface.co/docs/safetensors/torch_shared_tensors
            """
        )


def save(tensors, metadata=None):
    """The bytes of a safetensors file holding ``tensors``."""
    _check(tensors)
    return serialize(tensors, metadata)


def save_file(tensors, filename, metadata=None):
    """Writes ``tensors`` to ``filename``: to a temporary file first, renamed
    into place, so an interrupted save never leaves a half-written file."""
    _write_atomically(filename, save(tensors, metadata))


def load(data):
    """The tensors of a safetensors file's bytes, by name."""
    tensors, _ = deserialize(data)
    return dict(tensors)


def load_file(filename, device="cpu", *, backend="mmap"):
    """The tensors of the safetensors file ``filename``, by name."""
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.offset_keys()}
