"""``__torch_function__`` for functions written in Python, dispatched by the
same native code as the generated bindings."""

import functools

from torch import _C

__all__ = ["has_torch_function", "handle_torch_function", "overridable", "is_tensor_method_or_property"]


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
    raise TypeError(f"no implementation found for '{public_api.__module__}.{public_api.__name__}' on types that implement __torch_function__")


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
