"""fxvm's numpy: numpy 2.x's API over fxvm's tensor core.

An ``ndarray`` keeps its elements in a ``torch.Tensor`` of the same bits,
so ``torch.from_numpy`` and ``Tensor.numpy()`` share memory both ways.
Types, promotion (NEP 50), printing and random streams are numpy's.
Complex, string and object arrays are not provided (they raise
NotImplementedError naming what was asked for).
"""

import math as _math

import _fxvm_metadata

import torch as _torch  # noqa: F401 (the storage arrays live in)

from numpy import _dtypes, _scalars  # noqa: F401 (installs the scalar types' behaviour)
from numpy._dtypes import (
    bool_,
    can_cast,
    complexfloating,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    floating,
    generic,
    iinfo,
    inexact,
    int8,
    int16,
    int32,
    int64,
    integer,
    number,
    promote_types,
    result_type,
    signedinteger,
    uint8,
    uint16,
    uint32,
    uint64,
    unsignedinteger,
)
from numpy._array import ndarray
from numpy._convert import array, asanyarray, asarray, ascontiguousarray, asfortranarray
from numpy import _methods  # noqa: F401 (installs ndarray's operators)
from numpy._ufuncs import *  # noqa: F401,F403
from numpy._ufuncs import _TABLE, divmod, frexp, ldexp, matmul, modf, ufunc  # noqa: F401
from numpy._reductions import (
    all,
    amax,
    amin,
    any,
    argmax,
    argmin,
    average,
    count_nonzero,
    cumprod,
    cumsum,
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    median,
    min,
    nanargmax,
    nanargmin,
    nanmax,
    nanmean,
    nanmedian,
    nanmin,
    nanpercentile,
    nanprod,
    nanquantile,
    nanstd,
    nansum,
    nanvar,
    percentile,
    prod,
    ptp,
    quantile,
    std,
    sum,
    var,
)
from numpy._creation import (
    arange,
    diag,
    diagflat,
    empty,
    empty_like,
    eye,
    fromfunction,
    fromiter,
    full,
    full_like,
    geomspace,
    identity,
    indices,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tri,
    zeros,
    zeros_like,
)
from numpy._shape import *  # noqa: F401,F403
from numpy._select import *  # noqa: F401,F403
from numpy._select import round, where  # noqa: F401
from numpy._functions import *  # noqa: F401,F403
from numpy._print import (
    array2string,
    array_repr,
    array_str,
    format_float_positional,
    format_float_scientific,
    get_printoptions,
    printoptions,
    set_printoptions,
)
from numpy._index_tricks import c_, index_exp, mgrid, ogrid, r_, s_  # noqa: F401
from numpy._reductions import nancumprod, nancumsum  # noqa: F401
from numpy._array import _FlatIter as flatiter  # noqa: F401
from numpy._io import frombuffer, fromfile, load, loadtxt, memmap, save, savetxt, savez, savez_compressed  # noqa: F401
from numpy import dtypes, exceptions, linalg, random, testing  # noqa: F401

__version__ = _fxvm_metadata.VERSIONS["numpy"]

# Aliases numpy 2 keeps.
bool = bool_
True_ = bool_._make(True)
False_ = bool_._make(False)
byte, ubyte, short, ushort = int8, uint8, int16, uint16
intc, uintc = int32, uint32
int_ = intp = long = longlong = int64
uint = uintp = ulong = ulonglong = uint64
half, single, double = float16, float32, float64
float_ = None
del float_

newaxis = None
typecodes = {
    "Character": "c",
    "Integer": "bhilqnp",
    "UnsignedInteger": "BHILQNP",
    "Float": "efdg",
    "Complex": "FDG",
    "AllInteger": "bBhHiIlLqQnNpP",
    "AllFloat": "efdgFDG",
    "Datetime": "Mm",
    "All": "?bhilqnpBHILQNPefdgFDGSUVOMm",
}
ScalarType = (
    int,
    float,
    complex,
    bool,
    bytes,
    str,
    memoryview,
    bool_,
    int8,
    uint8,
    int16,
    uint16,
    int32,
    uint32,
    int64,
    uint64,
    float16,
    float32,
    float64,
)
pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
euler_gamma = 0.5772156649015329
little_endian = True

sctypeDict = {name: info.type for name, info in _dtypes._BY_NAME.items()}


def issubdtype(arg1, arg2):
    """Whether ``arg1``'s type is ``arg2`` or below it (``np.floating``…)."""
    if not (isinstance(arg1, type) and issubclass(arg1, generic)):
        arg1 = dtype(arg1).type
    if not (isinstance(arg2, type) and issubclass(arg2, generic)):
        arg2 = dtype(arg2).type
    return issubclass(arg1, arg2)


def isdtype(dtype_, kind):
    info = dtype(dtype_)._info
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k == "bool" and info.kind == "b":
                return True
            if k == "signed integer" and info.kind == "i":
                return True
            if k == "unsigned integer" and info.kind == "u":
                return True
            if k == "integral" and info.kind in "iu":
                return True
            if k in ("real floating", "numeric") and info.kind == "f" or k == "numeric" and info.kind in "iu":
                return True
        elif dtype(k)._info is info:
            return True
    return False


# The ufunc buffer size numpy tunes its loops with; fxvm's kernels have no
# such buffer, so it is kept only to be read back.
_BUFSIZE = [8192]


def getbufsize():
    return _BUFSIZE[0]


def setbufsize(size):
    previous, _BUFSIZE[0] = _BUFSIZE[0], int(size)
    return previous


_ERRCALL = [None]


def seterrcall(func):
    previous, _ERRCALL[0] = _ERRCALL[0], func
    return previous


def geterrcall():
    return _ERRCALL[0]


def seterr(
    all=None,  # noqa: F811 (numpy's own keyword)
    divide=None,
    over=None,
    under=None,
    invalid=None,
):
    """numpy's floating-point error handling. fxvm computes as numpy does
    and reports nothing: "ignore" and "warn" (whose warning it does not
    print) are taken; "raise", "call", "print" and "log" would change what
    a script sees, so they are refused. The previous settings are returned."""
    changes = {}
    for key, value in (("divide", divide), ("over", over), ("under", under), ("invalid", invalid)):
        value = value if value is not None else all
        if value is None:
            continue
        if value not in ("ignore", "warn", "raise", "call", "print", "log"):
            raise ValueError(f"invalid error mode {value!r}")
        if value not in ("ignore", "warn"):
            raise NotImplementedError(f"fxvm's numpy does not report floating-point errors: seterr({key}={value!r})")
        changes[key] = value
    previous = dict(_ERRSTATE)
    _ERRSTATE.update(changes)
    return previous


def geterr():
    return dict(_ERRSTATE)


_ERRSTATE = {"divide": "warn", "over": "warn", "under": "ignore", "invalid": "warn"}


class errstate:
    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def __enter__(self):
        self._saved = seterr(**self._kwargs)

    def __exit__(self, *exc):
        seterr(**self._saved)

    def __call__(self, func):
        import functools

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self:
                return func(*args, **kwargs)

        return wrapper


def _from_torch(t):
    """``Tensor.numpy()``: an array over the tensor's storage."""
    from numpy._convert import _from_tensor

    return _from_tensor(t)
