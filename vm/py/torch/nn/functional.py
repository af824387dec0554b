"""``torch.nn.functional``: every function is a row of the native op
registry (``fxvm_ops``), except the two PyTorch itself writes as plain
delegations to a Tensor method (no ``__torch_function__`` of their own, so
tracing records the method call)."""

import torch as _torch

globals().update(_torch._functional)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()
