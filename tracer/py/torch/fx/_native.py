"""The native modules of torch.fx: ``torch._C._fx`` (the IR) and
``torch._C._replay`` (replaying captured graphs and steps)."""

from torch._native import load

fx = load("torch._C._fx")
replay = load("torch._C._replay")
