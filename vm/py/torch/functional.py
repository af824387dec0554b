"""``torch.functional``: where PyTorch defines ``split`` and ``einsum`` in
Python (graphs print them as ``torch.functional.split``); here they are the
registry's rows, exposed under this module as PyTorch exposes them."""

import torch as _torch

split = _torch.split
einsum = _torch.einsum

__all__ = ["einsum", "split"]
