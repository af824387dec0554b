"""``torch.utils.checkpoint``: activation checkpointing trades memory for
recomputation in the backward pass. fxvm has no backward pass, so a
checkpointed call is the call itself, with PyTorch's argument checks."""

__all__ = ["checkpoint", "checkpoint_sequential"]

# Options of the checkpoint itself, not of the checkpointed function.
_OPTIONS = frozenset(("preserve_rng_state", "context_fn", "determinism_check", "debug", "early_stop"))


def checkpoint(function, *args, use_reentrant=None, **kwargs):
    """``function(*args, **kwargs)``."""
    passed = {k: v for k, v in kwargs.items() if k not in _OPTIONS}
    if use_reentrant and passed:
        raise ValueError("Unexpected keyword arguments: " + ",".join(passed))
    return function(*args, **passed)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs a sequence of modules (or an ``nn.Sequential``) on ``input``."""
    import torch

    if isinstance(functions, torch.nn.Sequential):
        functions = list(functions.children())
    for fn in functions:
        input = fn(input)
    return input
