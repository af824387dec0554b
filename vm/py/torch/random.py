"""``torch.random``: seeding the default generator, as PyTorch's module does."""

from torch._C import default_generator

__all__ = ["manual_seed", "seed", "initial_seed"]


def manual_seed(seed):
    """Seeds the default generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    """Seeds the default generator nondeterministically; returns the seed."""
    return default_generator.seed()


def initial_seed():
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()
