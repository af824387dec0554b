"""``torch.distributions``: so far its ``constraints`` (the checkable sets
parameters and samples live in); the distribution classes are not in fxvm
yet, and reading one raises AttributeError."""

from torch.distributions import constraints

__all__ = ["constraints"]
