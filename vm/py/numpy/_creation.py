"""Array creation: ``zeros``/``ones``/``empty``/``full`` and their
``*_like``, ``arange``, ``linspace``/``logspace``/``geomspace``, ``eye``,
``identity``, ``meshgrid``, ``tri``, ``diag``, ``fromfunction``."""

import builtins
import math

import torch

from numpy import _dtypes
from numpy._array import _FLOAT64, _INT64, _compute, _from_compute, _new_shape, _result, _wrap
from numpy._convert import array, asarray
from numpy._dtypes import _info


def _filled(shape, value, info):
    shape = _new_shape(shape, info.itemsize)
    return _wrap(
        torch.full(shape, value, dtype=info.storage) if value else torch.zeros(shape, dtype=info.storage), info
    )


def zeros(shape, dtype=float, order="C", *, device=None, like=None):
    return _filled(shape, 0, _info(dtype))


def empty(shape, dtype=float, order="C", *, device=None, like=None):
    return _filled(shape, 0, _info(dtype))


def ones(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled(shape, 1, _info(dtype))


def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    value = asarray(fill_value)
    info = value._info if dtype is None else _info(dtype)
    shape = _new_shape(shape)
    out = _wrap(torch.zeros(shape, dtype=info.storage), info)
    out[...] = fill_value if dtype is not None else value
    return out


def _like(a, dtype, shape):
    a = asarray(a)
    return (a.shape if shape is None else shape), (a._info if dtype is None else _info(dtype))


def zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, info = _like(a, dtype, shape)
    return _filled(shape, 0, info)


def empty_like(prototype, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, info = _like(prototype, dtype, shape)
    return _filled(shape, 0, info)


def ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, info = _like(a, dtype, shape)
    return _filled(shape, 1, info)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    shape, info = _like(a, dtype, shape)
    return full(shape, fill_value, info.dtype)


def _number(x):
    if isinstance(x, _dtypes.generic):
        return x.item(), x._info
    if isinstance(x, builtins.bool):
        return builtins.int(x), None
    return x, None


def arange(start=None, stop=None, step=None, dtype=None, *, device=None, like=None):
    if stop is None and start is None:
        raise TypeError("arange() requires stop to be specified.")
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    values = [_number(x) for x in (start, stop, step)]
    (start, s_info), (stop, e_info), (step, p_info) = values
    if step == 0:
        raise ZeroDivisionError("division by zero")
    strong = [i for _, i in values if i is not None]
    weak = [_dtypes._weak_kind(v) for v, i in values if i is None]
    info = _dtypes._resolve(strong, weak) if dtype is None else _info(dtype)
    if dtype is None and info.kind == "b":
        info = _INT64
    n = builtins.max(math.ceil((stop - start) / step), 0)
    if builtins.all(isinstance(v, builtins.int) for v in (start, stop, step)) and info.kind in "iu":
        t = (
            torch.arange(start, start + n * step, step, dtype=torch.int64)[:n]
            if n
            else torch.zeros(0, dtype=torch.int64)
        )
        return _wrap(_from_compute(t, info), info)
    # numpy steps by the difference of its first two values.
    delta = (start + step) - start
    t = torch.arange(n, dtype=torch.float64) * delta + start
    return _wrap(_from_compute(t, info), info)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    num = builtins.int(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    a, b = asarray(start), asarray(stop)
    info = _dtypes._resolve([a._info, b._info, _FLOAT64], [])
    lo = _compute(a).to(torch.float64)
    hi = _compute(b).to(torch.float64)
    div = (num - 1) if endpoint else num
    delta = hi - lo
    y = torch.arange(num, dtype=torch.float64).reshape((-1,) + (1,) * delta.dim())
    if div > 0:
        step = delta / div
        if builtins.bool((step == 0).any()):
            y = y / div * delta
        else:
            y = y * step
    else:
        step = torch.full(delta.shape, float("nan"), dtype=torch.float64)
        y = y * delta
    y = y + lo
    if endpoint and num > 1:
        y[-1] = hi
    if axis != 0:
        y = y.movedim(0, axis)
    out_info = info if dtype is None else _info(dtype)
    if out_info.kind in "iu":
        y = torch.floor(y)
    r = _wrap(_from_compute(y, out_info), out_info)
    if retstep:
        return r, _result(step, _FLOAT64)
    return r


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    from numpy._ufuncs import power

    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    r = power(base, y)
    return r if dtype is None else asarray(r).astype(dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    from numpy._ufuncs import log10

    if start == 0 or stop == 0:
        raise ValueError("Geometric sequence cannot include zero")
    r = logspace(log10(start), log10(stop), num=num, endpoint=endpoint, base=10.0, axis=axis)
    if num > 0:
        r[0] = start
        if num > 1 and endpoint:
            r[-1] = stop
    return r if dtype is None else r.astype(dtype)


def eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    info = _info(dtype)
    M = N if M is None else M
    t = torch.zeros(_new_shape((N, M), info.itemsize), dtype=info.storage)
    if -N < k < M:
        d = t.diagonal(k)
        d.fill_(1)
    return _wrap(t, info)


def identity(n, dtype=None, *, like=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=float, *, like=None):
    info = _info(dtype)
    M = N if M is None else M
    t = torch.ones((N, M), dtype=torch.bool).tril(k)
    return _wrap(t.to(info.storage), info)


def diag(v, k=0):
    v = asarray(v)
    if v.ndim == 1:
        return _wrap(torch.diag(v._t, k), v._info)
    if v.ndim == 2:
        return _wrap(v._t.diagonal(k).clone(), v._info)
    raise ValueError("Input must be 1- or 2-d.")


def diagflat(v, k=0):
    return diag(asarray(v).ravel(), k)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrays = [asarray(x).ravel() for x in xi]
    n = builtins.len(arrays)
    shapes = [[1] * n for _ in arrays]
    for i, a in builtins.enumerate(arrays):
        shapes[i][i] = a.size
    if indexing == "xy" and n > 1:
        for s in shapes:
            s[0], s[1] = s[1], s[0]
    out = [a.reshape(s) for a, s in zip(arrays, shapes)]
    if sparse:
        return builtins.tuple(o.copy() if copy else o for o in out)
    full_shape = [builtins.max(s[i] for s in shapes) for i in builtins.range(n)]
    return builtins.tuple(
        _wrap(torch.broadcast_to(o._t, full_shape).clone() if copy else torch.broadcast_to(o._t, full_shape), o._info)
        for o in out
    )


def indices(dimensions, dtype=int, sparse=False):
    grids = meshgrid(*[arange(d, dtype=dtype) for d in dimensions], indexing="ij", sparse=sparse)
    if sparse:
        return grids
    from numpy._shape import stack

    return stack(grids)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    return function(*indices(shape, dtype=dtype), **kwargs)


def fromiter(iter, dtype, count=-1, *, like=None):
    values = builtins.list(iter) if count < 0 else [v for _, v in zip(builtins.range(count), iter)]
    return array(values, dtype=dtype)
