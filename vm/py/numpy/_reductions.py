"""Reductions and scans with numpy's result types: ``sum``/``prod`` of small
integers in int64 (unsigned in uint64), ``mean``/``var``/``std`` of
integers in float64, ``max``/``min`` keeping the dtype and refusing empty
input, ``median``/``percentile``/``quantile`` by numpy's interpolation."""

import builtins

import torch

from numpy._array import _BOOL, _FLOAT64, _INT64, _axes, _axis, _compute, _from_compute, _result, _wrap
from numpy._convert import asarray
from numpy._dtypes import _BY_NAME, _info

_NOVALUE = object()


def _accumulator(info):
    """The dtype ``sum``/``prod``/``cumsum`` give for ``info`` (numpy's)."""
    if info.kind in "bi":
        return _INT64 if info.kind == "b" or info.itemsize < 8 else info
    if info.kind == "u":
        return _BY_NAME["uint64"]
    return info


def _values(a, info):
    t = _compute(a)
    if t.dtype is not info.compute:
        t = t.to(info.compute)
    return t


def _dims(a, axis):
    if axis is None:
        return None
    return _axes(axis, a.ndim)


def _finish(t, info, out, keep_0d=False):
    if out is not None:
        out._t.copy_(_from_compute(t, out._info).expand(out._t.shape))
        return out
    return _result(t, info, keep_0d)


def _apply(t, dims, keepdims, fn):
    if dims is None:
        r = fn(t.reshape(-1), 0)
        if keepdims:
            r = r.reshape((1,) * t.dim())
        return r
    if builtins.len(dims) == 0:
        return t
    if builtins.len(dims) == 1:
        return fn(t, dims[0], keepdims)
    # Several axes: move them last, flatten them, reduce once.
    rest = [d for d in builtins.range(t.dim()) if d not in dims]
    moved = t.permute(*rest, *dims).reshape([t.shape[d] for d in rest] + [-1])
    r = fn(moved, -1, False)
    if keepdims:
        shape = [1 if d in dims else t.shape[d] for d in builtins.range(t.dim())]
        r = r.reshape(shape)
    return r


def _call(fn):
    return lambda t, d, keep=False: fn(t, d, keepdim=keep)


def _where_fill(a, where, fill):
    if where is True:
        return a
    mask = asarray(where)._t.to(torch.bool)
    t = a._t
    return _wrap(torch.where(mask, t, torch.full((), fill, dtype=t.dtype)), a._info)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    a = asarray(a)
    info = _info(dtype) if dtype is not None else _accumulator(a._info)
    if info.kind == "b":
        info = _INT64 if dtype is None else info
    a = _where_fill(a, where, 0)
    t = _apply(_values(a, info) if info.kind != "b" else _compute(a), _dims(a, axis), keepdims, _call(torch.sum))
    if info.kind == "b":
        t = t != 0
    if initial is not _NOVALUE:
        t = t + initial
    return _finish(t, info, out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    a = asarray(a)
    info = _info(dtype) if dtype is not None else _accumulator(a._info)
    a = _where_fill(a, where, 1)
    t = _apply(_values(a, info), _dims(a, axis), keepdims, _call(torch.prod))
    if initial is not _NOVALUE:
        t = t * initial
    return _finish(t, info, out)


def _mean_info(info, dtype):
    if dtype is not None:
        return _info(dtype)
    return info if info.kind == "f" else _FLOAT64


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = asarray(a)
    info = _mean_info(a._info, dtype)
    t = _values(a, info)
    if where is not True:
        mask = asarray(where)._t.to(torch.bool).expand(t.shape)
        dims = _dims(a, axis)
        total = _apply(torch.where(mask, t, torch.zeros((), dtype=t.dtype)), dims, keepdims, _call(torch.sum))
        count = _apply(mask.to(t.dtype), dims, keepdims, _call(torch.sum))
        return _finish(total / count, info, out)
    return _finish(_apply(t, _dims(a, axis), keepdims, _call(torch.mean)), info, out)


def _var(a, axis, dtype, out, ddof, keepdims, root, mean=None, correction=None):
    a = asarray(a)
    if correction is not None:
        ddof = correction
    info = _mean_info(a._info, dtype)
    t = _values(a, info)

    def fn(x, d, keep=False):
        m = x.mean(d, keepdim=True)
        dev = x - m
        n = x.shape[d]
        r = (dev * dev).sum(d, keepdim=keep) / builtins.max(n - ddof, 0)
        return r.sqrt() if root else r

    return _finish(_apply(t, _dims(a, axis), keepdims, fn), info, out)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    return _var(a, axis, dtype, out, ddof, keepdims, False, mean, correction)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None, correction=None):
    return _var(a, axis, dtype, out, ddof, keepdims, True, mean, correction)


def _extreme(name, fn, a, axis, out, keepdims, initial, where):
    a = asarray(a)
    dims = _dims(a, axis)
    empty = a.size == 0 if dims is None else builtins.any(a.shape[d] == 0 for d in dims)
    if empty and initial is _NOVALUE:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    t = _compute(a)
    if where is not True:
        if initial is _NOVALUE:
            raise ValueError(
                f"reduction operation '{name}' does not have an identity, so to use a where mask one has to specify 'initial'"
            )
        mask = asarray(where)._t.to(torch.bool)
        t = torch.where(mask, t, torch.full((), initial, dtype=t.dtype))
    if empty:
        shape = (
            [1 if (dims is None or d in dims) else s for d, s in builtins.enumerate(a.shape)]
            if keepdims
            else [s for d, s in builtins.enumerate(a.shape) if dims is not None and d not in dims]
        )
        r = torch.full(shape, initial, dtype=t.dtype)
    else:
        r = _apply(t, dims, keepdims, _call(fn))
        if initial is not _NOVALUE:
            r = (torch.maximum if name == "maximum" else torch.minimum)(r, torch.tensor(initial, dtype=r.dtype))
    return _finish(r, a._info, out)


def amax(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _extreme("maximum", torch.amax, a, axis, out, keepdims, initial, where)


def amin(a, axis=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return _extreme("minimum", torch.amin, a, axis, out, keepdims, initial, where)


max = amax
min = amin


def ptp(a, axis=None, out=None, keepdims=False):
    from numpy._ufuncs import subtract

    return subtract(amax(a, axis, None, keepdims), amin(a, axis, None, keepdims), out=out)


def _arg(name, fn, a, axis, out, keepdims):
    a = asarray(a)
    if a.size == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    t = _compute(a)
    if t.dtype is torch.bool:
        t = t.to(torch.uint8)
    if axis is None:
        r = fn(t.reshape(-1))
        if keepdims:
            r = r.reshape((1,) * a.ndim)
    else:
        r = fn(t, _axis(axis, a.ndim), keepdim=keepdims)
    return _finish(r, _INT64, out)


def argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg("argmax", torch.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg("argmin", torch.argmin, a, axis, out, keepdims)


def _logical(fn, a, axis, out, keepdims, where):
    a = asarray(a)
    t = _compute(a) != 0 if a._info.kind != "b" else a._t
    if where is not True:
        t = torch.where(asarray(where)._t.to(torch.bool), t, torch.tensor(fn is torch.all))
    return _finish(_apply(t, _dims(a, axis), keepdims, _call(fn)), _BOOL, out)


def all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _logical(torch.all, a, axis, out, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _logical(torch.any, a, axis, out, keepdims, where)


def count_nonzero(a, axis=None, *, keepdims=False):
    a = asarray(a)
    t = (_compute(a) != 0).to(torch.int64)
    return _result(_apply(t, _dims(a, axis), keepdims, _call(torch.sum)), _INT64)


def _scan(a, axis, dtype, out, fn):
    a = asarray(a)
    info = _info(dtype) if dtype is not None else _accumulator(a._info)
    t = _values(a, info) if info.kind != "b" else _compute(a).to(torch.int64)
    if axis is None:
        t = t.reshape(-1)
        axis = 0
    r = fn(t, _axis(axis, t.dim()))
    return _finish(r, info, out, keep_0d=True)


def cumsum(a, axis=None, dtype=None, out=None):
    return _scan(a, axis, dtype, out, lambda t, d: torch.cumsum(t, d))


def cumprod(a, axis=None, dtype=None, out=None):
    return _scan(a, axis, dtype, out, lambda t, d: torch.cumprod(t, d))


cumulative_sum = cumsum
cumulative_prod = cumprod


def _nan_fill(a, fill):
    a = asarray(a)
    if a._info.kind != "f":
        return a
    t = a._t
    return _wrap(torch.where(torch.isnan(t), torch.full((), fill, dtype=t.dtype), t), a._info)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return sum(_nan_fill(a, 0), axis, dtype, out, keepdims, initial, where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=_NOVALUE, where=True):
    return prod(_nan_fill(a, 1), axis, dtype, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = asarray(a)
    if a._info.kind != "f":
        return mean(a, axis, dtype, out, keepdims)
    return mean(a, axis, dtype, out, keepdims, where=~torch.isnan(a._t) if where is True else where)


def _nan_extreme(a, fill, fn, axis, out, keepdims):
    a = asarray(a)
    if a._info.kind != "f":
        return fn(a, axis, out, keepdims)
    return fn(_nan_fill(a, fill), axis, out, keepdims)


def nanmax(a, axis=None, out=None, keepdims=False, **kwargs):
    return _nan_extreme(a, float("-inf"), amax, axis, out, keepdims)


def nanmin(a, axis=None, out=None, keepdims=False, **kwargs):
    return _nan_extreme(a, float("inf"), amin, axis, out, keepdims)


def nanargmax(a, axis=None, out=None, *, keepdims=False):
    return argmax(_nan_fill(a, float("-inf")), axis, out, keepdims=keepdims)


def nanargmin(a, axis=None, out=None, *, keepdims=False):
    return argmin(_nan_fill(a, float("inf")), axis, out, keepdims=keepdims)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    a = asarray(a)
    keep = a[~isnan_array(a)] if axis is None else a
    return var(keep, axis, dtype, out, ddof, keepdims)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kwargs):
    a = asarray(a)
    keep = a[~isnan_array(a)] if axis is None else a
    return std(keep, axis, dtype, out, ddof, keepdims)


def isnan_array(a):
    return _wrap(torch.isnan(a._t) if a._info.kind == "f" else torch.zeros(a.shape, dtype=torch.bool), _BOOL)


def _lerp(lo, hi, t):
    """numpy's interpolation between neighbours (exact at both ends)."""
    diff = hi - lo
    return torch.where(t >= 0.5, hi - diff * (1 - t), lo + diff * t)


def _sortable(a, axis):
    """``a``'s values as floats (integers in float64) and the axis to sort
    along: the flattened array's when ``axis`` is None."""
    info = a._info if a._info.kind == "f" else _FLOAT64
    t = _values(a, info)
    if axis is None:
        return info, t.reshape(-1), 0
    return info, t, _axis(axis, t.dim())


def _quantile(a, q, axis, keepdims, method="linear"):
    a = asarray(a)
    info, t, axis_ = _sortable(a, axis)
    t = t.movedim(axis_, -1)
    s = torch.sort(t, -1).values
    n = s.shape[-1]
    qa = asarray(q)
    qt = _compute(qa).to(torch.float64)
    if builtins.bool(((qt < 0) | (qt > 1)).any()):
        raise ValueError("Quantiles must be in the range [0, 1]")
    pos = qt * (n - 1)
    if method == "linear":
        lo = torch.floor(pos).to(torch.int64)
        hi = torch.clamp(lo + 1, max=n - 1)
        frac = (pos - lo.to(torch.float64)).to(s.dtype)
    elif method in ("lower", "higher", "nearest", "midpoint"):
        base = {"lower": torch.floor, "higher": torch.ceil, "nearest": torch.round, "midpoint": torch.floor}[method](
            pos
        ).to(torch.int64)
        lo = base
        hi = torch.clamp(torch.ceil(pos).to(torch.int64), max=n - 1) if method == "midpoint" else base
        frac = torch.full(pos.shape, 0.5 if method == "midpoint" else 0.0, dtype=s.dtype)
        if method == "midpoint":
            frac = torch.where(lo == hi, torch.zeros_like(frac), frac)
    else:
        raise ValueError(f"'{method}' is not a valid method.")
    flat_q = lo.reshape(-1)
    lows = s.index_select(-1, flat_q)
    highs = s.index_select(-1, hi.reshape(-1))
    r = _lerp(lows, highs, frac.reshape(-1))
    has_nan = torch.isnan(s).any(-1, keepdim=True)
    r = torch.where(has_nan, torch.full((), float("nan"), dtype=r.dtype), r)
    r = r.movedim(-1, 0).reshape(qa.shape + r.shape[:-1])
    if keepdims:
        if axis is None:
            r = r.reshape(qa.shape + (1,) * a.ndim)
        else:
            r = r.unsqueeze(qa.ndim + axis_)
    return _result(r, info)


def quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    return _quantile(a, q, axis, keepdims, interpolation or method)


def percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    weights=None,
    interpolation=None,
):
    from numpy._ufuncs import true_divide

    qa = asarray(q)
    if builtins.bool(asarray((qa < 0) | (qa > 100)).any()):
        raise ValueError("Percentiles must be in the range [0, 100]")
    return _quantile(a, true_divide(qa, 100), axis, keepdims, interpolation or method)


def nanquantile(a, q, axis=None, **kwargs):
    a = asarray(a)
    return quantile(a[~isnan_array(a)] if axis is None else a, q, axis, **kwargs)


def nanpercentile(a, q, axis=None, **kwargs):
    a = asarray(a)
    return percentile(a[~isnan_array(a)] if axis is None else a, q, axis, **kwargs)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = asarray(a)
    info, t, d = _sortable(a, axis)
    s = torch.sort(t, d).values
    n = s.shape[d]
    if n == 0:
        return _result(
            torch.full([x for i, x in builtins.enumerate(s.shape) if i != d], float("nan"), dtype=s.dtype), info
        )
    mid = n // 2
    upper = s.select(d, mid)
    r = upper if n % 2 else (s.select(d, mid - 1) + upper) / 2
    r = torch.where(torch.isnan(s).any(d), torch.full((), float("nan"), dtype=r.dtype), r)
    if keepdims:
        r = r.reshape((1,) * a.ndim) if axis is None else r.unsqueeze(d)
    return _finish(r, info, out)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    a = asarray(a)
    return median(a[~isnan_array(a)] if axis is None else a, axis, out, keepdims=keepdims)


def average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    from numpy._ufuncs import multiply, true_divide

    a = asarray(a)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        scl = _result(
            torch.tensor(a.size / builtins.max(avg.size if hasattr(avg, "size") else 1, 1), dtype=torch.float64),
            _FLOAT64,
        )
    else:
        w = asarray(weights)
        if w.shape != a.shape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            w = w.reshape([w.size if i == _axis(axis, a.ndim) else 1 for i in builtins.range(a.ndim)])
        scl = sum(w * _ones_like(a), axis, keepdims=keepdims)
        if builtins.bool(any(asarray(scl) == 0)):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = true_divide(sum(multiply(a, w), axis, keepdims=keepdims), scl)
    return (avg, scl) if returned else avg


def _ones_like(a):
    return _wrap(torch.ones(a.shape, dtype=a._info.storage), a._info)


def ufunc_reduce(uf, array, axis, dtype, out, keepdims, initial, where):
    name = uf.__name__
    simple = {"add": sum, "multiply": prod}
    if name in simple:
        return simple[name](array, axis, dtype, out, keepdims, initial, where)
    if name in ("maximum", "minimum"):
        return (amax if name == "maximum" else amin)(array, axis, out, keepdims, initial, where)
    if name in ("logical_and", "logical_or"):
        return (all if name == "logical_and" else any)(array, axis, out, keepdims)
    a = asarray(array)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    d = _axis(axis, a.ndim)
    moved = a.swapaxes(0, d) if d else a
    if moved.shape[0] == 0:
        if initial is _NOVALUE and uf.identity is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        return _result(
            torch.full(moved.shape[1:], uf.identity if initial is _NOVALUE else initial, dtype=a._info.storage), a._info
        )
    acc = moved[0] if initial is _NOVALUE else uf(initial, moved[0])
    for i in builtins.range(1, moved.shape[0]):
        acc = uf(acc, moved[i], dtype=dtype)
    return acc


def ufunc_accumulate(uf, array, axis, dtype, out):
    name = uf.__name__
    if name == "add":
        return cumsum(array, axis, dtype, out)
    if name == "multiply":
        return cumprod(array, axis, dtype, out)
    a = asarray(array)
    d = _axis(axis, a.ndim)
    if name in ("maximum", "minimum"):
        fn = torch.cummax if name == "maximum" else torch.cummin
        return _finish(fn(_compute(a), d).values, a._info, out, keep_0d=True)
    moved = a.swapaxes(0, d) if d else a
    parts = [moved[0]]
    for i in builtins.range(1, moved.shape[0]):
        parts.append(uf(parts[-1], moved[i], dtype=dtype))
    from numpy._shape import stack

    r = stack(parts)
    return r.swapaxes(0, d) if d else r


def nancumsum(a, axis=None, dtype=None, out=None):
    return cumsum(_nan_fill(a, 0), axis, dtype, out)


def nancumprod(a, axis=None, dtype=None, out=None):
    return cumprod(_nan_fill(a, 1), axis, dtype, out)
