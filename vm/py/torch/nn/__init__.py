"""``torch.nn``: so far the functional API; the Module system comes next."""

from torch.nn import functional
