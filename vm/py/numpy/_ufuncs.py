"""numpy's universal functions: each resolves its loop dtype by numpy's
rules (NEP 50 promotion, then the function's own: true division and float
functions of integers give floats, comparisons give bools), casts the
operands to it and runs one torch op; ``out=``, ``where=`` and ``dtype=``
as numpy takes them; ``reduce``/``accumulate``/``outer`` on the class."""

import builtins

import torch

from numpy import _dtypes
from numpy._array import _BOOL, _FLOAT64, _compute, _from_compute, _result, _wrap, ndarray
from numpy._convert import asarray
from numpy._dtypes import _BY_NAME, _info

from numpy._reductions import _NOVALUE

# Bools have no loop of their own for these; numpy computes them in int8.
_BOOL_AS_INT8 = {
    "floor_divide",
    "remainder",
    "fmod",
    "power",
    "square",
    "reciprocal",
    "left_shift",
    "right_shift",
    "gcd",
    "lcm",
}


def _operand(x):
    """An operand as ``(array, weak kind)``; Python numbers stay themselves."""
    if isinstance(x, ndarray):
        return x, None
    kind = _dtypes._weak_kind(x)
    if kind is not None:
        return x, kind
    return asarray(x), None


def _tensor(x, kind, info):
    """An operand's values as a tensor of ``info``'s compute dtype."""
    if kind is not None:
        return torch.tensor(x, dtype=info.compute)
    t = _compute(x)
    if t.dtype is info.compute:
        return t
    if info.mask is not None:
        return _from_compute(t, info).to(info.compute).bitwise_and(info.mask)
    return (
        _from_compute(t, info)
        if t.dtype.is_floating_point and not info.compute.is_floating_point
        else t.to(info.compute)
    )


def _bool_error(name):
    if name == "subtract":
        return TypeError(
            "numpy boolean subtract, the `-` operator, is not supported, use the bitwise_xor, the `^` operator, or the logical_xor function instead."
        )
    return TypeError(
        "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator or the logical_not function instead."
    )


class UFuncTypeError(TypeError):
    """A ufunc given operand types it has no loop for (or cannot cast to ``out``)."""


UFuncTypeError.__module__ = "numpy._core._exceptions"


def _unsupported(name, infos):
    return TypeError(
        f"ufunc '{name}' not supported for the input types, and the inputs could not be safely coerced to any supported types according to the casting rule ''safe''"
    )


class ufunc:
    """A numpy universal function (``np.add``, ``np.sqrt``, …)."""

    def __init__(self, name, nin, fn, rule, identity=None):
        self.__name__ = name
        self.__qualname__ = name
        self.nin = nin
        self.nout = 1
        self.nargs = nin + 1
        self.identity = identity
        self.signature = None
        self._fn = fn
        self._rule = rule

    def __repr__(self):
        return f"<ufunc '{self.__name__}'>"

    def _loop(self, infos, weak):
        """(loop info the operands are cast to, result info)."""
        rule = self._rule
        loop = _dtypes._resolve(infos, weak)
        name = self.__name__
        if loop.kind == "b" and rule in ("arith", "int"):
            if name in ("subtract", "negative"):
                raise _bool_error(name)
            if name == "sign":
                raise UFuncTypeError(
                    "ufunc 'sign' did not contain a loop with signature matching types <class 'numpy.dtypes.BoolDType'> -> None"
                )
            if name in _BOOL_AS_INT8:
                loop = _BY_NAME["int8"]
        if rule == "arith":
            return loop, loop
        if rule == "float":
            if loop.kind != "f":
                loop = _dtypes._min_float_for(loop)
            return loop, loop
        if rule == "divide":
            if loop.kind != "f":
                loop = _FLOAT64
            return loop, loop
        if rule == "int":
            if loop.kind == "f" or (
                loop.kind == "b"
                and name not in ("bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not", "bitwise_invert")
            ):
                raise _unsupported(name, infos)
            return loop, loop
        if rule in ("compare", "logical", "predicate"):
            return loop, _BOOL
        if rule == "float64":
            return _FLOAT64, _FLOAT64
        raise AssertionError(rule)

    def __call__(
        self, *args, out=None, where=True, dtype=None, casting="same_kind", order="K", subok=True, signature=None
    ):
        if builtins.len(args) > self.nin:
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            out = args[self.nin]
            args = args[: self.nin]
        if builtins.len(args) != self.nin:
            raise TypeError(
                f"{self.__name__}() takes from {self.nin} to {self.nin + 1} positional arguments but {builtins.len(args)} were given"
            )
        if isinstance(out, builtins.tuple):
            out = out[0]
        ops = [_operand(a) for a in args]
        infos = [a._info for a, k in ops if k is None]
        weak = [k for _, k in ops if k is not None]
        if dtype is not None:
            loop = _info(dtype)
            result = _BOOL if self._rule in ("compare", "logical", "predicate") else loop
        else:
            loop, result = self._loop(infos, weak)
            if self._rule == "compare" and weak and loop.kind in "iu":
                # A Python int past the array type's range still compares.
                for a, k in ops:
                    if k == "i":
                        lo, hi = _dtypes._int_bounds(loop)
                        if not lo <= a <= hi:
                            loop = _BY_NAME["int64"] if -(1 << 63) <= a < (1 << 63) else _FLOAT64
            elif weak and loop.kind in "iu":
                for a, k in ops:
                    if k == "i":
                        _dtypes._check_weak_int(a, loop)
        tensors = [_tensor(a, k, loop) for a, k in ops]
        name = self.__name__
        try:
            if loop.kind in "iu" and name in ("floor_divide", "remainder", "fmod", "divmod"):
                t = _int_division(self._fn, tensors)
            elif loop.kind in "iu" and name == "power":
                e = tensors[1]
                if e.numel() and builtins.bool((e < 0).any()):
                    raise ValueError("Integers to negative integer powers are not allowed.")
                t = self._fn(*tensors)
            else:
                t = self._fn(*tensors)
        except RuntimeError as e:
            raise _broadcast_error(e, tensors) from None
        if where is not True:
            if out is None:
                out = _wrap(torch.zeros(t.shape, dtype=result.storage), result)
            mask = asarray(where)._t.to(torch.bool)
            target = out._t
            value = _from_compute(t.to(result.compute) if t.dtype is not result.compute else t, out._info)
            shape = torch.broadcast_shapes(target.shape, value.shape, mask.shape)
            out._t.copy_(torch.where(mask.expand(shape), value.expand(shape), target.expand(shape)))
            return out
        if out is not None:
            if not isinstance(out, ndarray):
                raise TypeError("return arrays must be of ArrayType")
            if casting == "same_kind" and not _dtypes.can_cast(result.dtype, out.dtype, "same_kind"):
                raise UFuncTypeError(
                    f"Cannot cast ufunc '{self.__name__}' output from dtype('{result.name}') to dtype('{out._info.name}') with casting rule 'same_kind'"
                )
            out._t.copy_(_from_compute(t, out._info).expand(out._t.shape))
            return out
        return _result(t, result)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
        from numpy import _reductions

        return _reductions.ufunc_reduce(self, array, axis, dtype, out, keepdims, initial, where)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        from numpy import _reductions

        return _reductions.ufunc_accumulate(self, array, axis, dtype, out)

    def outer(self, A, B, **kwargs):
        A, B = asarray(A), asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B, **kwargs)

    def at(self, a, indices, b=None):
        if self.__name__ != "add" or b is None:
            raise NotImplementedError(f"fxvm's numpy has {self.__name__}.at only for add")
        flat = asarray(indices)
        values = asarray(b, dtype=a.dtype) if not isinstance(b, ndarray) else b.astype(a.dtype)
        a._t.index_put_((flat._t.to(torch.int64),), torch.broadcast_to(values._t, flat.shape), accumulate=True)


def _broadcast_error(e, tensors):
    """numpy's ValueError for operands whose shapes do not broadcast (torch's error otherwise)."""
    if "must match the size" not in builtins.str(e):
        return e
    shapes = " ".join(builtins.str(builtins.tuple(t.shape)) for t in tensors)
    return ValueError(f"operands could not be broadcast together with shapes {shapes} ")


def _int_division(fn, tensors):
    """Integer floor division and remainder: a zero divisor gives 0 (numpy
    warns; it does not raise)."""
    a, b = torch.broadcast_tensors(*tensors)
    zero = b == 0
    if not builtins.bool(zero.any()):
        return fn(a, b)
    safe = torch.where(zero, torch.ones_like(b), b)
    return torch.where(zero, torch.zeros_like(a), fn(a, safe))


def _remainder(a, b):
    r = torch.remainder(a, b)
    if r.dtype.is_floating_point:
        # A zero remainder takes the divisor's sign, as numpy's (Python's) does.
        r = torch.where(r == 0, torch.copysign(torch.zeros_like(r), b), r)
    return r


def _reciprocal(x):
    if x.dtype.is_floating_point:
        return torch.reciprocal(x)
    # C's integer 1 / x, with numpy's 0 for a zero divisor.
    zero = x == 0
    safe = torch.where(zero, torch.ones_like(x), x)
    return torch.where(zero, torch.zeros_like(x), torch.div(torch.ones_like(x), safe, rounding_mode="trunc"))


def _sign(x):
    return torch.sign(x)


def _rint(x):
    return torch.round(x) if x.dtype.is_floating_point else x


def _same_if_int(f):
    return lambda x: f(x) if x.dtype.is_floating_point else x


def _float_power(a, b):
    return torch.pow(a.to(torch.float64), b.to(torch.float64))


def _heaviside(x, h):
    return torch.where(
        x < 0, torch.zeros_like(x), torch.where(x > 0, torch.ones_like(x), h.expand_as(x) if h.dim() else h)
    )


def _make_table():
    B = {
        # name: (torch fn, rule, identity)
        "add": (torch.add, "arith", 0),
        "subtract": (torch.sub, "arith", None),
        "multiply": (torch.mul, "arith", 1),
        "divide": (torch.div, "divide", None),
        "floor_divide": (torch.floor_divide, "arith", None),
        "remainder": (_remainder, "arith", None),
        "fmod": (torch.fmod, "arith", None),
        "power": (torch.pow, "arith", None),
        "float_power": (_float_power, "float64", None),
        "maximum": (torch.maximum, "arith", None),
        "minimum": (torch.minimum, "arith", None),
        "fmax": (torch.fmax, "arith", None),
        "fmin": (torch.fmin, "arith", None),
        "arctan2": (torch.atan2, "float", None),
        "hypot": (torch.hypot, "float", 0),
        "copysign": (torch.copysign, "float", None),
        "logaddexp": (torch.logaddexp, "float", None),
        "logaddexp2": (torch.logaddexp2, "float", None),
        "heaviside": (_heaviside, "float", None),
        "equal": (torch.eq, "compare", None),
        "not_equal": (torch.ne, "compare", None),
        "less": (torch.lt, "compare", None),
        "less_equal": (torch.le, "compare", None),
        "greater": (torch.gt, "compare", None),
        "greater_equal": (torch.ge, "compare", None),
        "logical_and": (torch.logical_and, "logical", True),
        "logical_or": (torch.logical_or, "logical", False),
        "logical_xor": (torch.logical_xor, "logical", False),
        "bitwise_and": (torch.bitwise_and, "int", -1),
        "bitwise_or": (torch.bitwise_or, "int", 0),
        "bitwise_xor": (torch.bitwise_xor, "int", 0),
        "left_shift": (torch.bitwise_left_shift, "int", None),
        "right_shift": (torch.bitwise_right_shift, "int", None),
        "gcd": (torch.gcd, "int", 0),
        "lcm": (torch.lcm, "int", None),
    }
    U = {
        "negative": (torch.neg, "arith"),
        "positive": (lambda x: x.clone(), "arith"),
        "absolute": (lambda x: x.clone() if x.dtype is torch.bool else torch.abs(x), "arith"),
        "fabs": (torch.abs, "float"),
        "sign": (_sign, "arith"),
        "square": (torch.square, "arith"),
        "reciprocal": (_reciprocal, "arith"),
        "sqrt": (torch.sqrt, "float"),
        "cbrt": (lambda x: torch.sign(x) * torch.pow(torch.abs(x), 1.0 / 3.0), "float"),
        "exp": (torch.exp, "float"),
        "exp2": (torch.exp2, "float"),
        "expm1": (torch.expm1, "float"),
        "log": (torch.log, "float"),
        "log2": (torch.log2, "float"),
        "log10": (torch.log10, "float"),
        "log1p": (torch.log1p, "float"),
        "sin": (torch.sin, "float"),
        "cos": (torch.cos, "float"),
        "tan": (torch.tan, "float"),
        "arcsin": (torch.asin, "float"),
        "arccos": (torch.acos, "float"),
        "arctan": (torch.atan, "float"),
        "sinh": (torch.sinh, "float"),
        "cosh": (torch.cosh, "float"),
        "tanh": (torch.tanh, "float"),
        "arcsinh": (torch.asinh, "float"),
        "arccosh": (torch.acosh, "float"),
        "arctanh": (torch.atanh, "float"),
        "deg2rad": (torch.deg2rad, "float"),
        "rad2deg": (torch.rad2deg, "float"),
        "floor": (_same_if_int(torch.floor), "arith"),
        "ceil": (_same_if_int(torch.ceil), "arith"),
        "trunc": (_same_if_int(torch.trunc), "arith"),
        "rint": (_rint, "arith"),
        "isnan": (torch.isnan, "predicate"),
        "isinf": (torch.isinf, "predicate"),
        "isfinite": (torch.isfinite, "predicate"),
        "signbit": (torch.signbit, "predicate"),
        "logical_not": (torch.logical_not, "logical"),
        "invert": (torch.bitwise_not, "int"),
        "conjugate": (lambda x: x.clone(), "arith"),
    }
    table = {}
    for name, (fn, rule, identity) in B.items():
        table[name] = ufunc(name, 2, fn, rule, identity)
    for name, (fn, rule) in U.items():
        table[name] = ufunc(name, 1, fn, rule)
    return table


_TABLE = _make_table()
globals().update(_TABLE)
true_divide = divide  # noqa: F821 (defined by the table)
mod = remainder  # noqa: F821
abs = absolute  # noqa: F821
conj = conjugate  # noqa: F821
bitwise_not = bitwise_invert = invert  # noqa: F821
degrees = rad2deg  # noqa: F821
radians = deg2rad  # noqa: F821
acos, asin, atan, atan2 = arccos, arcsin, arctan, arctan2  # noqa: F821
acosh, asinh, atanh = arccosh, arcsinh, arctanh  # noqa: F821
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift  # noqa: F821
pow = power  # noqa: F821


def divmod(x1, x2, out=None, **kwargs):
    return floor_divide(x1, x2, **kwargs), remainder(x1, x2, **kwargs)  # noqa: F821


def modf(x, out=None):
    x = asarray(x)
    whole = trunc(x)  # noqa: F821
    return subtract(x, whole), whole  # noqa: F821


def frexp(x, out=None):
    x = asarray(x)
    t = _compute(x) if x._info.kind == "f" else _compute(x).to(torch.float64)
    size = t.abs()
    e = torch.where(size == 0, torch.zeros_like(t), torch.floor(torch.log2(size)) + 1)
    m = t / torch.pow(2.0, e)
    # log2 may round across a power of two: bring |m| into [0.5, 1).
    up = m.abs() >= 1
    m, e = torch.where(up, m / 2, m), torch.where(up, e + 1, e)
    down = (m.abs() < 0.5) & (m != 0)
    m, e = torch.where(down, m * 2, m), torch.where(down, e - 1, e)
    return _result(m, x._info if x._info.kind == "f" else _FLOAT64), _result(e.to(torch.int32), _BY_NAME["int32"])


def ldexp(x1, x2, out=None):
    return multiply(x1, power(2.0, asarray(x2).astype(_FLOAT64.dtype)))  # noqa: F821


def matmul(x1, x2, out=None, **kwargs):
    a, b = asarray(x1), asarray(x2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != k_b:
        raise ValueError(
            "matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature "
            f"(n?,k),(k,m?)->(n?,m?) (size {k_b} is different from {a.shape[-1]})"
        )
    info = _dtypes._resolve([a._info, b._info], [])
    if info.kind == "b":
        t = torch.matmul(_compute(a).to(torch.int64), _compute(b).to(torch.int64)) != 0
    else:
        compute = info.compute if info.kind == "f" else torch.int64
        t = torch.matmul(_tensor(a, None, info).to(compute), _tensor(b, None, info).to(compute))
    r = _result(t, info)
    if out is not None:
        out[...] = r
        return out
    return r


# `from numpy.<this> import *` exports what this module defines, not what it imports.
__all__ = [n for n, v in globals().items() if not n.startswith("_") and getattr(v, "__module__", None) == __name__]
