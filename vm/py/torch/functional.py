"""``torch.functional``: where PyTorch defines ``split``, ``einsum``,
``meshgrid`` … in Python (graphs print them as ``torch.functional.split``);
here they are the registry's rows whose module is this one, exposed under
it as PyTorch exposes them."""

import torch as _torch

__all__ = sorted(
    name for name, f in vars(_torch).items() if callable(f) and getattr(f, "__module__", None) == __name__
)
globals().update({name: getattr(_torch, name) for name in __all__})
