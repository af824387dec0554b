"""numpy's other array functions: products, comparisons, set operations and iteration helpers."""

import builtins

import torch

from numpy import _dtypes
from numpy._array import _BOOL, _FLOAT64, _INT64, _axis, _compute, _result, _wrap
from numpy._convert import _common, asarray
from numpy._dtypes import _info
from numpy._select import _where, diff, nonzero, unique, where
from numpy._shape import atleast_2d, broadcast_arrays, concatenate, moveaxis, stack


# -------------------------------------------------------------- products


def dot(a, b, out=None):
    from numpy._ufuncs import matmul, multiply

    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b, out=out)
    if b.ndim > 2:
        return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))
    return matmul(a, b, out=out)


def vdot(a, b):
    return dot(asarray(a).ravel(), asarray(b).ravel())


def inner(a, b):
    a, b = asarray(a), asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    return tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 1]))


def outer(a, b, out=None):
    from numpy._ufuncs import multiply

    a, b = asarray(a).ravel(), asarray(b).ravel()
    return multiply(a.reshape(-1, 1), b.reshape(1, -1), out=out)


def tensordot(a, b, axes=2):
    (ta, tb), info = _common([a, b])
    if info.kind != "f":
        ta, tb = ta.to(torch.int64), tb.to(torch.int64)
    if isinstance(axes, (builtins.int, _dtypes.integer)):
        r = torch.tensordot(ta, tb, dims=builtins.int(axes))
    else:
        xa, xb = axes
        xa = [xa] if isinstance(xa, builtins.int) else builtins.list(xa)
        xb = [xb] if isinstance(xb, builtins.int) else builtins.list(xb)
        r = torch.tensordot(ta, tb, dims=(xa, xb))
    return _result(r, info)


def kron(a, b):
    (ta, tb), info = _common([a, b])
    return _wrap(torch.kron(ta, tb), info)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    (ta, tb), info = _common([a, b])
    if ta.shape[-1] == 2:
        return _result(ta[..., 0] * tb[..., 1] - ta[..., 1] * tb[..., 0], info)
    return _wrap(torch.linalg.cross(ta, tb, dim=-1 if axis is None else axis), info)


def einsum(subscripts, *operands, out=None, dtype=None, order="K", casting="safe", optimize=False):
    arrays = [asarray(o) for o in operands]
    info = _info(dtype) if dtype is not None else _dtypes._resolve([a._info for a in arrays], [])
    compute = info.compute if info.kind == "f" else torch.int64
    r = torch.einsum(subscripts, *[_compute(a).to(compute) for a in arrays])
    res = _result(r, info)
    if out is not None:
        out[...] = res
        return out
    return res


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return asarray(a).trace(offset, axis1, axis2, dtype, out)


def diagonal(a, offset=0, axis1=0, axis2=1):
    return asarray(a).diagonal(offset, axis1, axis2)


def tril(m, k=0):
    m = asarray(m)
    return _wrap(m._t.tril(k), m._info)


def triu(m, k=0):
    m = asarray(m)
    return _wrap(m._t.triu(k), m._info)


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    x = atleast_2d(asarray(m).astype(float))
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if y is not None:
        yy = atleast_2d(asarray(y).astype(float))
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        x = concatenate([x, yy], 0)
    n = x.shape[1]
    d = (0 if bias else 1) if ddof is None else ddof
    t = x._t - x._t.mean(1, keepdim=True)
    c = t @ t.T / (n - d)
    return _result(c.squeeze() if c.numel() == 1 else c, _FLOAT64)


def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = asarray(cov(x, y, rowvar))
    if c.ndim == 0:
        return c / c
    d = c._t.diagonal().sqrt()
    r = c._t / d[:, None] / d[None, :]
    return _wrap(r.clamp(-1, 1), _FLOAT64)


# ------------------------------------------------------------ comparisons


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = asarray(a), asarray(b)
    ta = _compute(a).to(torch.float64)
    tb = _compute(b).to(torch.float64)
    close = (ta - tb).abs() <= atol + rtol * tb.abs()
    close = close | (ta == tb)
    if equal_nan:
        close = close | (torch.isnan(ta) & torch.isnan(tb))
    return _result(close, _BOOL)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return builtins.bool(asarray(isclose(a, b, rtol, atol, equal_nan)).all())


def array_equal(a1, a2, equal_nan=False):
    try:
        a, b = asarray(a1), asarray(a2)
    except Exception:
        return False
    if a.shape != b.shape:
        return False
    (ta, tb), info = _common([a, b])
    eq = ta == tb
    if equal_nan and info.kind == "f":
        eq = eq | (torch.isnan(ta) & torch.isnan(tb))
    return builtins.bool(eq.all())


def array_equiv(a1, a2):
    try:
        a, b = broadcast_arrays(a1, a2)
    except ValueError:
        return False
    return array_equal(a, b)


def isscalar(element):
    return isinstance(
        element, (_dtypes.generic, builtins.bool, builtins.int, builtins.float, complex, builtins.str, bytes)
    )


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


def shares_memory(a, b, max_work=None):
    from torch import _C

    a, b = asarray(a), asarray(b)
    return _C._storage_info(a._t)[0] == _C._storage_info(b._t)[0]


may_share_memory = shares_memory


def copy(a, order="K", subok=False):
    return asarray(a).copy()


def copyto(dst, src, casting="same_kind", where=True):
    dst[...] = src if where is True else _where(where, src, dst)


def isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    e = asarray(element)
    t = asarray(test_elements).ravel()
    (te, tt), info = _common([e, t])
    r = torch.isin(te, tt)
    return _result(~r if invert else r, _BOOL)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    a, b = unique(ar1), unique(ar2)
    return a[isin(a, b)]


def union1d(ar1, ar2):
    return unique(concatenate([asarray(ar1).ravel(), asarray(ar2).ravel()]))


def setdiff1d(ar1, ar2, assume_unique=False):
    a = unique(ar1)
    return a[isin(a, ar2, invert=True)]


def ix_(*args):
    out = []
    n = builtins.len(args)
    for k, a in builtins.enumerate(args):
        a = asarray(a)
        if a._info.kind == "b":
            a = nonzero(a)[0]
        out.append(a.reshape((1,) * k + (a.size,) + (1,) * (n - k - 1)))
    return builtins.tuple(out)


def ndindex(*shape):
    import itertools

    if builtins.len(shape) == 1 and isinstance(shape[0], builtins.tuple):
        shape = shape[0]
    return itertools.product(*[builtins.range(s) for s in shape])


def ndenumerate(arr):
    a = asarray(arr)
    for idx in ndindex(*a.shape):
        yield idx, a[idx]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    a = asarray(arr)
    moved = moveaxis(a, axis, -1)
    outs = [asarray(func1d(moved[idx], *args, **kwargs)) for idx in ndindex(*moved.shape[:-1])]
    r = stack(outs).reshape(moved.shape[:-1] + outs[0].shape)
    if outs[0].ndim == 0:
        return r
    return moveaxis(r, -1, axis)


# ------------------------------------------------------------ signals, polynomials


def convolve(a, v, mode="full"):
    a, v = asarray(a).ravel(), asarray(v).ravel()
    if a.size == 0 or v.size == 0:
        raise ValueError("v cannot be empty" if v.size == 0 else "a cannot be empty")
    if v.size > a.size:
        a, v = v, a
    (ta, tv), info = _common([a, v])
    compute = info.compute if info.kind == "f" else torch.int64
    ta, tv = ta.to(compute), tv.to(compute)
    n, m = ta.numel(), tv.numel()
    full = torch.zeros(n + m - 1, dtype=compute)
    for k in builtins.range(m):
        full[k : k + n] += ta * tv[k]
    if mode == "full":
        r = full
    elif mode == "same":
        start = (m - 1) // 2
        r = full[start : start + n]
    elif mode == "valid":
        r = full[m - 1 : n]
    else:
        raise ValueError(f"mode must be one of 'full', 'same', or 'valid' (got {mode!r})")
    return _result(r, info)


def correlate(a, v, mode="valid"):
    return convolve(a, asarray(v).ravel()[::-1], mode)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = asarray(y)
    ax = _axis(axis, y.ndim)
    t = _compute(y).to(torch.float64) if y._info.kind != "f" else _compute(y)
    t = t.movedim(ax, -1)
    mid = (t[..., 1:] + t[..., :-1]) / 2
    if x is None:
        r = (mid * dx).sum(-1)
    else:
        tx = _compute(asarray(x)).to(t.dtype)
        r = (mid * (tx[..., 1:] - tx[..., :-1])).sum(-1)
    return _result(r, y._info if y._info.kind == "f" else _FLOAT64)


def vander(x, N=None, increasing=False):
    x = asarray(x)
    n = x.size if N is None else N
    powers = torch.arange(n) if increasing else torch.arange(n - 1, -1, -1)
    t = _compute(x).reshape(-1, 1)
    return _result(
        t ** powers.to(t.dtype if t.dtype.is_floating_point else torch.int64),
        x._info if x._info.kind != "b" else _INT64,
    )


def polyval(p, x):
    p, x = asarray(p), asarray(x)
    y = asarray(0)
    for c in p.ravel():
        y = y * x + c
    return y


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    from numpy.linalg import lstsq

    A = vander(asarray(x).astype(float), deg + 1)
    return lstsq(A, asarray(y).astype(float))[0]


def vecdot(x1, x2, /, *, axis=-1):
    from numpy._ufuncs import multiply
    from numpy._reductions import sum

    return sum(multiply(x1, x2), axis=axis)


def matvec(x1, x2, /):
    from numpy._ufuncs import matmul

    return matmul(x1, asarray(x2)[..., None])[..., 0]


def vecmat(x1, x2, /):
    from numpy._ufuncs import matmul

    return matmul(asarray(x1)[..., None, :], x2)[..., 0, :]


def sinc(x):
    x = asarray(x)
    t = _compute(x).to(torch.float64) if x._info.kind != "f" else _compute(x)
    y = torch.where(t == 0, torch.full((), 1e-20, dtype=t.dtype), t) * 3.141592653589793
    return _result(
        torch.where(t == 0, torch.ones_like(t), torch.sin(y) / y), x._info if x._info.kind == "f" else _FLOAT64
    )


def unwrap(p, discont=None, axis=-1, *, period=6.283185307179586):
    from numpy._ufuncs import absolute, remainder

    p = asarray(p).astype(float)
    d = diff(p, axis=axis)
    half = period / 2
    discont = half if discont is None else builtins.max(discont, half)
    dd = remainder(d + half, period) - half
    dd = where((dd == -half) & (d > 0), half, dd)
    correct = dd - d
    correct = where(absolute(d) < discont, 0.0, correct)
    out = p.copy()
    sl = [slice(None)] * p.ndim
    sl[axis] = slice(1, None)
    from numpy._reductions import cumsum

    out[builtins.tuple(sl)] = p[builtins.tuple(sl)] + cumsum(correct, axis=axis)
    return out


def _window(n, f):
    n = builtins.int(n)
    if n < 1:
        return asarray([], dtype=float)
    if n == 1:
        return asarray([1.0])
    k = torch.arange(n, dtype=torch.float64)
    return _wrap(f(k, n), _FLOAT64)


def bartlett(M):
    return _window(M, lambda k, n: 1 - (2 * k - (n - 1)).abs() / (n - 1))


def hanning(M):
    return _window(M, lambda k, n: 0.5 - 0.5 * torch.cos(2 * 3.141592653589793 * k / (n - 1)))


def hamming(M):
    return _window(M, lambda k, n: 0.54 - 0.46 * torch.cos(2 * 3.141592653589793 * k / (n - 1)))


def blackman(M):
    pi = 3.141592653589793
    return _window(
        M, lambda k, n: 0.42 - 0.5 * torch.cos(2 * pi * k / (n - 1)) + 0.08 * torch.cos(4 * pi * k / (n - 1))
    )


def i0(x):
    """The modified Bessel function of the first kind, order 0 (power series)."""
    x = asarray(x)
    t = _compute(x).to(torch.float64)
    q = (t / 2) ** 2
    term = torch.ones_like(t)
    total = torch.ones_like(t)
    for k in builtins.range(1, 60):
        term = term * q / (k * k)
        total = total + term
    return _result(total, _FLOAT64)


def kaiser(M, beta):
    n = builtins.int(M)
    if n == 1:
        return asarray([1.0])
    k = torch.arange(n, dtype=torch.float64)
    alpha = (n - 1) / 2.0
    arg = beta * torch.sqrt(torch.clamp(1 - ((k - alpha) / alpha) ** 2, min=0.0))
    return _wrap(i0(_wrap(arg, _FLOAT64))._t / builtins.float(i0(beta)), _FLOAT64)


# ----------------------------------------------------------- real and complex


def real(val):
    return asarray(val)


def imag(val):
    return asarray(val).imag


def iscomplex(x):
    return asarray(x) != asarray(x)


def isreal(x):
    return asarray(x) == asarray(x)


def iscomplexobj(x):
    return False


def isrealobj(x):
    return True


def real_if_close(a, tol=100):
    return asarray(a)


def angle(z, deg=False):
    from numpy._ufuncs import arctan2

    a = asarray(z).astype(float)
    return arctan2(_wrap(torch.zeros(a.shape, dtype=torch.float64), _FLOAT64), a) * (
        180.0 / 3.141592653589793 if deg else 1.0
    )


def fix(x, out=None):
    from numpy._ufuncs import ceil, floor

    x = asarray(x)
    return where(x < 0, ceil(x), floor(x)) if out is None else copyto(out, where(x < 0, ceil(x), floor(x)))


def isposinf(x, out=None):
    x = asarray(x)
    return x == float("inf")


def isneginf(x, out=None):
    x = asarray(x)
    return x == float("-inf")


def isfortran(a):
    a = asarray(a)
    return a.flags.f_contiguous and not a.flags.c_contiguous


# ------------------------------------------------------------------- types


def common_type(*arrays):
    infos = [asarray(a)._info for a in arrays]
    best = (
        16
        if builtins.all(i.name == "float16" for i in infos)
        else 32
        if builtins.all(i.name in ("float16", "float32") for i in infos)
        else 64
    )
    return _dtypes._BY_NAME[f"float{best}"].type


def min_scalar_type(a):
    if isinstance(a, (builtins.int, _dtypes.integer)) and not isinstance(a, builtins.bool):
        v = builtins.int(a)
        for name in ("uint8", "uint16", "uint32", "uint64") if v >= 0 else ("int8", "int16", "int32", "int64"):
            lo, hi = _dtypes._int_bounds(_dtypes._BY_NAME[name])
            if lo <= v <= hi:
                return _dtypes._BY_NAME[name].dtype
    if isinstance(a, (builtins.float, _dtypes.floating)):
        return _dtypes._BY_NAME["float16"].dtype
    return asarray(a).dtype


def mintypecode(typechars, typeset="GDFgdf", default="d"):
    chars = [t if isinstance(t, builtins.str) else asarray(t).dtype.char for t in typechars]
    chosen = [c for c in chars if c in typeset]
    if not chosen:
        return default
    if "F" in chosen and "d" in chosen:
        return "D"
    return builtins.min(chosen, key=typeset.index)


_TYPE_NAMES = {
    "S1": "character",
    "?": "bool",
    "b": "signed char",
    "B": "unsigned char",
    "h": "short",
    "H": "unsigned short",
    "i": "integer",
    "I": "unsigned integer",
    "l": "long integer",
    "L": "unsigned long integer",
    "q": "long long integer",
    "Q": "unsigned long long integer",
    "f": "single precision",
    "d": "double precision",
    "g": "long precision",
    "F": "complex single precision",
    "D": "complex double precision",
    "G": "complex long double precision",
    "S": "string",
    "U": "unicode",
    "V": "void",
    "O": "object",
}


def typename(char):
    return _TYPE_NAMES[char]


def base_repr(number, base=2, padding=0):
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if base > builtins.len(digits):
        raise ValueError("Bases greater than 36 not handled in base_repr.")
    if base < 2:
        raise ValueError("Bases less than 2 not handled in base_repr.")
    n = builtins.abs(builtins.int(number))
    out = []
    while n:
        out.append(digits[n % base])
        n //= base
    out.append("0" * padding)
    if builtins.int(number) < 0:
        out.append("-")
    return "".join(reversed(out)) or "0"


def binary_repr(num, width=None):
    num = builtins.int(num)
    if num >= 0:
        text = builtins.bin(num)[2:]
        return text.zfill(width) if width else text
    if width is None:
        return "-" + builtins.bin(-num)[2:]
    return builtins.bin((1 << width) + num)[2:].zfill(width)


def require(a, dtype=None, requirements=None, *, like=None):
    from numpy._convert import ascontiguousarray

    a = asarray(a, dtype=dtype)
    return (
        ascontiguousarray(a)
        if requirements and any(r in ("C", "C_CONTIGUOUS", "CONTIGUOUS") for r in requirements)
        else a
    )


def asarray_chkfinite(a, dtype=None, order=None):
    a = asarray(a, dtype=dtype)
    if a._info.kind == "f" and not builtins.bool(torch.isfinite(a._t).all()):
        raise ValueError("array must not contain infs or NaNs")
    return a


def setxor1d(ar1, ar2, assume_unique=False):
    a, b = unique(ar1), unique(ar2)
    return unique(concatenate([a[isin(a, b, invert=True)], b[isin(b, a, invert=True)]]))


def apply_over_axes(func, a, axes):
    val = asarray(a)
    for axis in axes if isinstance(axes, (builtins.list, builtins.tuple)) else [axes]:
        res = func(val, axis)
        res = asarray(res)
        val = res if res.ndim == val.ndim else res.reshape(val.shape[:axis] + (1,) + val.shape[axis + 1 :])
    return val


# `from numpy.<this> import *` exports what this module defines, not what it imports.
__all__ = [n for n, v in globals().items() if not n.startswith("_") and getattr(v, "__module__", None) == __name__]
