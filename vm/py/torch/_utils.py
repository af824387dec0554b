"""The functions PyTorch's checkpoints name to rebuild tensors and
parameters. ``torch.load`` runs them natively; they are here so that
``torch.save`` names them as PyTorch does, and for direct calls, where
``storage`` is a tensor standing for its whole storage."""

import collections
import os

import torch
from torch import _C


def _rebuild_tensor(storage, storage_offset, size, stride):
    return _C._storage_view(storage, storage_offset, list(size), list(stride))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _reduce_tensor(t):
    """``Tensor.__reduce_ex__`` as PyTorch's: ``_rebuild_tensor_v2`` over the
    tensor's storage, which pickles as the bytes ``torch.save`` writes for it;
    a subclass or a tensor with attributes goes through
    ``_rebuild_from_type_v2``, so a pickle loads in PyTorch and back."""
    from torch._tensor import _rebuild_from_type_v2
    from torch.storage import _PickledStorage

    args = (
        _PickledStorage(t),
        t.storage_offset(),
        tuple(t.size()),
        t.stride(),
        t.requires_grad,
        collections.OrderedDict(),
    )
    state = dict(t.__dict__)
    if type(t) is torch.Tensor and not state:
        return (_rebuild_tensor_v2, args)
    return (_rebuild_from_type_v2, (_rebuild_tensor_v2, type(t), args, state))


def _rebuild_parameter(data, requires_grad, backward_hooks):
    return torch.nn.Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    param = torch.nn.Parameter(data, requires_grad)
    for name, value in (state or {}).items():
        setattr(param, name, value)
    return param


def _write_atomically(path, data):
    """Writes ``data`` to ``path`` through a temporary file renamed into
    place, so an interrupted write never leaves a half-written file."""
    path = os.fspath(path)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
