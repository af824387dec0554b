"""``torch.random``: seeding the default generator, as PyTorch's module does."""

from torch._C import default_generator

import contextlib

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng"]


def manual_seed(seed):
    """Seeds the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seeds the default generator nondeterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state, a uint8 tensor in PyTorch's layout."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restores the default generator's state from ``get_rng_state``."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """Runs the block with the default generator's state restored afterwards."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
