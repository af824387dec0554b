"""Imported when an fxvm interpreter starts: where RustPython's standard
library differs from CPython's C implementation in what programs see, make
it behave as CPython does (programs print these, goldens compare them, and
libraries such as transformers and filelock rely on them)."""

import collections
import sys


def _view_repr(name):
    def __repr__(self):
        return f"{name}({list(self)!r})"

    return __repr__


# CPython's OrderedDict views print as odict_keys([...]); the pure-Python
# ones print their mapping (`_OrderedDictKeysView(OrderedDict({...}))`).
for _view, _name in (("_OrderedDictKeysView", "odict_keys"), ("_OrderedDictValuesView", "odict_values"), ("_OrderedDictItemsView", "odict_items")):
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
