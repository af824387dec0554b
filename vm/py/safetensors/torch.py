"""``safetensors.torch``: dicts of tensors to and from safetensors bytes and files."""

import collections

import torch
from torch._utils import _write_atomically

from safetensors import SafetensorError, deserialize, safe_open, serialize  # noqa: F401 (the package's torch module has SafetensorError)

__all__ = [
    "load",
    "load_file",
    "load_model",
    "safe_open",
    "save",
    "save_file",
    "save_model",
    "storage_ptr",
    "storage_size",
]


def storage_ptr(tensor):
    """The address of the storage under ``tensor`` (0 for an empty one)."""
    return tensor.untyped_storage().data_ptr()


def storage_size(tensor):
    """The bytes of the storage under ``tensor``."""
    return tensor.untyped_storage().nbytes()


def _end_ptr(tensor):
    """The address one past ``tensor``'s last element."""
    if not tensor.nelement():
        return tensor.data_ptr()
    return tensor.view(-1)[-1].data_ptr() + tensor.element_size()


def _is_complete(tensor):
    """Whether ``tensor`` covers its whole storage, densely from its start."""
    return tensor.data_ptr() == storage_ptr(tensor) and tensor.nelement() * tensor.element_size() == storage_size(
        tensor
    )


def _find_shared_tensors(state_dict):
    """Sets of names whose tensors overlap in memory (every name appears in
    exactly one set; names sharing a storage without overlapping are apart)."""
    by_storage = {}
    for name, tensor in state_dict.items():
        ptr, size = storage_ptr(tensor), storage_size(tensor)
        if ptr != 0 and size != 0:
            by_storage.setdefault((str(tensor.device), ptr, size), set()).add(name)
    groups = []
    for names in by_storage.values():
        if len(names) < 2:
            groups.append(names)
            continue
        areas = sorted((state_dict[n].data_ptr(), _end_ptr(state_dict[n]), n) for n in names)
        stop = None
        for start, end, name in areas:
            if stop is None or start >= stop:
                groups.append({name})
            else:
                groups[-1].add(name)
            stop = end
    return groups


def _remove_duplicate_names(state_dict, *, preferred_names=None, discard_names=None):
    """For each group of names sharing memory, the name to keep (one that
    covers its whole storage: a preferred name first, then one not
    discarded, then the first in order) and the names to drop."""
    preferred_names = set(preferred_names or ())
    discard_names = set(discard_names or ())
    removals = collections.defaultdict(list)
    for shared in _find_shared_tensors(state_dict):
        complete = {name for name in shared if _is_complete(state_dict[name])}
        if not complete:
            raise RuntimeError(
                "Error while trying to find names to remove to save state dict, but found no suitable name to keep"
                f" for saving amongst: {shared}. None is covering the entire storage.Refusing to save/load the model"
                " since you could be storing much more memory than needed. Please refer to"
                " https://huggingface.co/docs/safetensors/torch_shared_tensors for more information. Or open an"
                " issue."
            )
        candidates = (preferred_names & complete) or (complete - discard_names) or complete
        keep = min(candidates)
        for name in sorted(shared):
            if name != keep:
                removals[keep].append(name)
    return removals


def save_model(model, filename, metadata=None, force_contiguous=True):
    """Saves ``model``'s state dict, keeping one name of each group of tied
    tensors (the dropped names are recorded in the metadata)."""
    state_dict = model.state_dict()
    for kept, dropped in _remove_duplicate_names(state_dict).items():
        for name in dropped:
            metadata = {} if metadata is None else metadata
            metadata.setdefault(name, kept)
            del state_dict[name]
    if force_contiguous:
        state_dict = {k: v.contiguous() for k, v in state_dict.items()}
    try:
        save_file(state_dict, filename, metadata=metadata)
    except ValueError as e:
        raise ValueError(
            f"{e} Or use save_model(..., force_contiguous=True), read the docs for potential caveats."
        ) from None


def load_model(model, filename, strict=True, device="cpu", *, backend="mmap"):
    """Loads a file written by ``save_model`` into ``model`` (tied tensors
    that were dropped are not missing); returns (missing, unexpected)."""
    state_dict = load_file(filename, device=device, backend=backend)
    removals = _remove_duplicate_names(model.state_dict(), preferred_names=state_dict.keys())
    missing, unexpected = model.load_state_dict(state_dict, strict=False)
    missing = set(missing)
    for dropped in removals.values():
        for name in dropped:
            if name in missing:
                missing.remove(name)
            else:
                unexpected.append(name)
    if strict and (missing or unexpected):
        error = f"Error(s) in loading state_dict for {model.__class__.__name__}:"
        if missing:
            error += "\n    Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(missing))
        if unexpected:
            error += "\n    Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in sorted(unexpected))
        raise RuntimeError(error)
    return missing, unexpected


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
