"""``torch.autograd.Function``: custom operations with a hand-written
backward. ``apply`` runs ``forward`` without recording (tracing sees its
operations, as torch.fx does), then links its outputs to a node that calls
``backward`` with the context."""

import functools

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """What ``forward`` (or ``setup_context``) keeps for ``backward``."""

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    @property
    def saved_tensors(self):
        return getattr(self, "to_save", ())

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class FunctionMeta(type):
    """The class of ``Function`` subclasses (PyTorch's name for it)."""


class Function(metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx,
    *grads)`` (or ``forward(*args)`` plus ``setup_context(ctx, inputs,
    output)``), then call ``MyFunction.apply(*args)``."""

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        import torch
        from torch._native import load

        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, torch.Tensor) and a.requires_grad for a in args)
        with torch.no_grad():
            if cls.setup_context is not Function.setup_context:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        return load("torch._C._autograd")._function_apply(cls, ctx, list(args), output)


def once_differentiable(fn):
    """A backward that runs without recording (not differentiable twice)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        import torch

        with torch.no_grad():
            return fn(ctx, *args)

    return wrapper
