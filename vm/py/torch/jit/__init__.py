"""``torch.jit`` as eager PyTorch code meets it. fxvm runs models eagerly and
captures graphs with ``torch.fx``; TorchScript compilation is not available,
so ``script``/``trace`` say so and name the alternative, while the
annotations eager code carries (``ignore``, ``unused``, ``export``,
``Final``, ``is_scripting``) behave as in eager PyTorch."""

import typing

__all__ = [
    "Final",
    "ScriptFunction",
    "ScriptModule",
    "annotate",
    "export",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "script",
    "trace",
    "unused",
]

Final = typing.Final


def is_scripting():
    """False: code never runs under TorchScript in fxvm."""
    return False


def is_tracing():
    """False: ``torch.jit.trace`` never runs in fxvm."""
    return False


def ignore(drop=False, **kwargs):
    """``@torch.jit.ignore`` or ``@torch.jit.ignore(drop=...)``: the function, unchanged."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    """``@torch.jit.unused``: the function, unchanged."""
    return fn


def export(fn):
    """``@torch.jit.export``: the function, unchanged."""
    return fn


def interface(obj):
    """``@torch.jit.interface``: the class, unchanged."""
    return obj


def annotate(the_type, the_value):
    """``torch.jit.annotate(T, value)``: the value."""
    return the_value


class ScriptModule:
    """What ``torch.jit.script`` returns in PyTorch; nothing is one in fxvm."""


class ScriptFunction:
    """What ``torch.jit.script`` returns for a function in PyTorch."""


def _unavailable(name):
    raise NotImplementedError(
        f"torch.jit.{name}: fxvm does not compile TorchScript; run the model eagerly, "
        "or capture its graph with torch.fx.symbolic_trace(model)"
    )


def _script_if_tracing(fn):
    """Scripts ``fn`` when a TorchScript trace calls it; fxvm never traces
    TorchScript, so it is ``fn``."""
    return fn


def _overload_method(func):
    """Declares one TorchScript overload of a method; eager code runs the
    method's final definition, so the declaration is returned as is."""
    return func


def _overload(func):
    """Declares one TorchScript overload of a function (see ``_overload_method``)."""
    return func


def script(obj, *args, **kwargs):
    _unavailable("script")


def trace(func, *args, **kwargs):
    _unavailable("trace")
