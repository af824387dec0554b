"""``torch.backends`` as a CPU-only PyTorch reports it."""

from torch.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
