"""``torch.save`` / ``torch.load`` in PyTorch's own file format.

``save`` writes the zip archive every PyTorch since 1.6 writes and reads
(``<name>/data.pkl`` plus one record per storage), so real PyTorch loads
fxvm's files. ``load`` reads that archive, PyTorch's legacy format and bare
pickles through a native loader: under ``weights_only=True`` (the default)
it builds only PyTorch's allow-listed types plus what
``add_safe_globals`` adds, and executes nothing else the file names.
"""

import collections
import contextlib
import io
import os
import pickle

import torch
from torch import _C
from torch.storage import _PickledStorage
from torch._utils import _rebuild_parameter, _rebuild_tensor_v2, _write_atomically

__all__ = [
    "save",
    "load",
    "add_safe_globals",
    "get_safe_globals",
    "clear_safe_globals",
    "safe_globals",
    "DEFAULT_PROTOCOL",
]

DEFAULT_PROTOCOL = 2

_safe_globals = {}


def _global_name(entry):
    if isinstance(entry, tuple):
        obj, name = entry
        return name, obj
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals):
    """Marks classes and functions (or ``(obj, "module.name")`` pairs) as
    safe for ``weights_only`` loading."""
    for entry in safe_globals:
        name, obj = _global_name(entry)
        _safe_globals[name] = entry


def get_safe_globals():
    """The user's allow-list, as given to ``add_safe_globals``."""
    return list(_safe_globals.values())


def clear_safe_globals():
    """Empties the user's allow-list."""
    _safe_globals.clear()


@contextlib.contextmanager
def safe_globals(safe_globals):
    """Allow-lists globals for the ``with`` block only."""
    saved = dict(_safe_globals)
    add_safe_globals(safe_globals)
    try:
        yield
    finally:
        _safe_globals.clear()
        _safe_globals.update(saved)


class _Storage:
    """Stands for one storage in the pickle; written as a persistent id."""

    __slots__ = ("key", "cls", "numel")

    def __init__(self, key, cls, numel):
        self.key, self.cls, self.numel = key, cls, numel


class _Pickler(pickle.Pickler):
    """Pickles tensors as PyTorch does: ``_rebuild_tensor_v2`` over a
    storage record, each storage written once however many views share it."""

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}  # storage id -> (_Storage, a tensor over it)

    def _storage(self, t):
        sid, numel, cls_name = _C._storage_info(t)
        entry = self.storages.get(sid)
        if entry is None:
            entry = (_Storage(str(len(self.storages)), getattr(torch, cls_name), numel), t)
            self.storages[sid] = entry
        return entry[0]

    def persistent_id(self, obj):
        if type(obj) is _PickledStorage:
            obj = self._storage(obj.tensor)
        if type(obj) is _Storage:
            return ("storage", obj.cls, obj.key, "cpu", obj.numel)
        return None

    def reducer_override(self, obj):
        if isinstance(obj, torch.nn.Parameter):
            return (_rebuild_parameter, (obj.detach(), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, torch.Tensor):
            args = (
                self._storage(obj),
                obj.storage_offset(),
                tuple(obj.size()),
                obj.stride(),
                obj.requires_grad,
                collections.OrderedDict(),
            )
            return (_rebuild_tensor_v2, args)
        return NotImplemented


def _archive_name(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        return stem or "archive"
    return "archive"


def save(
    obj,
    f,
    pickle_module=pickle,
    pickle_protocol=DEFAULT_PROTOCOL,
    _use_new_zipfile_serialization=True,
    _disable_byteorder_record=False,
):
    """Writes ``obj`` to the path or binary file ``f`` as PyTorch's zip archive."""
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("fxvm writes only PyTorch's zip format (_use_new_zipfile_serialization=True)")
    data = io.BytesIO()
    pickler = _Pickler(data, pickle_protocol)
    pickler.dump(obj)
    tensors = [t for _, t in pickler.storages.values()]
    archive = _C._write_checkpoint(_archive_name(f), data.getvalue(), tensors)
    if isinstance(f, (str, os.PathLike)):
        _write_atomically(f, archive)
    else:
        f.write(archive)


class _TrustedUnpickler(pickle.Unpickler):
    """Only its ``find_class`` is used: how ``weights_only=False`` resolves globals."""


def _find_class(module, name):
    return _TrustedUnpickler(io.BytesIO()).find_class(module, name)


def _read(f):
    if isinstance(f, (str, bytes, os.PathLike)):
        with open(f, "rb") as handle:
            return handle.read()
    return f.read()


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Reads an object written by ``torch.save`` (fxvm's or PyTorch's).

    ``weights_only`` (the default) builds only tensors, containers and
    PyTorch's other allow-listed types, plus ``add_safe_globals``;
    ``weights_only=False`` unpickles anything and must only be used on
    trusted files. ``map_location`` may name the CPU.
    """
    if weights_only is None:
        weights_only = True
    if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
        if torch.device(map_location).type != "cpu":
            # A CPU-only PyTorch's refusal when it restores the storages.
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. "
                "If you are running on a CPU-only machine, please use torch.load with "
                "map_location=torch.device('cpu') to map your storages to the CPU."
            )
    user = {name: _global_name(entry)[1] for name, entry in _safe_globals.items()}
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        with open(path, "rb") as handle:  # Python's own error for a missing file
            if mmap:
                _check_mappable(handle.read(4), f"{path}, ")
        # Read (or mapped) natively: storages are read in place from the
        # file's bytes until written, with no copy through Python.
        return _C._load_checkpoint_file(path, bool(mmap), bool(weights_only), user, _find_class)
    data = bytes(_read(f))
    if mmap:
        _check_mappable(data[:4], "")
        raise ValueError("f must be a file path in order to use the mmap argument")
    return _C._load_checkpoint(data, bool(weights_only), user, _find_class)


def _check_mappable(magic, name):
    """PyTorch maps only its zip format."""
    if magic != b"PK\x03\x04":
        raise RuntimeError(
            f"mmap can only be used with files saved with `torch.save({name}_use_new_zipfile_serialization=True), "
            "please torch.save your checkpoint with this option in order to use mmap."
        )
