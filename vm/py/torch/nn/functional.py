"""``torch.nn.functional``: every function is a row of the native op
registry (``fxvm_ops``), except those PyTorch itself writes as plain
delegations to a Tensor method or to another functional (no
``__torch_function__`` of their own, so tracing records the call they make)."""

import warnings

import torch as _torch

globals().update(_torch._functional)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
    """A triplet loss over any distance: a Python composition in PyTorch too,
    around a callable that no registry row can take."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} instead")
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs")
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = _torch.minimum(dist_neg, distance(positive, negative))
    loss = _torch.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "mean":
        return _torch.mean(loss)
    if reduction == "sum":
        return _torch.sum(loss)
    return loss
