"""``torch.compiler``: the questions and markers model code addresses to
``torch.compile``. fxvm's ``torch.compile`` captures a graph by tracing;
``is_compiling()`` is true while it does, and the markers leave functions
as they are."""

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling", "is_dynamo_compiling", "reset"]


import functools

import torch

# Set by fxvm's capture while it traces.
_compiling = [False]

# While fxvm records a step (``fxvm.global_function`` on a function that
# calls ``backward()``): the Python every replay runs again, in the order
# of the tape's call steps, as (label, callable).
_step_calls = []


# While a step is recorded: what reads each live argument set, in the
# order of the tape's live ops, with the optimizer whose update it is, as
# (provider, optimizer).
_step_live = []


def _live_args(owner, provider):
    """Marks the next op recorded as one whose keyword arguments
    ``provider()`` gives anew at every replay (an optimizer's
    hyperparameters); ``owner`` (an optimizer) is guarded by its version."""
    if torch._C._step_live_args() is not None:
        _step_live.append((provider, owner))


def _run_live(label, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; while a step is recorded, the tape also
    marks it to run again — live, with these arguments — at every replay:
    Python whose state a tape of tensor ops could not carry (an optimizer's
    step reads its learning rate, a scheduler's step counts)."""
    call = torch._C._step_pause_for_call()
    if call is None:
        return fn(*args, **kwargs)
    try:
        out = fn(*args, **kwargs)
    finally:
        torch._C._step_resume()
    if any(isinstance(a, torch.Tensor) for a in (*args, *kwargs.values())):
        torch._C._step_refuse(f"{label} is given a tensor, which a replay would not give it anew")
    _step_calls.append((label, functools.partial(fn, *args, **kwargs)))
    return out


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
