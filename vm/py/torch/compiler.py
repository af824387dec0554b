"""``torch.compiler``: the questions and markers model code addresses to
``torch.compile``. fxvm's ``torch.compile`` captures a graph by tracing;
``is_compiling()`` is true while it does, and the markers leave functions
as they are."""

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


# Set by fxvm's capture while it traces.
_compiling = [False]


def is_compiling():
    """Whether ``torch.compile`` is capturing (tracing) the caller."""
    return _compiling[0]


def is_dynamo_compiling():
    return _compiling[0]


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


def reset():
    """``torch.compiler.reset()``: compiled functions keep their own caches
    in fxvm (``fn.reset()`` clears one)."""
