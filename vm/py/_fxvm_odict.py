"""``collections.OrderedDict`` over the interpreter's own dict, as CPython's
C implementation (``_collections.OrderedDict``) behaves.

RustPython falls back to ``collections``' pure-Python OrderedDict, which
keeps a linked list beside the dict and runs Python code for every store,
deletion and step of an iteration (building one of 400 items: 2.1 ms
against CPython's 0.05 ms; transformers builds hundreds at import, and a
state dict is one). A dict already keeps insertion order, re-storing a key
keeps its place and deleting then storing moves it to the end, as an
OrderedDict's order does; so only what differs is written here — moving a
key, popping from either end, order-sensitive equality, the ``odict_*``
views and the repr — and stores, lookups and iteration stay native.
``_fxvm_stdlib`` installs it as ``_collections.OrderedDict``, where
``collections`` looks first."""

from _collections_abc import ItemsView, KeysView, ValuesView
from reprlib import recursive_repr

_dict_setitem = dict.__setitem__
_missing = object()


def _view(base, name, native):
    """A view type printing as CPython's ``odict_*`` views whose iteration,
    size and membership are the dict's native view's (a subclass's
    ``__getitem__`` is not consulted, as in CPython)."""

    def __iter__(self):
        return iter(native(self._mapping))

    def __reversed__(self):
        return reversed(native(self._mapping))

    def __len__(self):
        return dict.__len__(self._mapping)

    def __contains__(self, item):
        return item in native(self._mapping)

    def __repr__(self):
        return f"{name}({list(self)!r})"

    methods = dict(
        __iter__=__iter__,
        __reversed__=__reversed__,
        __len__=__len__,
        __contains__=__contains__,
        __repr__=__repr__,
        __module__="builtins",
        __slots__=(),
    )
    return type(name, (base,), methods)


odict_keys = _view(KeysView, "odict_keys", dict.keys)
odict_values = _view(ValuesView, "odict_values", dict.values)
odict_items = _view(ItemsView, "odict_items", dict.items)


def _update(od, args, kwds):
    """MutableMapping.update, as CPython's OrderedDict runs it: stores go
    through ``od[key] =`` when a subclass overrides ``__setitem__``
    (transformers' ModelOutput) and a mapping other than a plain dict is
    read through its ``keys()`` and ``[]``; otherwise the dict's own update,
    which does the same natively."""
    if len(args) > 1:
        raise TypeError(f"expected at most 1 arguments, got {len(args)}")
    other = args[0] if args else ()
    if type(od).__setitem__ is _dict_setitem and (type(other) in (dict, OrderedDict) or not hasattr(other, "keys")):
        dict.update(od, other, **kwds)
        return
    if hasattr(other, "keys"):
        for key in other.keys():
            od[key] = other[key]
    else:
        for key, value in other:
            od[key] = value
    for key, value in kwds.items():
        od[key] = value


class OrderedDict(dict):
    """Dictionary that remembers insertion order."""

    def __init__(self, *args, **kwds):
        _update(self, args, kwds)

    def update(self, *args, **kwds):
        """D.update([E, ]**F): from a mapping E (its ``keys()``), pairs E, then F."""
        _update(self, args, kwds)

    def move_to_end(self, key, last=True):
        """Move an existing key to the end (or the beginning if last is false)."""
        value = dict.pop(self, key)
        if last:
            _dict_setitem(self, key, value)
            return
        rest = list(dict.items(self))
        dict.clear(self)
        _dict_setitem(self, key, value)
        dict.update(self, rest)

    def popitem(self, last=True):
        """Remove and return a (key, value) pair from the dictionary, in LIFO
        order if last is true or FIFO order if false."""
        if not dict.__len__(self):
            raise KeyError("dictionary is empty")
        key = next(reversed(dict.keys(self)) if last else iter(dict.keys(self)))
        return key, dict.pop(self, key)

    def setdefault(self, key, default=None):
        """Insert key with a value of default if key is not in the dictionary;
        a subclass's ``__getitem__``/``__setitem__`` are the ones used."""
        if type(self) is OrderedDict:
            return dict.setdefault(self, key, default)
        try:
            return self[key]
        except KeyError:
            self[key] = default
            return default

    def pop(self, key, default=_missing):
        """Remove the key and return its value, else default (KeyError without one)."""
        if default is _missing:
            return dict.pop(self, key)
        return dict.pop(self, key, default)

    def keys(self):
        return odict_keys(self)

    def values(self):
        return odict_values(self)

    def items(self):
        return odict_items(self)

    def __reversed__(self):
        return reversed(dict.keys(self))

    def __eq__(self, other):
        if isinstance(other, OrderedDict):
            return dict.__eq__(self, other) and all(a == b for a, b in zip(dict.keys(self), dict.keys(other)))
        return dict.__eq__(self, other)

    def __ne__(self, other):
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    @recursive_repr()
    def __repr__(self):
        if not dict.__len__(self):
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}({dict(dict.items(self))!r})"

    def __reduce__(self):
        state = self.__getstate__()
        if isinstance(state, dict):
            state = dict(state) or None
        return type(self), (), state, None, iter(dict.items(self))

    def copy(self):
        """A shallow copy of the OrderedDict, of the same class."""
        return type(self)(self)

    def __or__(self, other):
        return _union(type(self), self, other) if isinstance(other, dict) else NotImplemented

    def __ror__(self, other):
        return _union(type(self), other, self) if isinstance(other, dict) else NotImplemented

    def __ior__(self, other):
        self.update(other)
        return self


def _union(cls, first, second):
    """``first | second`` as an OrderedDict of class ``cls``."""
    new = cls(first)
    new.update(second)
    return new


OrderedDict.__module__ = "collections"
