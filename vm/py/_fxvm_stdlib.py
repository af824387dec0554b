"""Imported when an fxvm interpreter starts: where RustPython's pure-Python
standard library prints differently from CPython's C implementation, make it
print as CPython does (programs print these, and goldens compare them)."""

import collections


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
