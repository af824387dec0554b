"""PyTorch's Python API over fxvm's native tensor core (``torch._C``)."""

from torch import _C
from torch import version
from torch._C import Tensor, Generator, default_generator, dtype, float32, float64, int32, int64, bool
from torch._C import float16, bfloat16, uint8, int8, int16
from torch._size import Size
from torch._device import device
from torch._memory_format import memory_format, contiguous_format, channels_last, channels_last_3d, preserve_format
from torch._layout import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged
from torch._tensor_str import set_printoptions
from torch.autograd import (
    no_grad,
    enable_grad,
    set_grad_enabled,
    is_grad_enabled,
    inference_mode,
    is_inference_mode_enabled,
)
from torch.autograd import is_anomaly_enabled, is_anomaly_check_nan_enabled

__version__ = version.__version__

float = float32
double = float64
half = float16
int = int32
long = int64
short = int16
# Dtypes fxvm names but stores no tensors of (complex, float8, …): code can
# name and inspect them; a tensor of one raises NotImplementedError.
globals().update(_C._unstored_dtypes)
cfloat = complex64
cdouble = complex128
chalf = complex32
bit = uint1

_functions, _functional, _linalg = _C._bind_ops()


class _LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: singular or non-positive-definite input."""


_LinAlgError.__module__ = "torch._C"
_C._LinAlgError = _LinAlgError
globals().update(_functions)

from torch.random import manual_seed, seed, initial_seed, get_rng_state, set_rng_state


_TENSOR_TYPENAMES = {
    float32: "torch.FloatTensor",
    float64: "torch.DoubleTensor",
    int32: "torch.IntTensor",
    int64: "torch.LongTensor",
    bool: "torch.BoolTensor",
    float16: "torch.HalfTensor",
    bfloat16: "torch.BFloat16Tensor",
    uint8: "torch.ByteTensor",
    int8: "torch.CharTensor",
    int16: "torch.ShortTensor",
}


def typename(obj):
    """``torch.FloatTensor`` for tensors; ``module.qualname`` for anything else."""
    if isinstance(obj, Tensor):
        return _TENSOR_TYPENAMES[obj.dtype]
    # Classes and functions name themselves; other objects by their class.
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = type(obj).__module__ or ""
        qualname = type(obj).__qualname__
    if module in ("", "builtins"):
        return qualname
    return f"{module}.{qualname}"


def is_tensor(obj):
    """True when ``obj`` is a ``torch.Tensor``."""
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def from_numpy(ndarray):
    """A tensor over a numpy array's elements: writes show on both sides."""
    import sys

    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(ndarray, numpy.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return ndarray.__fxvm_tensor__()


def get_default_dtype():
    """The dtype float data and float-making ops default to (float32 unless set)."""
    return _C._get_default_dtype()


def set_default_dtype(d):
    """Sets the default float dtype (float16, bfloat16, float32 or float64)."""
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not (d.is_floating_point or d.is_complex):
        raise TypeError("only floating-point types are supported as the default type")
    _C._set_default_dtype(d)


def get_default_device():
    """The device of the innermost ``with torch.device(...)`` context, else
    the CPU (where fxvm keeps every tensor, see ``torch.device``)."""
    from torch._device import _contexts

    return _contexts[-1] if _contexts else device("cpu")


def set_default_device(device):
    """Only the CPU (or None) can be the default device; another device
    raises the error making a tensor there raises."""
    if device is not None:
        empty(0, device=device)


def is_floating_point(input):
    return input.is_floating_point()


from torch import overrides, return_types
from torch._tensor_types import tensortype

globals().update(_tensor_types.cpu_types)
from torch.storage import (
    TypedStorage,
    UntypedStorage,
    FloatStorage,
    DoubleStorage,
    HalfStorage,
    BFloat16Storage,
    LongStorage,
    IntStorage,
    ShortStorage,
    CharStorage,
    ByteStorage,
    BoolStorage,
)
from torch._dtype_info import finfo, iinfo
from torch._checks import _check, _check_index, _check_is_size, _check_not_implemented, _check_type, _check_value
from torch._sym_types import SymBool, SymFloat, SymInt, sym_float, sym_int, sym_ite, sym_max, sym_min, sym_not, sym_sqrt


def _log_api_usage_once(event):
    """PyTorch's usage telemetry hook (off outside Meta's builds): nothing."""


def _get_tracing_state():
    """The ``torch.jit.trace`` in progress: fxvm has none."""
    return None


_C._log_api_usage_once = _log_api_usage_once
_C._get_tracing_state = _get_tracing_state
from torch import _dispatch

for _name in _dispatch.__all__:
    setattr(_C, _name, getattr(_dispatch, _name))


def save(obj, f, *args, **kwargs):
    """Writes ``obj`` to a path or binary file (see ``torch.serialization``)."""
    from torch import serialization  # pickle is slow to import; load it on use

    return serialization.save(obj, f, *args, **kwargs)


def load(f, *args, **kwargs):
    """Reads an object written by ``torch.save`` (see ``torch.serialization``)."""
    from torch import serialization

    return serialization.load(f, *args, **kwargs)


def _install_c_module(name, functions):
    """``torch._C._nn``/``torch._C._linalg``: where generated code finds the
    builtins PyTorch implements in C++ (``torch._C._nn.linear``), each by its
    own name (`F.logsigmoid` is `torch._C._nn.log_sigmoid`)."""
    import sys
    import types

    module = types.ModuleType(f"torch._C.{name}")
    for fn in functions:
        if getattr(fn, "__module__", None) == module.__name__:
            setattr(module, fn.__name__, fn)
    setattr(_C, name, module)
    sys.modules[module.__name__] = module


_install_c_module("_nn", _functional.values())
_install_c_module("_linalg", _linalg.values())

from torch import linalg


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, disable=False):
    """Captures ``model`` (a module or function) on its first call and
    replays the captured graph afterwards, recapturing when the inputs
    change beyond its guards (fxvm's ``global_function`` machinery, which
    lives with torch.fx)."""
    import fxvm._compile

    return fxvm._compile.compile(
        model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, disable=disable
    )


@overrides.overridable
def _assert(condition, message):
    """``assert condition, message`` that tracing can record."""
    assert condition, message


# Submodules PyTorch makes reachable as attributes of `torch`; imported on
# first use, since most scripts need only a few of them.
_LAZY_SUBMODULES = {
    "_dynamo",
    "accelerator",
    "amp",
    "ao",
    "backends",
    "compiler",
    "cuda",
    "distributed",
    "func",
    "functional",
    "fx",
    "hub",
    "jit",
    "library",
    "nn",
    "onnx",
    "optim",
    "testing",
    "utils",
}

# `torch` attributes defined in submodules imported on first use: functions
# PyTorch writes in Python in torch/functional.py beyond the registry's rows
# there, and autocast.
_LAZY_ATTRIBUTES = {"broadcast_shapes": "torch.functional", "autocast": "torch.amp"}


def __getattr__(name):
    if name == "ops":
        from torch._ops import ops

        return ops
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module(f"torch.{name}")
    if name in _LAZY_ATTRIBUTES:
        import importlib

        return getattr(importlib.import_module(_LAZY_ATTRIBUTES[name]), name)
    raise AttributeError(f"module 'torch' has no attribute '{name}'")


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off (``torch.autograd.set_detect_anomaly``'s switch)."""
    autograd._C._set_anomaly_enabled(bool(enabled), bool(check_nan))
