"""Matching a call's arguments to its target's signature
(``normalize_function``, ``normalize_module``), as torch.fx does: functions
PyTorch writes in Python by their Python signature; builtin ops by their
overloads' typed signatures, read from the op registry."""

import inspect
import numbers
import types
import typing
import warnings
from typing import Any, List, NamedTuple, Optional, Tuple

import torch
from torch._jit_internal import boolean_dispatched
from torch.fx._native import fx as _fx

__all__ = [
    "ArgsKwargsPair",
    "get_signature_for_torch_op",
    "create_type_hint",
    "type_matches",
    "normalize_function",
    "normalize_module",
]


class ArgsKwargsPair(NamedTuple):
    """Simple named tuple for wrapping args/kwargs pairs."""

    args: Tuple[Any, ...]
    kwargs: dict


# Names the registry's overload signatures are annotated with.
_ANNOTATIONS = {
    "Tensor": torch.Tensor,
    "Number": numbers.Number,
    "List": List,
    "Optional": Optional,
    "Any": Any,
    "Device": torch.device,
    "Generator": getattr(torch, "Generator", Any),
}
_signature_cache = {}


def _signature_of(text):
    namespace = dict(_ANNOTATIONS)
    exec(f"def _op{text}: pass", namespace)
    return inspect.signature(namespace["_op"])


def get_signature_for_torch_op(op, return_schemas=False):
    """The signatures of a builtin op's overloads (None when ``op`` is not
    one); with ``return_schemas``, also their text."""
    texts = _fx.op_signatures(op)
    if texts is None:
        return (None, None) if return_schemas else None
    key = tuple(texts)
    signatures = _signature_cache.get(key)
    if signatures is None:
        signatures = _signature_cache[key] = [_signature_of(t) for t in texts]
    return (signatures, texts) if return_schemas else signatures


def create_type_hint(x):
    """``List[T]``/``Tuple[T, ...]`` for a list/tuple of types with a common
    base (``Any`` otherwise); anything else as given."""
    try:
        if isinstance(x, (list, tuple)):
            wrap = (lambda t: List[t]) if isinstance(x, list) else (lambda t: Tuple[t, ...])
            if not x:
                return wrap(Any)
            base = x[0]
            for t in x:
                if issubclass(t, base):
                    continue
                if issubclass(base, t):
                    base = t
                else:
                    return wrap(Any)
            return wrap(base)
    except Exception:
        warnings.warn(f"We were not able to successfully create type hint from the type {x}")
    return x


def type_matches(signature_type, argument_type):
    """Whether a value of ``argument_type`` fits a parameter annotated
    ``signature_type``."""
    origin = getattr(signature_type, "__origin__", signature_type)
    if signature_type is argument_type:
        return True
    if origin is typing.Union and signature_type != argument_type:
        return any(type_matches(c, argument_type) for c in typing.get_args(signature_type))
    if getattr(signature_type, "__origin__", None) is list:
        element = typing.get_args(signature_type)[0]
        if argument_type is int and element is int:
            return True
        if not inspect.isclass(element):
            warnings.warn(f"Does not support nested parametric types, got {signature_type}. Please file a bug.")
            return False
        if getattr(argument_type, "__origin__", None) is list:
            return issubclass(typing.get_args(argument_type)[0], element)
        if typing.get_origin(argument_type) is not tuple:
            return False
        contained = typing.get_args(argument_type)
        return contained == ((),) or all(c is Ellipsis or issubclass(c, element) for c in contained)
    if signature_type is int and argument_type is torch.dtype:
        return True
    if signature_type is numbers.Number and argument_type in {int, float}:
        return True
    if inspect.isclass(argument_type) and inspect.isclass(signature_type):
        return issubclass(argument_type, signature_type)
    return False


def _written_in_python(target):
    """Functions PyTorch writes in Python (and user functions), which are
    matched by their own signature; other builtins have none."""
    return not isinstance(target, types.BuiltinFunctionType) or getattr(target, "__text_signature__", None) is not None


def normalize_function(target, args, kwargs=None, arg_types=None, kwarg_types=None, normalize_to_only_use_kwargs=False):
    """``args``/``kwargs`` of a call to ``target`` matched to its signature,
    defaults filled in (all as keywords with
    ``normalize_to_only_use_kwargs``), or None when that cannot be decided.
    Builtins with several overloads need ``arg_types``/``kwarg_types``."""
    kwargs = {} if kwargs is None else kwargs
    # Builtin ops are matched by their overloads.
    signatures = get_signature_for_torch_op(target)
    if signatures is None and _written_in_python(target):
        analysed = target
        if target in boolean_dispatched:
            dispatched = boolean_dispatched[target]
            if_true, if_false = dispatched["if_true"], dispatched["if_false"]
            if inspect.signature(if_true).parameters != inspect.signature(if_false).parameters:
                return None
            analysed = if_true
        try:
            signature = inspect.signature(inspect.unwrap(analysed))
        except TypeError, ValueError:
            return None
        return _args_kwargs_to_normalized_args_kwargs(signature, args, kwargs, normalize_to_only_use_kwargs)
    if not signatures:
        return None
    matched = []
    for signature in signatures:
        try:
            signature.bind(*args, **kwargs)
            matched.append(signature)
        except TypeError:
            continue
    if not matched:
        return None
    if len(matched) == 1:
        return _args_kwargs_to_normalized_args_kwargs(matched[0], args, kwargs, normalize_to_only_use_kwargs)
    if arg_types is None and kwarg_types is None:
        listed = "\n".join(str(s) for s in matched)
        raise RuntimeError(
            f"Tried to normalize arguments to {torch.typename(target)} but the schema match was ambiguous! "
            f"Please provide argument types to the normalize_arguments() call. Available schemas:\n{listed}"
        )
    arg_types = arg_types or ()
    kwarg_types = kwarg_types or {}
    for signature in signatures:
        try:
            bound = signature.bind(*arg_types, **kwarg_types)
        except TypeError:
            continue
        if all(type_matches(signature.parameters[name].annotation, t) for name, t in bound.arguments.items()):
            return _args_kwargs_to_normalized_args_kwargs(signature, args, kwargs, normalize_to_only_use_kwargs)
    return None


def normalize_module(root, target, args, kwargs=None, normalize_to_only_use_kwargs=False):
    """``args``/``kwargs`` of a call to the ``torch.nn`` module at ``target``
    matched to its ``forward``; None for other modules."""
    try:
        submod = root.get_submodule(target)
    except AttributeError as e:
        raise RuntimeError(f"Tried to normalize node with target {target} but root did not have that target!") from e
    classname = submod.__class__.__name__
    if getattr(torch.nn, classname, None) != submod.__class__:
        return None
    signature = inspect.signature(inspect.unwrap(submod.forward))
    return _args_kwargs_to_normalized_args_kwargs(signature, args, kwargs or {}, normalize_to_only_use_kwargs)


def _args_kwargs_to_normalized_args_kwargs(sig, args, kwargs, normalize_to_only_use_kwargs):
    supported = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind not in supported for p in sig.parameters.values()):
        # `from` is a keyword: random_/uniform_ spell it positionally only.
        if list(sig.parameters) != ["input", "from", "to", "generator"]:
            return None
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    new_args, new_kwargs = [], {}
    for i, name in enumerate(sig.parameters):
        if not normalize_to_only_use_kwargs and i < len(args):
            new_args.append(bound.arguments[name])
        else:
            new_kwargs[name] = bound.arguments[name]
    return ArgsKwargsPair(tuple(new_args), new_kwargs)
