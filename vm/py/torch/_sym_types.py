"""``torch.SymInt``, ``torch.SymFloat``, ``torch.SymBool``: sizes and
values that may be symbolic, each wrapping a ``SymNode``
(``torch.fx.experimental.sym_node``, which installs their arithmetic and
comparison methods from its tables), and the ``torch.sym_*`` functions that
work on them and on plain Python numbers alike."""

import builtins
import math

__all__ = [
    "SymBool",
    "SymFloat",
    "SymInt",
    "sym_float",
    "sym_int",
    "sym_ite",
    "sym_max",
    "sym_min",
    "sym_not",
    "sym_sqrt",
]


class _Sym:
    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return self.node._str()

    __str__ = __repr__


class SymInt(_Sym):
    """An int that may be symbolic (`s0 + 1`); forcing it to a Python int
    (``int()``, indexing) answers from its example value and records a guard."""

    def __int__(self):
        return self.node.guard_int("", 0)

    __index__ = __int__

    def __bool__(self):
        return bool(self != 0)

    def __hash__(self):
        raise TypeError("unhashable type: non-nested SymInt")

    def __round__(self, ndigits=None):
        return self

    def __float__(self):
        return float(int(self))


class SymFloat(_Sym):
    """A float that may be symbolic (`IntTrueDiv(s0, 2)`)."""

    def __float__(self):
        return self.node.guard_float("", 0)

    def __bool__(self):
        return bool(self != 0.0)

    def __hash__(self):
        raise TypeError("unhashable type: non-nested SymFloat")


class SymBool(_Sym):
    """A bool that may be symbolic (`s0 < s1`); ``bool()`` answers from the
    example values and records a guard."""

    def __bool__(self):
        return self.node.guard_bool("", 0)

    def __hash__(self):
        raise TypeError("unhashable type: SymBool")


def _node(x):
    return getattr(x, "node", None)


def sym_not(a):
    """``not a``, symbolic when ``a`` is."""
    return a.__sym_not__() if isinstance(a, SymBool) else not a


def sym_float(a):
    """``float(a)`` without forcing a symbolic int."""
    if isinstance(a, (SymInt, SymFloat)):
        return a.__sym_float__()
    return builtins.float(a)


def sym_int(a):
    """``int(a)`` (truncating) without forcing a symbolic float."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, SymFloat):
        return math.trunc(a)
    return builtins.int(a)


def _extremum(a, b, method, plain):
    if isinstance(a, (SymInt, SymFloat)):
        return getattr(a, method)(b)
    if isinstance(b, (SymInt, SymFloat)):
        return getattr(b, method)(a)
    result = plain(a, b)
    return builtins.float(result) if isinstance(a, float) or isinstance(b, float) else result


def sym_max(a, b):
    """``max(a, b)``, symbolic when either is (a float when either is one)."""
    return _extremum(a, b, "__sym_max__", builtins.max)


def sym_min(a, b):
    """``min(a, b)``, symbolic when either is (a float when either is one)."""
    return _extremum(a, b, "__sym_min__", builtins.min)


def sym_ite(b, t, f):
    """``t if b else f``; a symbolic condition is decided from its example value."""
    return t if b else f


def sym_sqrt(a):
    """``math.sqrt(a)`` (a symbolic value is forced to its example)."""
    return math.sqrt(float(a))
