"""Imported when an fxvm interpreter starts: where RustPython's standard
library differs from CPython's C implementation in what programs see, make
it behave as CPython does (programs print these, goldens compare them, and
libraries such as transformers and filelock rely on them)."""

import _io
import collections
import io
import sys


def _view_repr(name):
    def __repr__(self):
        return f"{name}({list(self)!r})"

    return __repr__


# CPython's OrderedDict views print as odict_keys([...]); the pure-Python
# ones print their mapping (`_OrderedDictKeysView(OrderedDict({...}))`).
for _view, _name in (
    ("_OrderedDictKeysView", "odict_keys"),
    ("_OrderedDictValuesView", "odict_values"),
    ("_OrderedDictItemsView", "odict_items"),
):
    if hasattr(collections, _view):
        getattr(collections, _view).__repr__ = _view_repr(_name)
del _view, _name


# CPython's OrderedDict views read the dict's own storage; the pure-Python
# ones read `mapping[key]`, which recurses into a subclass whose
# `__getitem__` builds a dict from `self.items()` (transformers' ModelOutput).
def _stored(mapping, key):
    return dict.__getitem__(mapping, key)


def _items_iter(self):
    mapping = self._mapping
    for key in mapping:
        yield (key, _stored(mapping, key))


def _items_reversed(self):
    mapping = self._mapping
    for key in reversed(mapping):
        yield (key, _stored(mapping, key))


def _items_contains(self, item):
    key, value = item
    try:
        stored = _stored(self._mapping, key)
    except KeyError:
        return False
    return stored is value or stored == value


def _values_iter(self):
    mapping = self._mapping
    for key in mapping:
        yield _stored(mapping, key)


def _values_reversed(self):
    mapping = self._mapping
    for key in reversed(mapping):
        yield _stored(mapping, key)


def _values_contains(self, value):
    return any(v is value or v == value for v in _values_iter(self))


if hasattr(collections, "_OrderedDictItemsView"):
    collections._OrderedDictItemsView.__iter__ = _items_iter
    collections._OrderedDictItemsView.__reversed__ = _items_reversed
    collections._OrderedDictItemsView.__contains__ = _items_contains
    collections._OrderedDictValuesView.__iter__ = _values_iter
    collections._OrderedDictValuesView.__reversed__ = _values_reversed
    collections._OrderedDictValuesView.__contains__ = _values_contains


# Audit hooks (PEP 578). RustPython raises no audit events of its own, so
# hooks see the events programs raise with `sys.audit` (and this module's
# "sys.addaudithook"); filelock registers one at import to watch for forks.
if not hasattr(sys, "addaudithook"):
    _audit_hooks = []

    def addaudithook(hook):
        """Adds ``hook`` to the audit hooks, unless an existing hook refuses it
        by raising a RuntimeError for the "sys.addaudithook" event."""
        try:
            audit("sys.addaudithook")
        except RuntimeError:
            return
        _audit_hooks.append(hook)

    def audit(event, *args):
        """Calls each audit hook with ``event`` and ``args``, in the order they were added."""
        if not isinstance(event, str):
            raise TypeError(f"expected str for argument 'event', not {type(event).__name__}")
        for hook in tuple(_audit_hooks):
            hook(event, args)

    sys.addaudithook = addaudithook
    sys.audit = audit


class StringIO(_io.StringIO):
    """``io.StringIO`` reading by characters: RustPython's counts
    ``read(size)``/``readline(size)`` in UTF-8 bytes, returning fewer
    characters than asked and failing ("Error Retrieving Value") when the
    count ends inside a character (email's parser reads 8192 at a time,
    and every package's metadata goes through it). ``tell``/``seek``
    positions stay the native ones: opaque, as Python documents them."""

    def read(self, size=-1):
        if size is None or size < 0:
            return super().read()
        parts = []
        want = size
        while want > 0:
            chunk = self._read_chars(want)
            if not chunk:
                break
            parts.append(chunk)
            want -= len(chunk)
        return "".join(parts)

    def _read_chars(self, n):
        """At most ``n`` characters, at least one unless at the end."""
        start = super().tell()
        # `n` bytes hold at most `n` characters; a count that ends inside a
        # character is widened by up to three bytes.
        for extra in range(4):
            try:
                chunk = super().read(n + extra)
                break
            except ValueError:
                super().seek(start)
        else:
            raise ValueError("invalid UTF-8 in StringIO buffer")
        if len(chunk) > n:
            chunk = chunk[:n]
            super().seek(start + len(chunk.encode("utf-8", "surrogatepass")))
        return chunk

    def readline(self, size=-1):
        if size is None or size < 0:
            return super().readline()
        start = super().tell()
        line = super().readline()
        if len(line) > size:
            line = line[:size]
            super().seek(start + len(line.encode("utf-8", "surrogatepass")))
        return line


StringIO.__module__ = "_io"
StringIO.__qualname__ = StringIO.__name__ = "StringIO"
io.StringIO = _io.StringIO = StringIO
