"""Gradient clipping, as PyTorch's: the total norm is the norm of the
per-gradient norms; clipping scales every gradient in place by
``max_norm / (total_norm + 1e-6)`` when that is below 1."""

import torch

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]


def _as_list(tensors):
    return [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)


def _grads(parameters):
    return [p.grad for p in parameters if p.grad is not None]


@torch.no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the tensors' norms (all of them as one vector)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return torch.tensor(0.0)
    norms = [torch.linalg.vector_norm(g, norm_type) for g in tensors]
    total_norm = torch.linalg.vector_norm(torch.stack(norms), norm_type)
    if error_if_nonfinite and torch.logical_or(total_norm.isnan(), total_norm.isinf()):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so it cannot be "
            "clipped. To disable this error and scale the gradients by the non-finite norm anyway, set "
            "`error_if_nonfinite=False`"
        )
    return total_norm


@torch.no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the parameters' gradients so that ``total_norm`` becomes at most ``max_norm``."""
    grads = _grads(_as_list(parameters))
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef_clamped = torch.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped)


@torch.no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Clips the gradients' total norm to ``max_norm``; returns the norm before clipping."""
    parameters = _as_list(parameters)
    total_norm = get_total_norm(_grads(parameters), norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    import warnings

    warnings.warn(
        "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
        FutureWarning,
        stacklevel=2,
    )
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@torch.no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps every gradient into ``[-clip_value, clip_value]`` in place."""
    clip_value = float(clip_value)
    for g in _grads(_as_list(parameters)):
        g.clamp_(min=-clip_value, max=clip_value)
