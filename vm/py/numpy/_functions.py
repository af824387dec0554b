"""numpy's other array functions: products, comparisons, set operations and iteration helpers."""

import builtins

import torch

from numpy import _dtypes
from numpy._array import (
    _BOOL,
    _FLOAT64,
    _compute,
    _result,
    _wrap,
)
from numpy._convert import _common, asarray
from numpy._dtypes import _info

from numpy._select import _where, nonzero, unique
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
    return isinstance(element, (_dtypes.generic, builtins.bool, builtins.int, builtins.float, complex, builtins.str, bytes))


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


def in1d(ar1, ar2, assume_unique=False, invert=False):
    return isin(asarray(ar1).ravel(), ar2, invert=invert)


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

