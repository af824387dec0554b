"""The native modules of torch.fx: ``torch._C._fx`` (the IR)."""

from torch._native import load

fx = load("torch._C._fx")
