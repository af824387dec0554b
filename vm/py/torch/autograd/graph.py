"""``torch.autograd.graph``: the class of ``grad_fn`` objects."""

from torch._native import load as _load

Node = _load("torch._C._autograd").Node

__all__ = ["Node"]
