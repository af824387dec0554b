"""Folding an eval-mode BatchNorm into the convolution or linear layer
before it: ``y = bn(conv(x))`` becomes one layer with rescaled weights and
a shifted bias (what model libraries do to speed up inference)."""

import copy

import torch

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` computing ``bn(conv(x))`` (both in eval mode)."""
    assert not (conv.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(conv)
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias, transpose
    )
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused convolution's weight and bias, as Parameters: each output
    channel scaled by ``bn_w / sqrt(var + eps)`` and its bias shifted."""
    weight_dtype = conv_w.dtype
    bias_dtype = conv_b.dtype if conv_b is not None else weight_dtype
    if conv_b is None:
        conv_b = torch.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = torch.ones_like(bn_rm)
    if bn_b is None:
        bn_b = torch.zeros_like(bn_rm)
    inv_std = torch.rsqrt(bn_rv + bn_eps)
    # Output channels are dim 0 of a convolution's weight, dim 1 of a transposed one's.
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (conv_w.ndim - 2)
    weight = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=weight_dtype)
    bias = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=bias_dtype)
    return torch.nn.Parameter(weight, conv_w.requires_grad), torch.nn.Parameter(bias, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` computing ``bn(linear(x))`` (both in eval mode)."""
    assert not (linear.training or bn.training), "Fusion only for eval!"
    fused = copy.deepcopy(linear)
    assert linear.out_features == bn.num_features or bn.num_features == 1, (
        "To fuse, linear.out_features == bn.num_features or bn.num_features == 1"
    )
    assert bn.running_mean is not None and bn.running_var is not None
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias
    )
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused linear layer's weight and bias, as Parameters."""
    weight_dtype = linear_w.dtype
    bias_dtype = linear_b.dtype if linear_b is not None else weight_dtype
    if linear_b is None:
        linear_b = torch.zeros_like(bn_rm)
    scale = bn_w * torch.rsqrt(bn_rv + bn_eps)
    weight = linear_w * scale.unsqueeze(-1).to(dtype=weight_dtype)
    bias = ((linear_b - bn_rm) * scale + bn_b).to(dtype=bias_dtype)
    return torch.nn.Parameter(weight, linear_w.requires_grad), torch.nn.Parameter(bias, linear_b.requires_grad)
