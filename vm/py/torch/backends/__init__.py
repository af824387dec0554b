"""``torch.backends`` as a CPU-only PyTorch reports it."""

from torch.backends import cuda, cudnn, mha, mps

__all__ = ["cuda", "cudnn", "mha", "mps"]
