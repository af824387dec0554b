"""``numpy.ndarray`` over a ``torch.Tensor``: the array keeps a tensor of
its dtype's storage type (see ``_dtypes``) and shares it — views,
``torch.from_numpy`` and ``Tensor.numpy()`` all see the same elements."""

import builtins
import contextlib
import operator

import torch

from numpy import _dtypes
from numpy._dtypes import _BY_NAME, _info

_FLOAT64 = _BY_NAME["float64"]
_INT64 = _BY_NAME["int64"]
_BOOL = _BY_NAME["bool"]


def _wrap(t, info, base=None):
    """An ndarray over storage tensor ``t`` of dtype ``info``."""
    a = object.__new__(ndarray)
    a._t = t
    a._info = info
    a._base = base
    return a


def _compute(a):
    """The elements of ``a`` in its compute dtype (unsigned values widened)."""
    t = a._t
    if a._info.mask is not None:
        t = t.to(a._info.compute).bitwise_and(a._info.mask)
    return t


def _from_compute(t, info):
    """A tensor of ``info``'s storage type from values computed in any dtype."""
    if t.dtype is not info.storage:
        if t.dtype.is_floating_point and info.kind == "u" and info.itemsize >= 4:
            # numpy's C cast to uint32/uint64 on x86: from 2**(w-1) up, the
            # signed conversion of x - 2**(w-1) with the top bit set again
            # (torch's own cast is the signed one: truncation, the minimum
            # when out of range, int32's low bits for narrower types); from
            # float16 to uint32, int64's low bits.
            if t.dtype is torch.float16 and info.itemsize == 4:
                t = t.to(torch.int64)
            else:
                signed = torch.int32 if info.itemsize == 4 else torch.int64
                half = 2.0 ** (8 * info.itemsize - 1)
                t = torch.where(t >= half, (t - half).to(signed) ^ torch.iinfo(signed).min, t.to(signed))
        t = t.to(info.storage)
    return t


def _scalar(info, value):
    """The numpy scalar of type ``info`` for a Python value."""
    return info.type._make(value)


def _item(t, info):
    """The Python value of a one-element storage tensor."""
    v = t.item()
    if info.mask is not None:
        v &= info.mask
    elif info.name == "uint64" and v < 0:
        v += 1 << 64
    return v


def _result(t, info, keep_0d=False):
    """An array of computed values, or a numpy scalar when 0-d."""
    t = _from_compute(t, info)
    if t.dim() == 0 and not keep_0d:
        return _scalar(info, _item(t, info))
    return _wrap(t, info)


def _view_base(a):
    return a if a._base is None else a._base


class _Flags:
    __slots__ = ("_a",)

    def __init__(self, a):
        self._a = a

    c_contiguous = property(lambda self: self._a._t.is_contiguous())
    contiguous = c_contiguous
    f_contiguous = property(lambda self: self._a.transpose()._t.is_contiguous())
    owndata = property(lambda self: self._a._base is None)
    writeable = property(lambda self: True)
    aligned = property(lambda self: True)
    writebackifcopy = property(lambda self: False)

    def __getitem__(self, key):
        names = {
            "C_CONTIGUOUS": "c_contiguous",
            "C": "c_contiguous",
            "F_CONTIGUOUS": "f_contiguous",
            "F": "f_contiguous",
            "OWNDATA": "owndata",
            "O": "owndata",
            "WRITEABLE": "writeable",
            "W": "writeable",
            "ALIGNED": "aligned",
            "A": "aligned",
        }
        return getattr(self, names[key])

    def __repr__(self):
        return "\n".join(
            f"  {k.upper()} : {getattr(self, k)}"
            for k in ("c_contiguous", "f_contiguous", "owndata", "writeable", "aligned", "writebackifcopy")
        )


class _FlatIter:
    """``a.flat``: the elements in row-major order, readable and writable by index."""

    __slots__ = ("base",)

    def __init__(self, a):
        self.base = a

    def __iter__(self):
        return iter(self.base.ravel())

    def __len__(self):
        return self.base.size

    def __getitem__(self, key):
        return self.base.reshape(-1)[key]

    def __setitem__(self, key, value):
        flat = self.base.reshape(-1)
        flat[key] = value
        if not self.base._t.is_contiguous():
            self.base[...] = flat.reshape(self.base.shape)

    def __array__(self, dtype=None, copy=None):
        return self.base.flatten()


# ------------------------------------------------------------------- indexing


def _index_tensor(x):
    """An index array as a tensor torch's indexing takes (int64 or bool)."""
    if isinstance(x, ndarray):
        if x._info.kind == "b":
            return x._t
        if x._info.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        return _compute(x).to(torch.int64)
    return x


def _index_item(k):
    if isinstance(k, ndarray):
        return _index_tensor(k)
    if isinstance(k, _dtypes.integer):
        return builtins.int(k)
    if isinstance(k, _dtypes.bool_):
        return builtins.bool(k)
    if isinstance(k, builtins.list):
        if any(isinstance(v, (builtins.list, builtins.tuple, ndarray, slice)) or v is None or v is Ellipsis for v in k):
            return _index_tensor(asarray(k))
        return [builtins.int(v) if isinstance(v, _dtypes.integer) else v for v in k]
    if isinstance(k, slice):
        return slice(*(builtins.int(v) if isinstance(v, _dtypes.integer) else v for v in (k.start, k.stop, k.step)))
    if isinstance(k, builtins.float):
        raise IndexError(
            "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer or boolean arrays are valid indices"
        )
    return k


def _normalize_key(key, shape):
    """``key`` as a tuple torch can index with, and the (output dim, size)
    pairs of negative-step slices, which torch has no views for: they are
    taken with a positive step and flipped."""
    if not isinstance(key, builtins.tuple):
        key = (key,)
    key = builtins.tuple(_index_item(k) for k in key)
    negative = [i for i, k in enumerate(key) if isinstance(k, slice) and k.step is not None and k.step < 0]
    if not negative:
        return key, []
    advanced = any(isinstance(k, (torch.Tensor, builtins.list)) for k in key)
    consumed = builtins.sum(
        1
        for k in key
        if k is not None and k is not Ellipsis and not (isinstance(k, torch.Tensor) and k.dtype is torch.bool)
    )
    out, flips, in_dim, out_dim = [], [], 0, 0
    for k in key:
        if k is Ellipsis:
            skip = builtins.len(shape) - consumed
            in_dim += skip
            out_dim += skip
            out.append(k)
            continue
        if k is None:
            out_dim += 1
            out.append(k)
            continue
        if isinstance(k, slice) and k.step is not None and k.step < 0:
            n = shape[in_dim]
            idx = range(*k.indices(n))
            if builtins.len(idx) == 0:
                k = slice(0, 0)
            else:
                k = slice(idx[-1], idx[0] + 1, -k.step)
            if advanced:
                out.append(
                    torch.arange(k.start, k.stop, k.step).flip(0)
                    if builtins.len(idx)
                    else torch.zeros(0, dtype=torch.int64)
                )
            else:
                out.append(k)
                flips.append(out_dim)
            in_dim += 1
            out_dim += 1
            continue
        out.append(k)
        in_dim += 1
        if not isinstance(k, builtins.int):
            out_dim += 1
    return builtins.tuple(out), flips


# Slice bounds torch takes as they are.
_PLAIN = (builtins.int, builtins.type(None))


def _key_for(a, key):
    return _normalize_key(key, a._t.shape)


def _returns_scalar(key):
    if not isinstance(key, builtins.tuple):
        key = (key,)
    return Ellipsis not in key


# ------------------------------------------------------------------ the class


class ndarray:
    """An n-dimensional array (numpy 2.x semantics) over tensor storage."""

    __slots__ = ("_t", "_info", "_base", "__weakref__")
    __array_priority__ = 0.0
    __hash__ = None

    def __new__(cls, shape, dtype=float, buffer=None, offset=0, strides=None, order=None):
        info = _info(dtype)
        if buffer is not None:
            from numpy._io import frombuffer

            n = 1
            for s in _new_shape(shape):
                n *= s
            return frombuffer(buffer, dtype=info.dtype, count=n, offset=offset).reshape(shape)
        return _wrap(torch.zeros(_new_shape(shape, info.itemsize), dtype=info.storage), info)

    # ----- attributes
    @property
    def shape(self):
        return builtins.tuple(self._t.shape)

    @shape.setter
    def shape(self, value):
        if not self._t.is_contiguous() and builtins.tuple(_shape_arg(value)) != self.shape:
            raise AttributeError(
                "Incompatible shape for in-place modification. Use `.reshape()` to make a copy with the desired shape."
            )
        self._t = self._t.reshape(_shape_arg(value))

    @property
    def dtype(self):
        return self._info.dtype

    @property
    def ndim(self):
        return self._t.dim()

    @property
    def size(self):
        return self._t.numel()

    @property
    def itemsize(self):
        return self._info.itemsize

    @property
    def nbytes(self):
        return self._t.numel() * self._info.itemsize

    @property
    def strides(self):
        return builtins.tuple(s * self._info.itemsize for s in self._t.stride())

    @property
    def T(self):
        return self.transpose()

    mT = property(lambda self: self.swapaxes(-1, -2))

    @property
    def base(self):
        return self._base

    @property
    def flags(self):
        return _Flags(self)

    @property
    def flat(self):
        return _FlatIter(self)

    @flat.setter
    def flat(self, value):
        _FlatIter(self)[:] = value

    @property
    def real(self):
        return self

    @property
    def imag(self):
        return _wrap(torch.zeros(self._t.shape, dtype=self._t.dtype), self._info)

    @property
    def device(self):
        return "cpu"

    # ----- conversion
    def __array__(self, dtype=None, copy=None):
        if dtype is None or _info(dtype) is self._info:
            return self.copy() if copy else self
        return self.astype(dtype)

    def __fxvm_tensor__(self):
        """The tensor over this array's elements (torch's view of numpy)."""
        if self._info.mask is not None or self._info.name == "uint64":
            raise TypeError(
                f"can't convert np.ndarray of type numpy.{self._info.name}. The only supported types are: "
                "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint8, and bool."
            )
        return self._t

    def item(self, *args):
        if args:
            v = (
                self[args if builtins.len(args) > 1 else args[0]]
                if builtins.len(args) > 1 or not isinstance(args[0], builtins.int)
                else self.reshape(-1)[args[0]]
            )
            return v.item() if isinstance(v, (ndarray, _dtypes.generic)) else v
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return _item(self._t.reshape(()), self._info)

    def tolist(self):
        if self.ndim == 0:
            return self.item()
        values = _compute(self).tolist()
        if self._info.name == "uint64":
            values = _fix_u64(values)
        return values

    def tobytes(self, order="C"):
        import _fxvm_numpy

        t = (
            self._t
            if order in ("C", "A", "K")
            else self._t.permute(builtins.list(builtins.range(self.ndim - 1, -1, -1)))
        )
        return _fxvm_numpy.tensor_bytes(t)

    tostring = tobytes

    def tofile(self, fid, sep="", format="%s"):
        from numpy._io import tofile

        tofile(self, fid, sep, format)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        info = _info(dtype)
        if info is self._info:
            return self.copy() if copy else self
        if casting != "unsafe" and not _dtypes.can_cast(self._info.dtype, info.dtype, casting):
            raise TypeError(
                f"Cannot cast array data from dtype('{self._info.name}') to dtype('{info.name}') according to the rule '{casting}'"
            )
        return _wrap(
            _from_compute(_compute(self), info).clone()
            if info.storage is self._t.dtype
            else _from_compute(_compute(self), info),
            info,
        )

    def view(self, dtype=None, type=None):
        if dtype is None or (isinstance(dtype, builtins.type) and issubclass(dtype, ndarray)):
            return _wrap(self._t.view(self._t.shape), self._info, _view_base(self))
        info = _info(dtype)
        if info.itemsize == self._info.itemsize:
            return _wrap(self._t.view(info.storage), info, _view_base(self))
        raise NotImplementedError("fxvm's numpy views arrays only as dtypes of the same item size")

    def copy(self, order="C"):
        return _wrap(self._t.clone(memory_format=torch.contiguous_format), self._info)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __reduce__(self):
        return (_rebuild, (self.tobytes(), self._info.name, self.shape))

    def fill(self, value):
        self[...] = value

    # ----- Python protocols
    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._t.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1:
            info = self._info
            for v in self.tolist():
                yield _scalar(info, v)
            return
        for i in builtins.range(self._t.shape[0]):
            yield _wrap(self._t[i], self._info, _view_base(self))

    def __bool__(self):
        if self.size != 1:
            if self.size == 0:
                raise ValueError(
                    "The truth value of an empty array is ambiguous. Use `array.size > 0` to check that an array is not empty."
                )
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        return builtins.bool(self.item())

    def __int__(self):
        return builtins.int(self._scalar_value("int"))

    def __float__(self):
        return builtins.float(self._scalar_value("float"))

    def __index__(self):
        if self._info.kind not in "iu" or self.ndim != 0:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return self.item()

    def _scalar_value(self, what):
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        if self.ndim > 0:
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        return self.item()

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def __contains__(self, value):
        return builtins.bool((self == value).any())

    def __repr__(self):
        from numpy._print import array_repr

        return array_repr(self)

    def __str__(self):
        from numpy._print import array_str

        return array_str(self)

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    # ----- indexing
    def __getitem__(self, key):
        # The common view, a plain forward slice, needs no key rewriting.
        if (
            builtins.type(key) is slice
            and (key.step is None or builtins.type(key.step) is builtins.int and key.step > 0)
            and builtins.type(key.start) in _PLAIN
            and builtins.type(key.stop) in _PLAIN
            and self._t.dim()
        ):
            return _wrap(self._t[key], self._info, _view_base(self))
        k, flips = _key_for(self, key)
        try:
            t = self._t[k]
        except (IndexError, TypeError, RuntimeError) as e:
            raise _index_error(e, self, key) from None
        if flips:
            t = t.flip(flips)
        if t.dim() == 0 and _returns_scalar(key):
            return _scalar(self._info, _item(t, self._info))
        return _wrap(t, self._info, _view_base(self))

    def __setitem__(self, key, value):
        k, flips = _key_for(self, key)
        v = _values_for(value, self._info)
        if flips:
            target = self._t[k]
            v = torch.broadcast_to(v, target.shape).flip(flips)
        try:
            self._t[k] = v
        except (IndexError, TypeError, RuntimeError) as e:
            raise _index_error(e, self) from None

    # ----- shape
    def reshape(self, *shape, order="C", copy=None):
        shape = _shape_arg(shape[0] if builtins.len(shape) == 1 else shape)
        if builtins.sum(1 for d in shape if d == -1) > 1:
            raise ValueError("can only specify one unknown dimension")
        if order == "F":
            rev = self.transpose().reshape(builtins.tuple(reversed(shape)))
            return rev.transpose()
        try:
            t = self._t.reshape(shape)
        except RuntimeError:
            text = ",".join(builtins.str(d) for d in shape) + ("," if builtins.len(shape) == 1 else "")
            raise ValueError(f"cannot reshape array of size {self.size} into shape ({text})") from None
        return _wrap(t, self._info, _view_base(self))

    def resize(self, *new_shape, refcheck=True):
        shape = _new_shape(new_shape[0] if builtins.len(new_shape) == 1 else new_shape)
        n = 1
        for s in shape:
            n *= s
        flat = self._t.reshape(-1)
        if n <= flat.numel():
            self._t = flat[:n].clone().reshape(shape)
        else:
            self._t = torch.cat([flat, torch.zeros(n - flat.numel(), dtype=flat.dtype)]).reshape(shape)

    def transpose(self, *axes):
        if not axes or axes == (None,):
            axes = builtins.tuple(builtins.range(self.ndim - 1, -1, -1))
        elif builtins.len(axes) == 1 and isinstance(axes[0], (builtins.tuple, builtins.list)):
            axes = builtins.tuple(axes[0])
        if builtins.len(axes) != self.ndim:
            raise ValueError("axes don't match array")
        if builtins.len({_axis(a, self.ndim) for a in axes}) != builtins.len(axes):
            raise ValueError("repeated axis in transpose")
        return _wrap(self._t.permute([_axis(a, self.ndim) for a in axes]), self._info, _view_base(self))

    def swapaxes(self, axis1, axis2):
        return _wrap(self._t.transpose(_axis(axis1, self.ndim), _axis(axis2, self.ndim)), self._info, _view_base(self))

    def ravel(self, order="C"):
        if order == "F":
            return self.transpose().reshape(-1)
        return self.reshape(-1)

    def flatten(self, order="C"):
        return self.ravel(order).copy()

    def squeeze(self, axis=None):
        if axis is None:
            return _wrap(self._t.squeeze(), self._info, _view_base(self))
        axes = _axes(axis, self.ndim)
        for a in axes:
            if self._t.shape[a] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        return _wrap(self._t.squeeze(axes), self._info, _view_base(self))

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return _wrap(self._t.diagonal(offset, axis1, axis2), self._info, _view_base(self))

    def repeat(self, repeats, axis=None):
        from numpy._shape import repeat

        return repeat(self, repeats, axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        from numpy._select import take

        return take(self, indices, axis, out, mode)

    def nonzero(self):
        from numpy._select import nonzero

        return nonzero(self)

    def sort(self, axis=-1, kind=None, order=None, stable=None):
        from numpy._select import sort

        self[...] = sort(self, axis, kind)

    def argsort(self, axis=-1, kind=None, order=None, stable=None):
        from numpy._select import argsort

        return argsort(self, axis, kind)

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        from numpy._select import partition

        self[...] = partition(self, kth, axis)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        from numpy._select import argpartition

        return argpartition(self, kth, axis)

    def choose(self, choices, out=None, mode="raise"):
        from numpy._select import choose

        return choose(self, choices, out, mode)

    def compress(self, condition, axis=None, out=None):
        from numpy._select import compress

        return compress(condition, self, axis, out)

    def setflags(self, write=None, align=None, uic=None):
        if write is False:
            raise NotImplementedError("fxvm's numpy arrays are always writeable")

    def searchsorted(self, v, side="left", sorter=None):
        from numpy._select import searchsorted

        return searchsorted(self, v, side, sorter)

    def clip(self, min=None, max=None, out=None, **kwargs):
        from numpy._select import clip

        return clip(self, min, max, out=out, **kwargs)

    def round(self, decimals=0, out=None):
        from numpy._select import round

        return round(self, decimals, out)

    def dot(self, b, out=None):
        from numpy._functions import dot

        return dot(self, b, out)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return self.diagonal(offset, axis1, axis2).sum(-1, dtype=dtype, out=out)

    def conj(self):
        return self

    conjugate = conj

    def put(self, indices, values, mode="raise"):
        flat = self.reshape(-1)
        flat[asarray(indices).reshape(-1)] = values
        if not self._t.is_contiguous():
            self[...] = flat.reshape(self.shape)

    def byteswap(self, inplace=False):
        raise NotImplementedError("fxvm's numpy keeps native byte order only")

    def __array_namespace__(self, api_version=None):
        import numpy

        return numpy

    def to_device(self, device, stream=None):
        if device != "cpu":
            raise ValueError(f"Unsupported device {device!r}")
        return self

    def dump(self, file):
        import pickle

        with open(file, "wb") if isinstance(file, builtins.str) else contextlib.nullcontext(file) as f:
            pickle.dump(self, f, protocol=2)

    def dumps(self):
        import pickle

        return pickle.dumps(self, protocol=2)


def _rebuild(data, name, shape):
    from numpy._io import frombuffer

    return frombuffer(data, dtype=name).reshape(shape).copy()


def _fix_u64(values):
    if isinstance(values, builtins.list):
        return [_fix_u64(v) for v in values]
    return values + (1 << 64) if values < 0 else values


def _index_error(e, a, key=None):
    msg = str(e).replace("for dimension", "for axis")
    if "too many indices" in msg and key is not None:
        items = key if isinstance(key, builtins.tuple) else (key,)
        n = builtins.sum(1 for k in items if k is not None and k is not Ellipsis)
        return IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {n} were indexed")
    if "out of range" in msg or "out of bounds" in msg:
        return IndexError(msg)
    return type(e)(msg) if isinstance(e, (IndexError, TypeError)) else IndexError(msg)


def _values_for(value, info):
    """A value to store into an array of ``info``: a tensor of its storage
    type (numpy casts unsafely, but refuses Python ints out of range)."""
    if isinstance(value, ndarray):
        return _from_compute(_compute(value), info)
    kind = _dtypes._weak_kind(value)
    if kind == "i":
        _dtypes._check_weak_int(value, info)
        if info.mask is not None or info.name == "uint64":
            # uint64 past int64's range is stored as the same bits.
            bits = value - (1 << 64) if value >= 1 << 63 else value
            return torch.tensor(bits, dtype=torch.int64).to(info.storage)
        return torch.tensor(value, dtype=info.compute) if info.kind in "iu" else torch.tensor(value, dtype=info.storage)
    if kind is not None:
        if info.kind in "iu" and kind == "f":
            if value != value:
                raise ValueError("cannot convert float NaN to integer")
            return _from_compute(torch.tensor(value, dtype=torch.float64), info)
        return torch.tensor(value, dtype=info.storage)
    return _from_compute(_compute(asarray(value)), info)


def _axis(a, ndim):
    a = operator.index(a)
    if not -ndim <= a < builtins.max(ndim, 1):
        raise AxisError(a, ndim)
    return a % ndim if ndim else 0


def _axes(axis, ndim):
    if isinstance(axis, (builtins.tuple, builtins.list)):
        axes = [_axis(a, ndim) for a in axis]
        if builtins.len(set(axes)) != builtins.len(axes):
            raise ValueError("duplicate value in 'axis'")
        return builtins.tuple(axes)
    return (_axis(axis, ndim),)


def _shape_arg(shape):
    """A shape argument (an int or a sequence of ints) as a tuple."""
    if isinstance(shape, (builtins.tuple, builtins.list)):
        return builtins.tuple(operator.index(s) for s in shape)
    return (operator.index(shape),)


def _new_shape(shape, itemsize=1):
    """The shape of an array being made: no dimension may be negative, nor
    the whole larger than memory can address."""
    dims = _shape_arg(shape)
    if builtins.any(d < 0 for d in dims):
        raise ValueError("negative dimensions are not allowed")
    n = itemsize
    for d in dims:
        n *= d
    if n >= 1 << 63:
        raise ValueError("array is too big; `arr.size * arr.dtype.itemsize` is larger than the maximum possible size.")
    return dims


class AxisError(ValueError, IndexError):
    def __init__(self, axis, ndim=None, msg_prefix=None):
        if ndim is None:
            super().__init__(axis)
            return
        self.axis = axis
        self.ndim = ndim
        msg = f"axis {axis} is out of bounds for array of dimension {ndim}"
        super().__init__(f"{msg_prefix}: {msg}" if msg_prefix else msg)


AxisError.__module__ = "numpy.exceptions"


# The conversions build arrays, so they come after the class.
from numpy._convert import asarray  # noqa: E402
