"""numpy's array functions over torch ops: shape manipulation, joining and
splitting, selection, sorting and searching, products, comparisons."""

import builtins
import operator

import torch

from numpy import _dtypes
from numpy._array import (
    _BOOL,
    _FLOAT64,
    _INT64,
    AxisError,
    _axes,
    _axis,
    _compute,
    _from_compute,
    _result,
    _shape_arg,
    _wrap,
    asarray,
    ndarray,
)
from numpy._dtypes import _info


def _common(arrays, dtype=None):
    """Arrays converted to one storage dtype (numpy's promotion)."""
    arrays = [asarray(a) for a in arrays]
    info = _info(dtype) if dtype is not None else _dtypes._resolve([a._info for a in arrays], [])
    return [_from_compute(_compute(a), info) for a in arrays], info


# ---------------------------------------------------------------- shape


def shape(a):
    return asarray(a).shape


def ndim(a):
    return asarray(a).ndim


def size(a, axis=None):
    a = asarray(a)
    return a.size if axis is None else a.shape[axis]


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    return asarray(a).reshape(shape if shape is not None else newshape, order=order)


def ravel(a, order="C"):
    return asarray(a).ravel(order)


def transpose(a, axes=None):
    a = asarray(a)
    return a.transpose() if axes is None else a.transpose(axes)


def permute_dims(a, axes=None):
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    return asarray(a).swapaxes(axis1, axis2)


def moveaxis(a, source, destination):
    a = asarray(a)
    src = _axes(source, a.ndim)
    dst = _axes(destination, a.ndim)
    if builtins.len(src) != builtins.len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    return _wrap(a._t.movedim(src, dst), a._info, a if a._base is None else a._base)


def rollaxis(a, axis, start=0):
    a = asarray(a)
    axis = _axis(axis, a.ndim)
    start = start % (a.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def expand_dims(a, axis):
    a = asarray(a)
    axes = sorted(_axes(axis, a.ndim + (builtins.len(axis) if isinstance(axis, (builtins.tuple, builtins.list)) else 1)))
    t = a._t
    for ax in axes:
        t = t.unsqueeze(ax)
    return _wrap(t, a._info, a if a._base is None else a._base)


def squeeze(a, axis=None):
    return asarray(a).squeeze(axis)


def atleast_1d(*arys):
    res = [asarray(a) if asarray(a).ndim >= 1 else asarray(a).reshape(1) for a in arys]
    return res[0] if builtins.len(res) == 1 else builtins.tuple(res)


def atleast_2d(*arys):
    res = []
    for a in arys:
        a = asarray(a)
        res.append(a.reshape(1, 1) if a.ndim == 0 else a.reshape(1, -1) if a.ndim == 1 else a)
    return res[0] if builtins.len(res) == 1 else builtins.tuple(res)


def atleast_3d(*arys):
    res = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = a.reshape(1, 1, 1)
        elif a.ndim == 1:
            a = a.reshape(1, -1, 1)
        elif a.ndim == 2:
            a = a.reshape(a.shape + (1,))
        res.append(a)
    return res[0] if builtins.len(res) == 1 else builtins.tuple(res)


def broadcast_shapes(*shapes):
    try:
        return builtins.tuple(torch.broadcast_shapes(*[_shape_arg(s) for s in shapes]))
    except RuntimeError:
        raise ValueError(f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg 0 with shape {shapes[0]} and arg 1 with shape {shapes[1]}.") from None


def broadcast_to(array, shape, subok=False):
    a = asarray(array)
    try:
        t = torch.broadcast_to(a._t, _shape_arg(shape))
    except RuntimeError:
        raise ValueError(f"operands could not be broadcast together with remapped shapes [original->remapped]: {a.shape} and requested shape {builtins.tuple(_shape_arg(shape))}") from None
    return _wrap(t, a._info, a)


def broadcast_arrays(*args, subok=False):
    arrays = [asarray(a) for a in args]
    s = broadcast_shapes(*[a.shape for a in arrays])
    return builtins.tuple(broadcast_to(a, s) for a in arrays)


# ------------------------------------------------------- joining, splitting


def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    if arrays[0].ndim == 0:
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    tensors, info = _common(arrays, dtype)
    ax = _axis(axis, arrays[0].ndim)
    for i, a in builtins.enumerate(arrays[1:], 1):
        if a.ndim != arrays[0].ndim:
            raise ValueError(
                f"all the input arrays must have same number of dimensions, but the array at index 0 has {arrays[0].ndim} dimension(s) and the array at index {i} has {a.ndim} dimension(s)"
            )
        for d in builtins.range(a.ndim):
            if d != ax and a.shape[d] != arrays[0].shape[d]:
                raise ValueError(
                    f"all the input array dimensions except for the concatenation axis must match exactly, but along dimension {d}, the array at index 0 has size {arrays[0].shape[d]} and the array at index {i} has size {a.shape[d]}"
                )
    r = _wrap(torch.cat(tensors, ax), info)
    if out is not None:
        out[...] = r
        return out
    return r


concat = concatenate


def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    if builtins.len({a.shape for a in arrays}) != 1:
        raise ValueError("all input arrays must have the same shape")
    ax = _axis(axis, arrays[0].ndim + 1)
    return concatenate([a.reshape(a.shape[:ax] + (1,) + a.shape[ax:]) for a in arrays], ax, out, dtype=dtype)


def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype)


row_stack = vstack


def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, 0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup):
    return concatenate([atleast_3d(a) for a in tup], 2)


def column_stack(tup):
    arrays = []
    for v in tup:
        a = asarray(v)
        arrays.append(a.reshape(-1, 1) if a.ndim < 2 else a)
    return concatenate(arrays, 1)


def array_split(ary, indices_or_sections, axis=0):
    a = asarray(ary)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (builtins.int, _dtypes.integer)):
        sections = builtins.int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        points = [0]
        for s in sizes:
            points.append(points[-1] + s)
    else:
        points = [0] + [builtins.int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(points[:-1], points[1:]):
        key = [slice(None)] * a.ndim
        key[axis] = slice(lo, hi)
        out.append(a[builtins.tuple(key)])
    return out


def split(ary, indices_or_sections, axis=0):
    a = asarray(ary)
    if isinstance(indices_or_sections, (builtins.int, _dtypes.integer)) and a.shape[axis] % builtins.int(indices_or_sections):
        raise ValueError("array split does not result in an equal division")
    return array_split(a, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    a = asarray(ary)
    return split(a, indices_or_sections, 1 if a.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 2)


def tile(A, reps):
    a = asarray(A)
    reps = builtins.tuple(reps) if isinstance(reps, (builtins.tuple, builtins.list)) else (reps,)
    nd = builtins.max(a.ndim, builtins.len(reps))
    t = a._t.reshape((1,) * (nd - a.ndim) + a.shape)
    reps = (1,) * (nd - builtins.len(reps)) + reps
    return _wrap(t.repeat(*reps), a._info)


def repeat(a, repeats, axis=None):
    a = asarray(a)
    t = a._t
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    r = asarray(repeats)
    counts = _compute(r).to(torch.int64) if r.ndim else builtins.int(r.item())
    return _wrap(torch.repeat_interleave(t, counts, dim=_axis(axis, t.dim())), a._info)


def append(arr, values, axis=None):
    arr = asarray(arr)
    if axis is None:
        return concatenate([arr.ravel(), asarray(values).ravel()])
    return concatenate([arr, values], axis)


def insert(arr, obj, values, axis=None):
    a = asarray(arr)
    if axis is None:
        a = a.ravel()
        axis = 0
    n = a.shape[axis]
    idx = obj if isinstance(obj, builtins.int) else None
    if idx is None:
        raise NotImplementedError("fxvm's numpy inserts at one index at a time")
    idx = idx + n if idx < 0 else idx
    v = asarray(values, dtype=a.dtype)
    key_lo = [slice(None)] * a.ndim
    key_hi = [slice(None)] * a.ndim
    key_lo[axis] = slice(0, idx)
    key_hi[axis] = slice(idx, None)
    shape = builtins.list(a.shape)
    shape[axis] = 1
    v = broadcast_to(v.reshape(v.shape if v.ndim == a.ndim else (1,) * (a.ndim - v.ndim) + v.shape) if v.ndim <= a.ndim else v, shape) if v.size == 1 or v.ndim < a.ndim else v
    return concatenate([a[builtins.tuple(key_lo)], v, a[builtins.tuple(key_hi)]], axis)


def delete(arr, obj, axis=None):
    a = asarray(arr)
    if axis is None:
        a = a.ravel()
        axis = 0
    n = a.shape[axis]
    drop = asarray(obj)
    keep = torch.ones(n, dtype=torch.bool)
    if isinstance(obj, slice):
        keep[obj] = False
    else:
        idx = _compute(drop).reshape(-1).to(torch.int64)
        keep[idx] = False
    key = [slice(None)] * a.ndim
    key[axis] = _wrap(keep, _BOOL)
    return a[builtins.tuple(key)]


def pad(array, pad_width, mode="constant", **kwargs):
    a = asarray(array)
    pw = asarray(pad_width).tolist()
    if not isinstance(pw, builtins.list):
        pw = [[pw, pw]] * a.ndim
    elif not isinstance(pw[0], builtins.list):
        pw = [pw if builtins.len(pw) == 2 else [pw[0], pw[0]]] * a.ndim
    elif builtins.len(pw) == 1:
        pw = pw * a.ndim
    if mode == "constant":
        cv = kwargs.get("constant_values", 0)
        cvs = asarray(cv).tolist()
        if not isinstance(cvs, builtins.list):
            cvs = [[cvs, cvs]] * a.ndim
        elif not isinstance(cvs[0], builtins.list):
            cvs = [cvs] * a.ndim
        out = a
        for d, ((before, after), (vb, va)) in builtins.enumerate(zip(pw, cvs)):
            parts = []
            if before:
                s = builtins.list(out.shape)
                s[d] = before
                parts.append(_full_of(s, vb, out._info))
            parts.append(out)
            if after:
                s = builtins.list(out.shape)
                s[d] = after
                parts.append(_full_of(s, va, out._info))
            out = concatenate(parts, d) if builtins.len(parts) > 1 else out
        return out
    if mode in ("edge", "reflect", "symmetric", "wrap"):
        out = a
        for d, (before, after) in builtins.enumerate(pw):
            n = out.shape[d]
            idx = torch.arange(-before, n + after)
            if mode == "edge":
                idx = idx.clamp(0, n - 1)
            elif mode == "wrap":
                idx = idx % n
            elif mode == "reflect":
                period = 2 * (n - 1) if n > 1 else 1
                idx = idx.abs() % period
                idx = torch.where(idx >= n, period - idx, idx)
            else:
                period = 2 * n
                idx = torch.where(idx < 0, -idx - 1, idx) % period
                idx = torch.where(idx >= n, period - 1 - idx, idx)
            out = _wrap(out._t.index_select(d, idx), out._info)
        return out
    raise NotImplementedError(f"fxvm's numpy pads in modes constant, edge, reflect, symmetric and wrap (not {mode!r})")


def _full_of(shape, value, info):
    out = _wrap(torch.zeros(shape, dtype=info.storage), info)
    out[...] = value
    return out


def flip(m, axis=None):
    m = asarray(m)
    dims = builtins.list(builtins.range(m.ndim)) if axis is None else builtins.list(_axes(axis, m.ndim))
    return _wrap(m._t.flip(dims), m._info)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return _wrap(a._t.reshape(-1).roll(shift, 0).reshape(a.shape), a._info)
    return _wrap(a._t.roll(shift, axis), a._info)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    return _wrap(torch.rot90(m._t, k, builtins.list(axes)), m._info)


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
    c = asarray(condition, dtype=bool)
    if axis is None:
        return a.ravel()[c]
    key = [slice(None)] * a.ndim
    key[axis] = c
    return a[builtins.tuple(key)]


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
    shape = builtins.list(torch.broadcast_shapes(a.shape[:d] + (1,) + a.shape[d + 1 :], idx.shape[:d] + (1,) + idx.shape[d + 1 :]))
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

        return multiply(_wrap(torch.round(_compute(a).to(torch.float64) / scale).to(torch.int64), _INT64), scale).astype(a.dtype)
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
    return _wrap(torch.sort(a._t if a._info.mask is None else _compute(a), _axis(axis, a.ndim), stable=True).values.to(a._info.storage), a._info)


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


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True, sorted=True):
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
        lo, hi = (builtins.float(t.min()), builtins.float(t.max())) if range is None and t.numel() else (range or (0.0, 1.0))
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
    r = torch.where(tx > txp[-1], torch.tensor(builtins.float(tfp[-1]) if right is None else right, dtype=torch.float64), r)
    return _result(r, _FLOAT64)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    from numpy._ufuncs import not_equal, subtract

    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    ax = _axis(axis, a.ndim)
    if prepend is not None or append is not None:
        parts = []
        for extra in (prepend,):
            if extra is not None:
                e = asarray(extra)
                if e.ndim == 0:
                    s = builtins.list(a.shape)
                    s[ax] = 1
                    e = broadcast_to(e, s)
                parts.append(e)
        parts.append(a)
        if append is not None:
            e = asarray(append)
            if e.ndim == 0:
                s = builtins.list(a.shape)
                s[ax] = 1
                e = broadcast_to(e, s)
            parts.append(e)
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


def operator_index(x):
    return operator.index(x)
