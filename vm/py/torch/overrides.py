"""``__torch_function__`` for functions written in Python, dispatched by the
same native code as the generated bindings, and ``TorchFunctionMode``: an
object whose ``__torch_function__`` sees every torch function, tensor
method, operator and subscript called while it is entered."""

import contextlib
import functools
import warnings

from torch import _C

__all__ = [
    "BaseTorchFunctionMode",
    "TorchFunctionMode",
    "has_torch_function",
    "handle_torch_function",
    "overridable",
    "is_tensor_method_or_property",
]


def has_torch_function(relevant_args):
    """True when an argument's type (other than Tensor) overrides ``__torch_function__``."""
    for a in relevant_args:
        tf = getattr(type(a), "__torch_function__", None)
        if tf is not None and not isinstance(a, (int, float, bool, str)) and a is not None:
            if type(a) is not _C.Tensor:
                return True
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    handled, result = _C._handle_torch_function(public_api, args, kwargs)
    if handled:
        return result
    raise TypeError(
        f"no implementation found for '{public_api.__module__}.{public_api.__name__}' on types that implement __torch_function__"
    )


def overridable(fn):
    """Makes a Python-level function dispatch ``__torch_function__`` like a native one."""

    @functools.wraps(fn)
    def public(*args, **kwargs):
        handled, result = _C._handle_torch_function(public, args, kwargs)
        if handled:
            return result
        return fn(*args, **kwargs)

    return public


def is_tensor_method_or_property(func):
    """True for ``Tensor`` methods and properties (``torch.Tensor.add``, ``Tensor.shape.__get__``)."""
    name = getattr(func, "__name__", None)
    if name is None:
        return False
    owner = getattr(func, "__self__", None)
    if owner is not None and type(owner).__name__ == "getset_descriptor":
        return getattr(_C.Tensor, owner.__name__, None) is owner
    return getattr(_C.Tensor, name, None) is func


class TorchFunctionMode:
    """Entered (``with mode:``), its ``__torch_function__(func, types, args,
    kwargs)`` handles each torch call in the block, with the mode itself
    off while it runs (so calling ``func`` inside does the real work)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        _C._push_torch_function_mode(self)
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        _C._pop_torch_function_mode()

    @classmethod
    def push(cls, *args, **kwargs):
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just `with Mode()`")
        return cls(*args, **kwargs)


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs each call as it is."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def _get_current_function_mode():
    stack = _C._torch_function_modes()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    return _C._torch_function_modes()


def _len_torch_function_stack():
    return len(_C._torch_function_modes())


def _get_function_stack_at(i):
    return _C._torch_function_modes()[i]


def _is_torch_function_mode_enabled():
    return bool(_C._torch_function_modes())


def _push_mode(mode):
    _C._push_torch_function_mode(mode)


def _pop_mode():
    return _C._pop_torch_function_mode()


@contextlib.contextmanager
def _pop_mode_temporarily():
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)
