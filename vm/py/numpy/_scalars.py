"""The behaviour of numpy's scalar types (``np.float32(1.5)``,
``type(a.sum())``): each holds one value of its dtype, prints as numpy 2
does (``np.float32(0.1)``), and computes through the ufuncs — so
``np.float32(1) + 1`` is a float32, as in numpy."""

import builtins
import math

from numpy import _dtypes
from numpy._dtypes import generic


def _coerce(info, value):
    """``value`` as a Python value of scalar type ``info`` (C-cast rules)."""
    if info.kind == "b":
        return builtins.bool(value)
    if info.kind == "f":
        v = builtins.float(value)
        if info.itemsize < 8 and not math.isnan(v) and not math.isinf(v):
            import torch

            v = torch.tensor(v, dtype=info.storage).item()
        return v
    if isinstance(value, builtins.float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(
                "cannot convert float NaN to integer"
                if math.isnan(value)
                else "cannot convert float infinity to integer"
            )
        value = builtins.int(value)
    v = builtins.int(value)
    bits = 8 * info.itemsize
    v &= (1 << bits) - 1
    if info.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _make(cls, value):
    """A scalar of ``cls`` over an already-converted Python value."""
    if cls is _dtypes.float64:
        return builtins.float.__new__(cls, value)
    s = object.__new__(cls)
    s._v = value
    return s


def _new(cls, value=0, *args, **kwargs):
    from numpy._array import ndarray
    from numpy._convert import asarray

    info = cls._info
    if isinstance(value, (builtins.list, builtins.tuple, ndarray)) and not (
        isinstance(value, ndarray) and value.ndim == 0
    ):
        return asarray(value, dtype=info.dtype)
    if isinstance(value, builtins.str):
        value = (
            builtins.float(value)
            if info.kind == "f"
            else builtins.int(value)
            if info.kind in "iu"
            else builtins.bool(value)
        )
    elif isinstance(value, (generic, ndarray)):
        value = value.item()
    if info.kind in "iu" and isinstance(value, builtins.int) and not isinstance(value, builtins.bool):
        lo, hi = _dtypes._int_bounds(info)
        if not lo <= value <= hi:
            raise OverflowError(f"Python integer {value} out of bounds for {info.name}")
    return _make(cls, _coerce(info, value))


def _value(self):
    return builtins.float.__float__(self) if isinstance(self, builtins.float) else self._v


_POSITIONAL_BELOW = {16: 1e4, 32: 1e8}


def _float_text(x, bits):
    """A float as Python's repr writes it, with the shortest digits of its own width."""
    if x != x:
        return "nan"
    if x in (math.inf, -math.inf):
        return "inf" if x > 0 else "-inf"
    if bits == 64:
        return builtins.repr(x)
    import _fxvm_numpy

    digits, _, exp = _fxvm_numpy.shortest_digits(x, bits).partition("e")
    exp = builtins.int(exp)
    sign = "-" if digits.startswith("-") else ""
    mantissa = digits.lstrip("-").replace(".", "")
    # numpy writes positional digits between 1e-4 and a width's cutoff.
    if x == 0 or 1e-4 <= builtins.abs(x) < _POSITIONAL_BELOW[bits]:
        if exp >= 0:
            whole = (mantissa + "0" * (exp + 1))[: exp + 1]
            frac = mantissa[exp + 1 :] or "0"
            return f"{sign}{whole}.{frac}"
        return f"{sign}0.{'0' * (-exp - 1)}{mantissa}"
    text = mantissa[0] + ("." + mantissa[1:] if builtins.len(mantissa) > 1 else "")
    return f"{sign}{text}e{'-' if exp < 0 else '+'}{builtins.abs(exp):02d}"


def _str(self):
    v = _value(self)
    info = self._info
    if info.kind == "f":
        return _float_text(v, 8 * info.itemsize)
    return builtins.str(v)


def _repr(self):
    info = self._info
    if info.kind == "b":
        return "np.True_" if self._v else "np.False_"
    text = _str(self)
    if info.kind == "f" and text in ("nan", "inf", "-inf"):
        text = {"nan": "nan", "inf": "inf", "-inf": "-inf"}[text]
    return f"np.{info.name}({text})"


def _array0(self):
    from numpy._convert import _data_array

    return _data_array(self, None)


def _ufunc_method(name, reflected=False):
    def method(self, other):
        from numpy import _ufuncs
        from numpy._array import ndarray

        if not isinstance(other, (generic, ndarray, builtins.bool, builtins.int, builtins.float)):
            import torch

            if isinstance(other, torch.Tensor) or not hasattr(other, "__array__"):
                return NotImplemented
        f = getattr(_ufuncs, name)
        return f(other, self) if reflected else f(self, other)

    method.__name__ = name
    return method


def _unary(name):
    def method(self):
        from numpy import _ufuncs

        return getattr(_ufuncs, name)(self)

    return method


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
    "matmul": "matmul",
}


def _install():
    g = generic
    g._make = classmethod(_make)
    g.__new__ = _new
    g.item = lambda self, *args: _value(self)
    g.tolist = g.item
    g.__repr__ = _repr
    g.__str__ = _str
    g.dtype = property(lambda self: self._info.dtype)
    g.shape = property(lambda self: ())
    g.ndim = property(lambda self: 0)
    g.size = property(lambda self: 1)
    g.itemsize = property(lambda self: self._info.itemsize)
    g.nbytes = property(lambda self: self._info.itemsize)
    g.strides = property(lambda self: ())
    g.T = property(lambda self: self)
    g.real = property(lambda self: self)
    g.imag = property(lambda self: self._info.type._make(_coerce(self._info, 0)))
    g.__hash__ = lambda self: builtins.hash(_value(self))
    g.__bool__ = lambda self: builtins.bool(_value(self))
    g.__int__ = lambda self: builtins.int(_value(self))
    g.__float__ = lambda self: builtins.float(_value(self))
    g.__complex__ = lambda self: complex(_value(self))
    g.__format__ = lambda self, spec: builtins.format(_value(self), spec) if spec else _str(self)
    g.__array__ = lambda self, dtype=None, copy=None: _array0(self) if dtype is None else _array0(self).astype(dtype)
    g.__reduce__ = lambda self: (self._info.type, (_value(self),))
    g.__copy__ = lambda self: self
    g.__deepcopy__ = lambda self, memo: self
    g.astype = lambda self, dtype, *args, **kwargs: _array0(self).astype(dtype)[()]
    g.reshape = lambda self, *shape, **kwargs: _array0(self).reshape(*shape)
    g.view = lambda self, dtype=None: _array0(self).view(dtype)[()]
    g.copy = lambda self: self
    g.conj = g.conjugate = lambda self: self
    g.__round__ = lambda self, ndigits=None: (
        builtins.round(_value(self), ndigits)
        if ndigits is None
        else self._info.type(builtins.round(_value(self), ndigits))
    )
    g.__getitem__ = lambda self, key: _array0(self)[key]
    for short, name in _BINARY.items():
        setattr(g, f"__{short}__", _ufunc_method(name))
        setattr(g, f"__r{short}__", _ufunc_method(name, True))
    for short, name in (
        ("eq", "equal"),
        ("ne", "not_equal"),
        ("lt", "less"),
        ("le", "less_equal"),
        ("gt", "greater"),
        ("ge", "greater_equal"),
    ):
        setattr(g, f"__{short}__", _ufunc_method(name))
    g.__neg__ = _unary("negative")
    g.__pos__ = _unary("positive")
    g.__abs__ = _unary("absolute")
    g.__invert__ = _unary("invert")
    g.__divmod__ = lambda self, other: (self // other, self % other)
    for reduction in (
        "sum",
        "prod",
        "mean",
        "std",
        "var",
        "max",
        "min",
        "all",
        "any",
        "argmax",
        "argmin",
        "round",
        "clip",
        "cumsum",
    ):
        setattr(
            g,
            reduction,
            (lambda r: lambda self, *args, **kwargs: getattr(_array0(self), r)(*args, **kwargs))(reduction),
        )
    # Integers index sequences; floats answer is_integer like Python's.
    _dtypes.integer.__index__ = lambda self: self._v
    _dtypes.integer.is_integer = lambda self: True
    _dtypes.floating.is_integer = lambda self: builtins.float(_value(self)).is_integer()
    _dtypes.float64.__new__ = _new
    # float64 is a Python float: its value is the float itself.
    _dtypes.float64.__hash__ = builtins.float.__hash__


_install()
