"""numpy's dtypes, scalar types and type promotion (NEP 50, numpy 2.x).

Arrays keep their elements in ``torch.Tensor`` storage. Each numpy dtype
has a *storage* tensor dtype of the same width and bits, and a *compute*
dtype that ops run in: the unsigned types numpy has and the tensor core
does not (uint16, uint32, uint64) are stored in the signed type of their
width and widened (masked) to compute. uint64 computes in int64, so its
values past 2**63 - 1 compare and divide as negative numbers.
"""

import builtins

import torch


class _Info:
    __slots__ = ("name", "kind", "char", "num", "itemsize", "storage", "compute", "mask", "type", "dtype", "bounds")

    def __init__(self, name, kind, char, num, itemsize, storage, compute, mask):
        self.name = name
        self.kind = kind
        self.char = char
        self.num = num
        self.itemsize = itemsize
        self.storage = storage
        self.compute = compute
        self.mask = mask
        self.type = None
        self.dtype = None
        # The range of an integer type's values (None for the others).
        self.bounds = None
        if kind in "iu":
            bits = 8 * itemsize
            self.bounds = (0, (1 << bits) - 1) if kind == "u" else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)


_INFOS = [
    _Info("bool", "b", "?", 0, 1, torch.bool, torch.bool, None),
    _Info("int8", "i", "b", 1, 1, torch.int8, torch.int8, None),
    _Info("uint8", "u", "B", 2, 1, torch.uint8, torch.uint8, None),
    _Info("int16", "i", "h", 3, 2, torch.int16, torch.int16, None),
    _Info("uint16", "u", "H", 4, 2, torch.int16, torch.int32, 0xFFFF),
    _Info("int32", "i", "i", 5, 4, torch.int32, torch.int32, None),
    _Info("uint32", "u", "I", 6, 4, torch.int32, torch.int64, 0xFFFFFFFF),
    _Info("int64", "i", "l", 7, 8, torch.int64, torch.int64, None),
    _Info("uint64", "u", "L", 8, 8, torch.int64, torch.int64, None),
    _Info("float16", "f", "e", 23, 2, torch.float16, torch.float16, None),
    _Info("float32", "f", "f", 11, 4, torch.float32, torch.float32, None),
    _Info("float64", "f", "d", 12, 8, torch.float64, torch.float64, None),
]
_BY_NAME = {i.name: i for i in _INFOS}


class dtype:
    """A data type: ``np.dtype('float32')``, ``np.dtype(np.int64)``, ``np.dtype(float)``."""

    __slots__ = ("_info",)

    def __new__(cls, obj, align=False, copy=False):
        return _as_dtype(obj)

    @classmethod
    def _make(cls, info):
        d = object.__new__(cls)
        d._info = info
        return d

    name = property(lambda self: self._info.name)
    kind = property(lambda self: self._info.kind)
    char = property(lambda self: self._info.char)
    num = property(lambda self: self._info.num)
    itemsize = property(lambda self: self._info.itemsize)
    alignment = property(lambda self: self._info.itemsize)
    type = property(lambda self: self._info.type)
    base = property(lambda self: self)
    shape = property(lambda self: ())
    ndim = property(lambda self: 0)
    names = property(lambda self: None)
    fields = property(lambda self: None)
    subdtype = property(lambda self: None)
    hasobject = property(lambda self: False)
    isbuiltin = property(lambda self: 1)
    isnative = property(lambda self: True)
    metadata = property(lambda self: None)

    @property
    def byteorder(self):
        return "|" if self._info.itemsize == 1 else "="

    @property
    def str(self):
        order = "|" if self._info.itemsize == 1 else "<"
        return f"{order}{self._info.kind}{self._info.itemsize}"

    @property
    def descr(self):
        return [("", self.str)]

    def newbyteorder(self, new_order="S"):
        if new_order in ("=", "<", "little", "L", "l", "native", "N", "n", "|", "I", "i"):
            return self
        raise NotImplementedError("fxvm's numpy keeps native (little-endian) byte order only")

    def __eq__(self, other):
        if isinstance(other, dtype):
            return self._info is other._info
        try:
            return self._info is _as_dtype(other)._info
        except TypeError, ValueError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(("numpy.dtype", self._info.name))

    def __repr__(self):
        return f"dtype('{self._info.name}')"

    def __str__(self):
        return self._info.name

    def __reduce__(self):
        return (dtype, (self.str, False, True))

    def __len__(self):
        return 0

    def __bool__(self):
        return True


def _dtype_class_name(name):
    if name == "bool":
        return "BoolDType"
    if name.startswith("uint"):
        return "UInt" + name[4:] + "DType"
    return name[0].upper() + name[1:] + "DType"


# numpy 2 gives each dtype its own class (`np.dtypes.Float64DType`).
DTYPE_CLASSES = {}
for _i in _INFOS:
    _cls = builtins.type(_dtype_class_name(_i.name), (dtype,), {"__slots__": (), "__module__": "numpy.dtypes"})
    DTYPE_CLASSES[_cls.__name__] = _cls
    _i.dtype = _cls._make(_i)


# Names and type codes numpy accepts for each dtype (numpy 2 on 64-bit Linux).
_ALIASES = {
    "?": "bool",
    "b1": "bool",
    "bool_": "bool",
    "bool8": "bool",
    "b": "int8",
    "i1": "int8",
    "byte": "int8",
    "B": "uint8",
    "u1": "uint8",
    "ubyte": "uint8",
    "h": "int16",
    "i2": "int16",
    "short": "int16",
    "H": "uint16",
    "u2": "uint16",
    "ushort": "uint16",
    "i": "int32",
    "i4": "int32",
    "intc": "int32",
    "I": "uint32",
    "u4": "uint32",
    "uintc": "uint32",
    "l": "int64",
    "q": "int64",
    "i8": "int64",
    "p": "int64",
    "int": "int64",
    "int_": "int64",
    "intp": "int64",
    "long": "int64",
    "longlong": "int64",
    "L": "uint64",
    "Q": "uint64",
    "u8": "uint64",
    "P": "uint64",
    "uint": "uint64",
    "uintp": "uint64",
    "ulong": "uint64",
    "ulonglong": "uint64",
    "e": "float16",
    "f2": "float16",
    "half": "float16",
    "f": "float32",
    "f4": "float32",
    "single": "float32",
    "d": "float64",
    "f8": "float64",
    "float": "float64",
    "double": "float64",
    "float_": "float64",
}

_UNSUPPORTED_KINDS = {
    "c": "complex",
    "F": "complex64",
    "D": "complex128",
    "G": "clongdouble",
    "g": "longdouble",
    "U": "str",
    "S": "bytes",
    "O": "object",
    "V": "void",
    "M": "datetime64",
    "m": "timedelta64",
}


def _from_string(text):
    name = text
    if name[:1] in "<=|":
        name = name[1:]
    elif name[:1] == ">" and name[1:2] in ("b", "B", "?") or name[1:] in ("i1", "u1", "b1"):
        name = name[1:]
    elif name[:1] == ">":
        raise NotImplementedError(f"fxvm's numpy keeps native (little-endian) byte order only: dtype {text!r}")
    name = _ALIASES.get(name, name)
    info = _BY_NAME.get(name)
    if info is not None:
        return info.dtype
    for prefix, what in _UNSUPPORTED_KINDS.items():
        if name.startswith(prefix) or name.startswith(what):
            raise NotImplementedError(f"fxvm's numpy has no {what} arrays (dtype {text!r})")
    raise TypeError(f"data type {text!r} not understood")


def _as_dtype(obj):
    """``np.dtype(obj)``: the canonical dtype object for anything numpy accepts."""
    if isinstance(obj, dtype):
        return obj
    # Types and names seen before (every dtype= argument) answer from a table.
    try:
        return _SEEN[obj]
    except KeyError, TypeError:
        pass
    d = _lookup(obj)
    if isinstance(obj, (builtins.type, builtins.str)):
        _SEEN[obj] = d
    return d


_SEEN = {}


def _lookup(obj):
    if obj is None:
        return _BY_NAME["float64"].dtype
    if isinstance(obj, builtins.type):
        if issubclass(obj, generic):
            info = getattr(obj, "_info", None)
            if info is None:
                raise TypeError(f"Converting '{obj.__name__}' to a dtype needs a concrete type")
            return info.dtype
        if obj is builtins.bool:
            return _BY_NAME["bool"].dtype
        if obj is builtins.int:
            return _BY_NAME["int64"].dtype
        if obj is builtins.float:
            return _BY_NAME["float64"].dtype
        if obj is complex:
            raise NotImplementedError("fxvm's numpy has no complex arrays")
        if obj is builtins.str or obj is bytes or obj is object:
            raise NotImplementedError(f"fxvm's numpy has no {obj.__name__} arrays")
    if isinstance(obj, builtins.str):
        return _from_string(obj)
    if isinstance(obj, torch.dtype):
        for info in _INFOS:
            if info.storage is obj and info.mask is None and info.name != "uint64":
                return info.dtype
        raise TypeError(f"Cannot interpret '{obj}' as a data type")
    d = getattr(obj, "dtype", None)
    if isinstance(d, dtype):
        return d
    raise TypeError(f"Cannot interpret '{obj!r}' as a data type")


def _info(obj):
    return _as_dtype(obj)._info


# ----------------------------------------------------------------- promotion


def _min_float_for(info):
    """The smallest float that holds every value of an integer or bool type."""
    if info.itemsize == 1:
        return _BY_NAME["float16"]
    if info.itemsize == 2:
        return _BY_NAME["float32"]
    return _BY_NAME["float64"]


def _promote(a, b):
    """``np.promote_types`` over infos."""
    if a is b:
        return a
    if a.kind == "b":
        return b
    if b.kind == "b":
        return a
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.itemsize >= b.itemsize else b
        f, other = (a, b) if a.kind == "f" else (b, a)
        need = _min_float_for(other)
        return f if f.itemsize >= need.itemsize else need
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    signed, unsigned = (a, b) if a.kind == "i" else (b, a)
    if signed.itemsize > unsigned.itemsize:
        return signed
    wider = {1: "int16", 2: "int32", 4: "int64"}.get(unsigned.itemsize, "float64")
    return _BY_NAME[wider]


def promote_types(type1, type2):
    return _promote(_info(type1), _info(type2)).dtype


# Python scalars are "weak" (NEP 50): they take the array's type of their kind.
_WEAK_ORDER = {"b": 0, "i": 1, "f": 2}


def _weak_kind(x):
    t = builtins.type(x)
    if t is builtins.bool:
        return "b"
    if t is builtins.int:
        return "i"
    if t is builtins.float:
        return "f"
    if t is complex:
        raise NotImplementedError("fxvm's numpy has no complex numbers")
    return None


def _resolve(strong, weak):
    """The result info of operands with dtypes ``strong`` (infos) and
    Python scalars of kinds ``weak``."""
    result = None
    for info in strong:
        result = info if result is None or result is info else _promote(result, info)
    top = -1
    for kind in weak:
        if _WEAK_ORDER[kind] > top:
            top = _WEAK_ORDER[kind]
    if result is None:
        return _BY_NAME[("bool", "int64", "float64")[top]]
    if top == 1 and result.kind == "b":
        return _BY_NAME["int64"]
    if top == 2 and result.kind in "biu":
        return _BY_NAME["float64"]
    return result


def result_type(*arrays_and_dtypes):
    strong, weak = [], []
    for x in arrays_and_dtypes:
        kind = _weak_kind(x)
        if kind is not None:
            weak.append(kind)
            continue
        d = getattr(x, "dtype", None)
        strong.append(d._info if isinstance(d, dtype) else _info(x))
    return _resolve(strong, weak).dtype


def can_cast(from_, to, casting="safe"):
    f = _info(from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, builtins.type) else from_)
    t = _info(to)
    if casting == "unsafe":
        return True
    if casting in ("no", "equiv"):
        return f is t
    if casting == "same_kind":
        order = {"b": 0, "u": 1, "i": 1, "f": 2}
        return order[f.kind] <= order[t.kind] and (f.kind != "f" or t.kind == "f")
    if casting != "safe":
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    return _promote(f, t) is t


def _check_weak_int(value, info):
    """numpy's OverflowError for a Python int that the integer dtype cannot hold."""
    bounds = info.bounds
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise OverflowError(f"Python integer {value} out of bounds for {info.name}")


def _int_bounds(info):
    return info.bounds


class iinfo:
    """``np.iinfo(np.int32)``: the range of an integer type."""

    def __init__(self, int_type):
        info = _info(int_type if isinstance(int_type, builtins.type) else getattr(int_type, "dtype", int_type))
        if info.kind not in "iu":
            raise ValueError(f"Invalid integer data type '{info.kind}'.")
        self.dtype = info.dtype
        self.kind = info.kind
        self.bits = 8 * info.itemsize
        self.min, self.max = _int_bounds(info)

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype.name})"


_FLOAT_LIMITS = {
    # bits, eps, max, smallest normal, smallest subnormal, precision, resolution, nmant, minexp, maxexp
    "float16": (16, 0.0009765625, 65504.0, 6.103515625e-05, 6e-08, 3, 0.001, 10, -14, 16),
    "float32": (
        32,
        1.1920928955078125e-07,
        3.4028234663852886e38,
        1.1754943508222875e-38,
        1.401298464324817e-45,
        6,
        1e-06,
        23,
        -126,
        128,
    ),
    "float64": (
        64,
        2.220446049250313e-16,
        1.7976931348623157e308,
        2.2250738585072014e-308,
        5e-324,
        15,
        1e-15,
        52,
        -1022,
        1024,
    ),
}


class finfo:
    """``np.finfo(np.float32)``: the limits of a float type (numpy scalars)."""

    def __init__(self, dtype_):
        if isinstance(dtype_, (builtins.float, floating)) and not isinstance(dtype_, builtins.type):
            dtype_ = builtins.type(dtype_)
        info = _info(getattr(dtype_, "dtype", dtype_) if not isinstance(dtype_, builtins.type) else dtype_)
        if info.kind != "f":
            raise ValueError(f"data type {info.type!r} not inexact")
        bits, eps, fmax, tiny, sub, precision, resolution, nmant, minexp, maxexp = _FLOAT_LIMITS[info.name]
        make = info.type
        self.dtype = info.dtype
        self.bits = bits
        self.eps = make(eps)
        self.epsneg = make(eps / 2)
        self.max = make(fmax)
        self.min = make(-fmax)
        self.tiny = self.smallest_normal = make(tiny)
        self.smallest_subnormal = make(sub)
        self.precision = precision
        self.resolution = make(resolution)
        self.nmant = nmant
        self.nexp = {16: 5, 32: 8, 64: 11}[bits]
        self.minexp = minexp
        self.maxexp = maxexp
        self.iexp = self.nexp
        self.machep = -nmant
        self.negep = -nmant - 1

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min:.6e}, max={self.max:.6e}, dtype={self.dtype.name})"


# --------------------------------------------------------------- scalar types


class generic:
    """The base of numpy's scalar types. A scalar holds one value of its
    dtype; arithmetic goes through the ufuncs, so it follows numpy's rules."""

    __slots__ = ()
    _info = None


class number(generic):
    __slots__ = ()


class integer(number):
    __slots__ = ()


class signedinteger(integer):
    __slots__ = ()


class unsignedinteger(integer):
    __slots__ = ()


class inexact(number):
    __slots__ = ()


class floating(inexact):
    __slots__ = ()


class complexfloating(inexact):
    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise NotImplementedError("fxvm's numpy has no complex numbers")


def _scalar_class(name, base, info_name, extra=()):
    ns = {"__slots__": () if extra else ("_v",), "__module__": "numpy"}
    cls = builtins.type(name, (base,) + extra, ns)
    cls._info = _BY_NAME[info_name]
    _BY_NAME[info_name].type = cls
    return cls


bool_ = _scalar_class("bool", generic, "bool")
int8 = _scalar_class("int8", signedinteger, "int8")
uint8 = _scalar_class("uint8", unsignedinteger, "uint8")
int16 = _scalar_class("int16", signedinteger, "int16")
uint16 = _scalar_class("uint16", unsignedinteger, "uint16")
int32 = _scalar_class("int32", signedinteger, "int32")
uint32 = _scalar_class("uint32", unsignedinteger, "uint32")
int64 = _scalar_class("int64", signedinteger, "int64")
uint64 = _scalar_class("uint64", unsignedinteger, "uint64")
float16 = _scalar_class("float16", floating, "float16")
float32 = _scalar_class("float32", floating, "float32")
float64 = _scalar_class("float64", floating, "float64", (builtins.float,))
