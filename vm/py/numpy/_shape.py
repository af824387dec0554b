"""Shape functions, joins and splits, padding, flips and rolls."""

import builtins

import torch

from numpy import _dtypes
from numpy._array import (
    _BOOL,
    _axes,
    _axis,
    _compute,
    _new_shape,
    _shape_arg,
    _wrap,
)
from numpy._convert import _common, array, asarray


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
    axes = sorted(
        _axes(axis, a.ndim + (builtins.len(axis) if isinstance(axis, (builtins.tuple, builtins.list)) else 1))
    )
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
        raise ValueError(
            f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is between arg 0 with shape {shapes[0]} and arg 1 with shape {shapes[1]}."
        ) from None


def broadcast_to(array, shape, subok=False):
    a = asarray(array)
    try:
        t = torch.broadcast_to(a._t, _shape_arg(shape))
    except RuntimeError:
        raise ValueError(
            f"operands could not be broadcast together with remapped shapes [original->remapped]: {a.shape} and requested shape {builtins.tuple(_shape_arg(shape))}"
        ) from None
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
    if isinstance(indices_or_sections, (builtins.int, _dtypes.integer)) and a.shape[axis] % builtins.int(
        indices_or_sections
    ):
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
    reps = _new_shape(reps)
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
    if not -n <= idx <= n:
        raise IndexError(f"index {idx} is out of bounds for axis {axis} with size {n}")
    idx = idx + n if idx < 0 else idx
    # As numpy for a single index: the values' first axis becomes `axis`
    # (a row inserted into columns is a column), then broadcast.
    v = moveaxis(array(values, dtype=a.dtype, ndmin=a.ndim), 0, axis)
    shape = builtins.list(a.shape)
    shape[axis] = v.shape[axis]
    v = broadcast_to(v, shape)
    key_lo = [slice(None)] * a.ndim
    key_hi = [slice(None)] * a.ndim
    key_lo[axis] = slice(0, idx)
    key_hi[axis] = slice(idx, None)
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


def block(arrays):
    """Assembles an array from nested lists of blocks (the last level joins last axes)."""

    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, builtins.list) and x else 0

    d = depth(arrays)

    def build(x, level):
        if not isinstance(x, builtins.list):
            return asarray(x)
        parts = [build(p, level + 1) for p in x]
        nd = builtins.max(builtins.max(p.ndim for p in parts), d)
        parts = [p.reshape((1,) * (nd - p.ndim) + p.shape) for p in parts]
        return concatenate(parts, axis=-(d - level))

    return build(arrays, 0)


def unstack(x, /, *, axis=0):
    a = asarray(x)
    return builtins.tuple(moveaxis(a, axis, 0)[i] for i in builtins.range(a.shape[axis]))


def resize(a, new_shape):
    a = asarray(a)
    shape = _new_shape(new_shape)
    n = 1
    for s in shape:
        n *= s
    flat = a.ravel()
    if flat.size == 0 or n == 0:
        return _wrap(torch.zeros(shape, dtype=a._info.storage), a._info)
    reps = -(-n // flat.size)
    return concatenate([flat] * reps)[:n].reshape(shape)


def matrix_transpose(x, /):
    a = asarray(x)
    if a.ndim < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {a.ndim}")
    return a.swapaxes(-1, -2)


def trim_zeros(filt, trim="fb", axis=None):
    a = asarray(filt)
    nz = torch.nonzero(_compute(a).reshape(-1)).reshape(-1)
    if nz.numel() == 0:
        return a[:0]
    lo = builtins.int(nz[0]) if "f" in trim.lower() else 0
    hi = builtins.int(nz[-1]) + 1 if "b" in trim.lower() else a.size
    return a[lo:hi]


# `from numpy.<this> import *` exports what this module defines, not what it imports.
__all__ = [n for n, v in globals().items() if not n.startswith("_") and getattr(v, "__module__", None) == __name__]
