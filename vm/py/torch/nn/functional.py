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
