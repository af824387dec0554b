"""``torch.compiler``: the questions and markers model code addresses to
``torch.compile``. fxvm runs eagerly: nothing is ever being compiled, and
the markers leave functions as they are."""

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling", "is_dynamo_compiling"]


def is_compiling():
    """Whether ``torch.compile`` is tracing the caller: never in fxvm."""
    return False


def is_dynamo_compiling():
    return False


def disable(fn=None, recursive=True, *, reason=None):
    """Keeps ``fn`` out of compiled graphs; usable as ``@disable`` and
    ``@disable(recursive=False)``."""
    if fn is None:
        return lambda f: f
    return fn


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    return fn
