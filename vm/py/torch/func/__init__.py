"""``torch.func``: ``functional_call``, and ``grad``/``grad_and_value``
over fxvm's autograd (the transforms that need batching rules, such as
``vmap``, are not provided)."""

import functools

import torch
from torch.nn.utils.stateless import functional_call

__all__ = ["functional_call", "grad", "grad_and_value"]


def _leaves(tree):
    """The tensors of a nested dict/list/tuple, in order."""
    if isinstance(tree, torch.Tensor):
        return [tree]
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in _leaves(v)]
    return []


def _rebuild(tree, leaves):
    """``tree`` with its tensors replaced, in order, by ``leaves`` (an iterator)."""
    if isinstance(tree, torch.Tensor):
        return next(leaves)
    if isinstance(tree, dict):
        return {k: _rebuild(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(v, leaves) for v in tree)
    return tree


def grad_and_value(func, argnums=0, has_aux=False):
    """A function returning ``(gradient of func's output w.r.t. argument(s)
    argnums, output)``; an argument may be a dict, list or tuple of tensors,
    and its gradient has the same structure."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        args = list(args)
        with torch.enable_grad():
            for i in nums:
                args[i] = _rebuild(args[i], iter([t.detach().requires_grad_(True) for t in _leaves(args[i])]))
            out = func(*args, **kwargs)
            value, aux = out if has_aux else (out, None)
            if not isinstance(value, torch.Tensor) or value.numel() != 1:
                raise RuntimeError(
                    "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                    f"{value.dim() if isinstance(value, torch.Tensor) else 'no'} dims"
                )
            inputs = [leaf for i in nums for leaf in _leaves(args[i])]
            flat = iter(torch.autograd.grad(value, inputs))
        grads = tuple(_rebuild(args[i], flat) for i in nums)
        g = grads[0] if isinstance(argnums, int) else grads
        value = value.detach()
        return (g, (value, aux)) if has_aux else (g, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """A function returning the gradient of func's output w.r.t. argument(s) argnums."""
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper
