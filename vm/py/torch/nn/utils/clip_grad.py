"""Gradient clipping. fxvm computes no gradients and ``.grad`` is always
None, so there is nothing to clip: the total norm is 0, PyTorch's answer
when no parameter has a gradient. The signatures are PyTorch's, so training
scripts that clip run unchanged."""

import torch

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    return torch.tensor(0.0)


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings

    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Nothing to clamp: no parameter has a gradient."""
