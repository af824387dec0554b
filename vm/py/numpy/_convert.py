"""Arrays from Python data, numpy scalars and tensors: ``array``, ``asarray`` and the conversions under them."""

import builtins

import torch

from numpy import _dtypes
from numpy._array import _BOOL, _FLOAT64, _INT64, _compute, _from_compute, _values_for, _wrap, ndarray
from numpy._dtypes import _BY_NAME, _info


def _leaves(obj, out):
    """The kinds of the leaves of nested sequences (stops early when mixed with arrays)."""
    for x in obj:
        if isinstance(x, (builtins.list, builtins.tuple)):
            _leaves(x, out)
        else:
            out.add(builtins.type(x))


def _data_array(obj, info):
    """An array from nested Python sequences, numbers, scalars and arrays."""
    if isinstance(obj, (builtins.list, builtins.tuple)):
        kinds = set()
        _leaves(obj, kinds)
        plain = kinds <= {builtins.bool, builtins.int, builtins.float}
        if not plain:
            items = [_data_array(x, None) for x in obj]
            if not items:
                return _wrap(torch.zeros(0, dtype=(info or _FLOAT64).storage), info or _FLOAT64)
            shapes = {x.shape for x in items}
            if builtins.len(shapes) != 1:
                raise ValueError(
                    "setting an array element with a sequence. The requested array has an inhomogeneous shape after 1 dimensions. "
                    f"The detected shape was ({builtins.len(items)},) + inhomogeneous part."
                )
            common = info or _dtypes._resolve([x._info for x in items], [])
            return _wrap(torch.stack([_from_compute(_compute(x), common) for x in items]), common)
        if info is None:
            info = (
                _FLOAT64
                if builtins.float in kinds
                else _INT64
                if builtins.int in kinds
                else _BOOL
                if kinds
                else _FLOAT64
            )
        return _wrap(_tensor_of(obj, info), info)
    if isinstance(obj, ndarray):
        return obj if info is None else obj.astype(info.dtype)
    if isinstance(obj, _dtypes.generic):
        a = _wrap(_values_for(obj.item(), obj._info), obj._info)
        return a if info is None else a.astype(info.dtype)
    if isinstance(obj, torch.Tensor):
        a = _from_tensor(obj.detach())
        return a if info is None else a.astype(info.dtype)
    kind = _dtypes._weak_kind(obj)
    if kind is not None:
        if info is None:
            info = {"b": _BOOL, "i": _INT64, "f": _FLOAT64}[kind]
            if kind == "i" and not -(1 << 63) <= obj < (1 << 63):
                if 0 <= obj < (1 << 64):
                    info = _BY_NAME["uint64"]
                else:
                    raise OverflowError(f"Python integer {obj} out of bounds for int64")
        return _wrap(_tensor_of(obj, info), info)
    if hasattr(obj, "__array__"):
        return _data_array(obj.__array__(), info)
    if isinstance(obj, (builtins.str, bytes)):
        raise NotImplementedError(f"fxvm's numpy has no string arrays (got {builtins.type(obj).__name__} data)")
    if hasattr(obj, "__len__") and hasattr(obj, "__getitem__"):
        return _data_array(builtins.list(obj), info)
    if hasattr(obj, "__iter__") and not isinstance(obj, builtins.dict):
        raise NotImplementedError(f"fxvm's numpy has no object arrays (got {builtins.type(obj).__name__})")
    raise NotImplementedError(f"fxvm's numpy has no object arrays (got {builtins.type(obj).__name__})")


def _tensor_of(data, info):
    """Python numbers (nested) as a storage tensor of ``info``."""
    if info.kind in "iu":
        try:
            t = torch.tensor(data, dtype=torch.int64)
        except TypeError:
            t = torch.tensor(data, dtype=torch.float64)
        except (RuntimeError, ValueError) as e:
            if "Overflow" in str(e) or "overflow" in str(e):
                raise OverflowError(f"Python integer out of bounds for {info.name}") from None
            raise _ragged(e, data) from None
        if info.kind == "u" and t.dtype is torch.int64 and t.numel() and builtins.bool((t < 0).any()):
            raise OverflowError(f"Python integer {builtins.int(t.min())} out of bounds for {info.name}")
        if info.itemsize < 8 and t.dtype is torch.int64 and t.numel():
            lo, hi = _dtypes._int_bounds(info)
            if builtins.bool((t < lo).any()) or builtins.bool((t > hi).any()):
                bad = builtins.int(t.max()) if builtins.bool((t > hi).any()) else builtins.int(t.min())
                raise OverflowError(f"Python integer {bad} out of bounds for {info.name}")
        return _from_compute(t, info)
    try:
        return torch.tensor(data, dtype=info.storage)
    except (RuntimeError, ValueError) as e:
        raise _ragged(e, data) from None


def _ragged(e, data):
    msg = str(e)
    if "expected sequence" in msg or "not a sequence" in msg:
        shape = _homogeneous_prefix(data)
        return ValueError(
            "setting an array element with a sequence. The requested array has an inhomogeneous shape after "
            f"{builtins.len(shape)} dimensions. The detected shape was {builtins.tuple(shape)} + inhomogeneous part."
        )
    return e


def _homogeneous_prefix(data):
    """The dimensions of nested sequences before their lengths disagree."""
    shape, level = [], [data]
    while builtins.all(isinstance(x, (builtins.list, builtins.tuple)) for x in level):
        lengths = {builtins.len(x) for x in level}
        if builtins.len(lengths) != 1:
            break
        shape.append(lengths.pop())
        level = [y for x in level for y in x]
    return shape


_TORCH_TO_INFO = {
    torch.bool: _BOOL,
    torch.uint8: _BY_NAME["uint8"],
    torch.int8: _BY_NAME["int8"],
    torch.int16: _BY_NAME["int16"],
    torch.int32: _BY_NAME["int32"],
    torch.int64: _INT64,
    torch.float16: _BY_NAME["float16"],
    torch.float32: _BY_NAME["float32"],
    torch.float64: _FLOAT64,
}


def _from_tensor(t):
    """An array sharing ``t``'s storage (``Tensor.numpy()``)."""
    info = _TORCH_TO_INFO.get(t.dtype)
    if info is None:
        raise TypeError("Got unsupported ScalarType BFloat16")
    return _wrap(t, info)


def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    info = None if dtype is None else _info(dtype)
    if isinstance(a, ndarray):
        if info is None or info is a._info:
            return a.copy() if copy else a
        if copy is False:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        return a.astype(info.dtype)
    r = _data_array(a, info)
    return r.copy() if copy and r is a else r


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    info = None if dtype is None else _info(dtype)
    if isinstance(object, ndarray):
        r = object.astype(info.dtype if info else object.dtype, copy=copy is not False)
    else:
        r = _data_array(object, info)
        if copy and isinstance(object, torch.Tensor):
            r = r.copy()
    while r.ndim < ndmin:
        r = r.reshape((1,) + r.shape)
    return r


def asanyarray(a, dtype=None, order=None, **kwargs):
    return asarray(a, dtype, order)


def ascontiguousarray(a, dtype=None, **kwargs):
    a = asarray(a, dtype)
    if a.ndim == 0:
        a = a.reshape(1)
    return a if a._t.is_contiguous() else a.copy()


asfortranarray = ascontiguousarray


def _common(arrays, dtype=None):
    """Arrays converted to one storage dtype (numpy's promotion)."""
    arrays = [asarray(a) for a in arrays]
    info = _dtypes._info(dtype) if dtype is not None else _dtypes._resolve([a._info for a in arrays], [])
    return [_from_compute(_compute(a), info) for a in arrays], info
