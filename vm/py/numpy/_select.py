"""Selection, sorting and searching, counting and histograms, differences."""

import builtins

import _fxvm_numpy

import torch

from numpy import _dtypes
from numpy._array import (
    _FLOAT64,
    _INT64,
    AxisError,
    _axis,
    _compute,
    _from_compute,
    _result,
    _wrap,
)
from numpy._convert import asarray, ndarray
from numpy._shape import broadcast_arrays, broadcast_to, concatenate, stack


# ------------------------------------------------------------- selection


def where(condition, x=None, y=None):
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    from numpy._ufuncs import _operand, _tensor

    cond = asarray(condition)
    ops = [_operand(x), _operand(y)]
    info = _dtypes._resolve([a._info for a, k in ops if k is None], [k for _, k in ops if k is not None])
    tx, ty = (_tensor(a, k, info) for a, k in ops)
    c = cond._t if cond._info.kind == "b" else _compute(cond) != 0
    return _result(torch.where(c, tx, ty), info)


# copyto's parameter is named where.
_where = where


def nonzero(a):
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    t = _compute(a)
    return builtins.tuple(_wrap(i, _INT64) for i in torch.nonzero(t, as_tuple=True))


def argwhere(a):
    a = asarray(a)
    if a.ndim == 0:
        a = a.reshape(1)
        return _wrap(torch.nonzero(_compute(a))[:, :0], _INT64)
    return _wrap(torch.nonzero(_compute(a)), _INT64)


def flatnonzero(a):
    return nonzero(asarray(a).ravel())[0]


def compress(condition, a, axis=None, out=None):
    a = asarray(a)
    if axis is None:
        a = a.ravel()
        axis = 0
    # A condition shorter than the axis selects nothing past its end.
    picked = torch.nonzero(asarray(condition, dtype=bool)._t.reshape(-1)).reshape(-1)
    return take(a, _wrap(picked, _INT64), axis=axis, out=out)


def extract(condition, arr):
    return asarray(arr).ravel()[asarray(condition).ravel().astype(bool)]


def take(a, indices, axis=None, out=None, mode="raise"):
    a = asarray(a)
    idx = asarray(indices)
    t = a._t if axis is None else a._t
    i = _compute(idx).to(torch.int64)
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    n = t.shape[_axis(axis, t.dim())]
    if mode == "wrap":
        i = i % n
    elif mode == "clip":
        i = i.clamp(0, n - 1)
    elif i.numel() and (builtins.bool((i >= n).any()) or builtins.bool((i < -n).any())):
        bad = builtins.int(i.max()) if builtins.bool((i >= n).any()) else builtins.int(i.min())
        raise IndexError(f"index {bad} is out of bounds for axis {axis} with size {n}")
    i = torch.where(i < 0, i + n, i)
    d = _axis(axis, t.dim())
    r = t.index_select(d, i.reshape(-1))
    r = r.reshape(t.shape[:d] + idx.shape + t.shape[d + 1 :])
    res = _result(r, a._info)
    if out is not None:
        out[...] = res
        return out
    return res


def take_along_axis(arr, indices, axis=-1):
    a = asarray(arr)
    idx = _compute(asarray(indices)).to(torch.int64)
    if axis is None:
        return _wrap(torch.gather(a._t.reshape(-1), 0, idx.reshape(-1)), a._info)
    d = _axis(axis, a.ndim)
    n = a.shape[d]
    idx = torch.where(idx < 0, idx + n, idx)
    shape = builtins.list(
        torch.broadcast_shapes(a.shape[:d] + (1,) + a.shape[d + 1 :], idx.shape[:d] + (1,) + idx.shape[d + 1 :])
    )
    src_shape = builtins.list(shape)
    src_shape[d] = n
    idx_shape = builtins.list(shape)
    idx_shape[d] = idx.shape[d]
    return _wrap(torch.gather(a._t.expand(src_shape), d, idx.expand(idx_shape)), a._info)


def put_along_axis(arr, indices, values, axis):
    d = _axis(axis, arr.ndim)
    idx = _compute(asarray(indices)).to(torch.int64)
    v = asarray(values, dtype=arr.dtype)
    idx_b = idx.expand(builtins.list(torch.broadcast_shapes(idx.shape, v.shape)))
    arr._t.scatter_(d, idx_b, torch.broadcast_to(v._t, idx_b.shape).contiguous())


def choose(a, choices, out=None, mode="raise"):
    idx = asarray(a)
    ch = stack([asarray(c) for c in choices])
    b = broadcast_arrays(idx, *[ch[i] for i in builtins.range(ch.shape[0])])
    stacked = stack(b[1:])
    return take_along_axis(stacked, b[0].reshape((1,) + b[0].shape), 0)[0]


def select(condlist, choicelist, default=0):
    result = asarray(default)
    for cond, choice in reversed(builtins.list(zip(condlist, choicelist))):
        result = where(cond, choice, result)
    return result


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None, **kwargs):
    from numpy._ufuncs import maximum, minimum

    lo = a_min if a_min is not None else min
    hi = a_max if a_max is not None else max
    r = asarray(a)
    if lo is not None:
        r = maximum(r, lo)
    if hi is not None:
        r = minimum(r, hi)
    if out is not None:
        out[...] = r
        return out
    return r


def round(a, decimals=0, out=None):
    a = asarray(a)
    if a._info.kind != "f":
        if decimals >= 0:
            return a.copy()
        scale = 10 ** (-decimals)
        from numpy._ufuncs import multiply

        return multiply(
            _wrap(torch.round(_compute(a).to(torch.float64) / scale).to(torch.int64), _INT64), scale
        ).astype(a.dtype)
    t = _compute(a)
    if decimals:
        r = torch.round(t, decimals=decimals)
    else:
        r = torch.round(t)
    res = _result(r, a._info)
    if out is not None:
        out[...] = res
        return out
    return res


around = round


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    a = asarray(x)
    if a._info.kind != "f":
        return a.copy() if copy else a
    t = torch.nan_to_num(a._t, nan=nan, posinf=posinf, neginf=neginf)
    if not copy:
        a._t.copy_(t)
        return a
    return _wrap(t, a._info)


# ------------------------------------------------------ sorting, searching


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    a = asarray(a)
    if axis is None:
        a = a.ravel()
        axis = -1
    if a.ndim == 0:
        raise AxisError(axis, 0)
    return _wrap(
        _fxvm_numpy.sort_values(a._t if a._info.mask is None else _compute(a), _axis(axis, a.ndim)).to(a._info.storage),
        a._info,
    )


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    a = asarray(a)
    if axis is None:
        a = a.ravel()
        axis = -1
    # numpy's default quicksort is not stable; equal keys keep their order
    # here, which is what its stable sort (and most callers) expect.
    return _wrap(torch.sort(_compute(a), _axis(axis, a.ndim), stable=True).indices, _INT64)


def partition(a, kth, axis=-1, kind="introselect", order=None):
    return sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    return argsort(a, axis)


def lexsort(keys, axis=-1):
    keys = [asarray(k) for k in keys]
    order = torch.arange(keys[0].shape[axis])
    for k in keys:
        t = _compute(k)[order]
        order = order[torch.sort(t, stable=True).indices]
    return _wrap(order, _INT64)


def searchsorted(a, v, side="left", sorter=None):
    a = asarray(a)
    vv = asarray(v)
    info = _dtypes._resolve([a._info, vv._info], [])
    ta = _from_compute(_compute(a), info).to(info.compute)
    if sorter is not None:
        ta = ta[_compute(asarray(sorter)).to(torch.int64)]
    tv = _from_compute(_compute(vv), info).to(info.compute)
    return _result(torch.searchsorted(ta, tv, right=(side == "right")), _INT64)


def unique(
    ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True, sorted=True
):
    a = asarray(ar)
    if axis is not None:
        raise NotImplementedError("fxvm's numpy finds unique values of the flattened array only (axis=None)")
    flat = _compute(a).reshape(-1)
    order = torch.sort(flat, stable=True)
    s = order.values
    if s.numel():
        first = torch.ones(s.shape, dtype=torch.bool)
        first[1:] = s[1:] != s[:-1]
        if a._info.kind == "f" and equal_nan:
            nan = torch.isnan(s)
            first[1:] = first[1:] & ~(nan[1:] & nan[:-1])
    else:
        first = torch.zeros(0, dtype=torch.bool)
    values = _wrap(_from_compute(s[first], a._info), a._info)
    out = [values]
    if return_index:
        out.append(_wrap(order.indices[first], _INT64))
    if return_inverse:
        group = torch.cumsum(first.to(torch.int64), 0) - 1
        inv = torch.zeros(flat.shape, dtype=torch.int64)
        inv[order.indices] = group
        out.append(_wrap(inv.reshape(a.shape) if a.ndim != 1 else inv, _INT64))
    if return_counts:
        starts = torch.nonzero(first).reshape(-1)
        ends = torch.cat([starts[1:], torch.tensor([s.numel()])])
        out.append(_wrap(ends - starts, _INT64))
    return out[0] if builtins.len(out) == 1 else builtins.tuple(out)


def unique_values(x):
    return unique(x)


def unique_counts(x):
    return unique(x, return_counts=True)


def bincount(x, weights=None, minlength=0):
    a = asarray(x)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    t = _compute(a).to(torch.int64)
    if t.numel() and builtins.bool((t < 0).any()):
        raise ValueError("'list' argument must have no negative elements")
    if weights is not None:
        w = _compute(asarray(weights)).to(torch.float64)
        return _wrap(torch.bincount(t, w, minlength), _FLOAT64)
    return _wrap(torch.bincount(t, minlength=minlength), _INT64)


def digitize(x, bins, right=False):
    b = asarray(bins)
    xa = asarray(x)
    tb = _compute(b).to(torch.float64)
    tx = _compute(xa).to(torch.float64)
    if tb.numel() > 1 and builtins.bool((tb[1:] < tb[:-1]).all()):
        n = tb.numel()
        r = n - torch.searchsorted(tb.flip(0), tx, right=not right)
    else:
        r = torch.searchsorted(tb, tx, right=not right)
    return _result(r, _INT64)


def histogram(a, bins=10, range=None, density=None, weights=None):
    a = asarray(a)
    t = _compute(a).to(torch.float64).reshape(-1)
    if isinstance(bins, (builtins.int, _dtypes.integer)):
        lo, hi = (
            (builtins.float(t.min()), builtins.float(t.max())) if range is None and t.numel() else (range or (0.0, 1.0))
        )
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        from numpy._creation import linspace

        edges = linspace(lo, hi, builtins.int(bins) + 1)
    else:
        edges = asarray(bins).astype(float)
    e = edges._t
    idx = torch.searchsorted(e, t, right=True) - 1
    n = e.numel() - 1
    idx = torch.where(t == e[-1], torch.full_like(idx, n - 1), idx)
    valid = (idx >= 0) & (idx < n)
    w = _compute(asarray(weights)).to(torch.float64).reshape(-1)[valid] if weights is not None else None
    counts = torch.bincount(idx[valid], w, minlength=n)
    if density:
        widths = e[1:] - e[:-1]
        return _wrap(counts.to(torch.float64) / (counts.sum() * widths), _FLOAT64), edges
    return _wrap(counts, _FLOAT64 if weights is not None else _INT64), edges


def interp(x, xp, fp, left=None, right=None, period=None):
    tx = _compute(asarray(x)).to(torch.float64)
    txp = _compute(asarray(xp)).to(torch.float64)
    tfp = _compute(asarray(fp)).to(torch.float64)
    i = torch.searchsorted(txp, tx, right=True).clamp(1, txp.numel() - 1)
    x0, x1 = txp[i - 1], txp[i]
    y0, y1 = tfp[i - 1], tfp[i]
    slope = (y1 - y0) / (x1 - x0)
    r = slope * (tx - x0) + y0
    r = torch.where(tx == x1, y1, r)
    r = torch.where(tx < txp[0], torch.tensor(builtins.float(tfp[0]) if left is None else left, dtype=torch.float64), r)
    r = torch.where(
        tx > txp[-1], torch.tensor(builtins.float(tfp[-1]) if right is None else right, dtype=torch.float64), r
    )
    return _result(r, _FLOAT64)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    from numpy._ufuncs import not_equal, subtract

    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, a.ndim)
    if prepend is not None or append is not None:

        def edge(extra):
            # A number stands for a slab of it, one thick along the axis.
            e = asarray(extra)
            if e.ndim == 0:
                shape = builtins.list(a.shape)
                shape[ax] = 1
                e = broadcast_to(e, shape)
            return e

        parts = ([edge(prepend)] if prepend is not None else []) + [a] + ([edge(append)] if append is not None else [])
        a = concatenate(parts, ax)
    for _ in builtins.range(n):
        hi = [slice(None)] * a.ndim
        lo = [slice(None)] * a.ndim
        hi[ax] = slice(1, None)
        lo[ax] = slice(None, -1)
        op = not_equal if a._info.kind == "b" else subtract
        a = op(a[builtins.tuple(hi)], a[builtins.tuple(lo)])
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    return diff(asarray(ary).ravel())


def gradient(f, *varargs, axis=None, edge_order=1):
    a = asarray(f).astype(float)
    if a.ndim != 1:
        raise NotImplementedError("fxvm's numpy takes gradients of 1-d arrays")
    h = builtins.float(varargs[0]) if varargs else 1.0
    t = a._t
    g = torch.empty_like(t)
    g[1:-1] = (t[2:] - t[:-2]) / (2 * h)
    g[0] = (t[1] - t[0]) / h
    g[-1] = (t[-1] - t[-2]) / h
    return _wrap(g, a._info)


def put(a, ind, v, mode="raise"):
    a.put(ind, v, mode)


def putmask(a, mask, values):
    """Sets ``a.flat[i] = values[i % len(values)]`` where ``mask`` holds."""
    where_ = torch.nonzero(_compute(asarray(mask, dtype=bool)).reshape(-1)).reshape(-1)
    v = asarray(values).ravel()
    if where_.numel() and v.size:
        a.put(_wrap(where_, _INT64), v[_wrap(where_ % v.size, _INT64)])


def place(arr, mask, vals):
    """Sets the masked elements of ``arr`` to ``vals`` in order, cycling."""
    where_ = torch.nonzero(_compute(asarray(mask, dtype=bool)).reshape(-1)).reshape(-1)
    v = asarray(vals).ravel()
    if where_.numel():
        if v.size == 0:
            raise ValueError("Cannot insert from an empty array!")
        arr.put(_wrap(where_, _INT64), v[_wrap(torch.arange(where_.numel()) % v.size, _INT64)])


def fill_diagonal(a, val, wrap=False):
    n = builtins.min(a.shape)
    idx = builtins.tuple(_wrap(torch.arange(n), _INT64) for _ in a.shape)
    a[idx] = val


def diag_indices(n, ndim=2):
    i = _wrap(torch.arange(n), _INT64)
    return (i,) * ndim


def diag_indices_from(arr):
    return diag_indices(arr.shape[0], arr.ndim)


def _tri_indices(n, k, m, upper):
    m = n if m is None else m
    mask = torch.ones((n, m), dtype=torch.bool)
    mask = mask.triu(k) if upper else mask.tril(k)
    rows, cols = torch.nonzero(mask, as_tuple=True)
    return _wrap(rows, _INT64), _wrap(cols, _INT64)


def tril_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, False)


def triu_indices(n, k=0, m=None):
    return _tri_indices(n, k, m, True)


def tril_indices_from(arr, k=0):
    return tril_indices(arr.shape[-2], k, arr.shape[-1])


def triu_indices_from(arr, k=0):
    return triu_indices(arr.shape[-2], k, arr.shape[-1])


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    idx = [_compute(asarray(i)).to(torch.int64) for i in multi_index]
    flat = torch.zeros_like(idx[0])
    for i, d in zip(idx, dims):
        if mode == "raise" and i.numel() and (builtins.bool((i < 0).any()) or builtins.bool((i >= d).any())):
            raise ValueError("invalid entry in coordinates array")
        flat = flat * d + (i % d if mode == "wrap" else i.clamp(0, d - 1) if mode == "clip" else i)
    return _result(flat, _INT64)


def unravel_index(indices, shape, order="C"):
    i = _compute(asarray(indices)).to(torch.int64)
    total = 1
    for d in shape:
        total *= d
    if i.numel() and (builtins.bool((i < 0).any()) or builtins.bool((i >= total).any())):
        raise ValueError(f"index {builtins.int(i.max())} is out of bounds for array with size {total}")
    out = []
    for d in reversed(builtins.tuple(shape)):
        out.append(_result(i % d, _INT64))
        i = i // d
    return builtins.tuple(reversed(out))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    return histogram(a, bins, range, weights=weights)[1]


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    nx, ny = (bins, bins) if isinstance(bins, builtins.int) else bins
    _, ex = histogram(x, nx, None if range is None else range[0])
    _, ey = histogram(y, ny, None if range is None else range[1])
    tx = _compute(asarray(x)).to(torch.float64)
    ty = _compute(asarray(y)).to(torch.float64)
    ix = (torch.searchsorted(ex._t, tx, right=True) - 1).clamp(0, ex.size - 2)
    iy = (torch.searchsorted(ey._t, ty, right=True) - 1).clamp(0, ey.size - 2)
    counts = torch.bincount(ix * (ey.size - 1) + iy, minlength=(ex.size - 1) * (ey.size - 1))
    return _wrap(counts.to(torch.float64).reshape(ex.size - 1, ey.size - 1), _FLOAT64), ex, ey


def unique_inverse(x):
    values, inverse = unique(x, return_inverse=True)
    return values, inverse.reshape(asarray(x).shape)


def unique_all(x):
    values, index, inverse, counts = unique(x, return_index=True, return_inverse=True, return_counts=True)
    return values, index, inverse.reshape(asarray(x).shape), counts


def piecewise(x, condlist, funclist, *args, **kw):
    x = asarray(x)
    if isinstance(condlist, ndarray) or not isinstance(condlist, (builtins.list, builtins.tuple)):
        condlist = [condlist]
    conds = [asarray(c, dtype=bool) for c in condlist]
    if builtins.len(funclist) == builtins.len(conds) + 1:
        rest = ~builtins.sum((c.astype(int) for c in conds), asarray(0)).astype(bool)
        conds.append(rest)
    out = _wrap(torch.zeros(x.shape, dtype=x._info.storage), x._info)
    for c, f in zip(conds, funclist):
        if callable(f):
            vals = x[c]
            if vals.size:
                out[c] = f(vals, *args, **kw)
        else:
            out[c] = f
    return out


# `from numpy.<this> import *` exports what this module defines, not what it imports.
__all__ = [n for n, v in globals().items() if not n.startswith("_") and getattr(v, "__module__", None) == __name__]
