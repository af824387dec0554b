"""ndarray's operators and reduction methods, bound to the ufuncs and
reductions (one body each: ``a + b`` is ``np.add(a, b)``, ``a.sum()`` is
``np.sum(a)``). A ``torch.Tensor`` operand defers to the tensor's own
operator, as numpy defers to tensors (their ``__array_priority__``)."""

import torch

from numpy import _reductions, _ufuncs
from numpy._array import ndarray

_BINARY = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "truediv": "true_divide",
    "floordiv": "floor_divide",
    "mod": "remainder",
    "pow": "power",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "lshift": "left_shift",
    "rshift": "right_shift",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal"}


def _binary(f, reflected=False):
    def method(self, other):
        if isinstance(other, torch.Tensor):
            return NotImplemented
        return f(other, self) if reflected else f(self, other)

    return method


def _inplace(f):
    def method(self, other):
        if isinstance(other, torch.Tensor):
            other = other.numpy()
        return f(self, other, out=self)

    return method


def _compare(f):
    def method(self, other):
        if isinstance(other, torch.Tensor):
            return NotImplemented
        try:
            return f(self, other)
        except TypeError, NotImplementedError:
            return NotImplemented

    return method


def _matmul(self, other):
    if isinstance(other, torch.Tensor):
        return NotImplemented
    return _ufuncs.matmul(self, other)


def _rmatmul(self, other):
    return _ufuncs.matmul(other, self)


def _install():
    for short, name in _BINARY.items():
        f = getattr(_ufuncs, name)
        setattr(ndarray, f"__{short}__", _binary(f))
        setattr(ndarray, f"__r{short}__", _binary(f, True))
        setattr(ndarray, f"__i{short}__", _inplace(f))
    for short, name in _COMPARE.items():
        setattr(ndarray, f"__{short}__", _compare(getattr(_ufuncs, name)))
    ndarray.__matmul__ = _matmul
    ndarray.__rmatmul__ = _rmatmul
    ndarray.__neg__ = lambda self: _ufuncs.negative(self)
    ndarray.__pos__ = lambda self: _ufuncs.positive(self)
    ndarray.__abs__ = lambda self: _ufuncs.absolute(self)
    ndarray.__invert__ = lambda self: _ufuncs.invert(self)
    ndarray.__divmod__ = lambda self, other: _ufuncs.divmod(self, other)
    ndarray.__rdivmod__ = lambda self, other: _ufuncs.divmod(other, self)
    ndarray.__round__ = lambda self, ndigits=None: self.round(ndigits or 0)
    for name in (
        "sum",
        "prod",
        "mean",
        "std",
        "var",
        "max",
        "min",
        "argmax",
        "argmin",
        "all",
        "any",
        "cumsum",
        "cumprod",
    ):
        setattr(ndarray, name, getattr(_reductions, name))


_install()
