"""Hook handles, and ``BackwardHook``: what ``nn.Module``'s full backward
hooks stand on (the module's inputs and outputs pass through an identity
``Function`` whose backward node sees the gradients)."""

import torch

__all__ = ["RemovableHandle", "BackwardHook"]


class RemovableHandle:
    """Removes a hook from the dicts it was registered in."""

    _next_id = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = hooks_dict
        self.id = RemovableHandle._next_id
        RemovableHandle._next_id += 1
        self.extra_dict_ref = extra_dict

    def remove(self):
        self.hooks_dict_ref.pop(self.id, None)
        if self.extra_dict_ref is not None:
            self.extra_dict_ref.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


_identity = None


def _identity_function():
    """The identity as a ``Function`` of its own, a node in the backward
    graph (made on first use: this module loads before ``torch.autograd``)."""
    global _identity
    if _identity is None:

        class BackwardHookFunction(torch.autograd.Function):
            @staticmethod
            def forward(ctx, *args):
                ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
                return tuple(a.view_as(a) for a in args)

            @staticmethod
            def backward(ctx, *grads):
                return grads

        _identity = BackwardHookFunction
    return _identity


def _pass_through(fn, values):
    """``fn`` applied to the tensors of ``values`` (a tensor or a tuple),
    each tensor replaced by its counterpart, and where they were."""
    one = isinstance(values, torch.Tensor)
    items = (values,) if one else tuple(values) if isinstance(values, (tuple, list)) else None
    if items is None:
        return values, []
    where = [i for i, v in enumerate(items) if isinstance(v, torch.Tensor)]
    if not where:
        return values, []
    new = fn(*[items[i] for i in where])
    out = list(items)
    for i, t in zip(where, new):
        out[i] = t
    if one:
        return out[0], where
    return (type(values)(out) if isinstance(values, tuple) else out), where


class BackwardHook:
    """Calls a module's full backward pre-hooks with the gradients of its
    outputs, then its full backward hooks with those of its inputs (and
    the outputs'), as PyTorch's ``register_full_backward_hook`` does."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_tensors_index = []
        self.inputs_need_grad = False

    def _call_hooks(self, grad_inputs):
        """The full hooks on the inputs' gradients (``None`` for inputs
        that need none); a hook returning gradients replaces them."""
        res = tuple(grad_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    f"Backward hook returned an invalid number of grad_input, got {len(out)}, but expected {len(res)}"
                )
            res = tuple(out)
        return res

    def setup_input_hook(self, args):
        def fn(*tensors):
            self.inputs_need_grad = any(t.requires_grad for t in tensors)
            if not (self.inputs_need_grad and torch.is_grad_enabled()):
                return tensors
            new = _identity_function().apply(*tensors)
            node = next(t.grad_fn for t in new if t.grad_fn is not None)

            def hook(grad_inputs, _grad_outputs):
                # The identity's input gradients are the module inputs'.
                full = [None] * self.n_inputs
                for i, g in zip(self.input_tensors_index, grad_inputs):
                    full[i] = g
                res = self._call_hooks(full)
                return tuple(res[i] for i in self.input_tensors_index)

            node.register_hook(hook)
            return new

        self.n_inputs = len(args)
        new_args, where = _pass_through(fn, args)
        self.input_tensors_index = where
        return new_args

    def setup_output_hook(self, result):
        def fn(*tensors):
            if not (torch.is_grad_enabled() and any(t.requires_grad for t in tensors)):
                return tensors
            new = _identity_function().apply(*tensors)
            node = next(t.grad_fn for t in new if t.grad_fn is not None)

            def pre_hook(grad_outputs):
                self.grad_outputs = tuple(grad_outputs)
                for hook in self.user_pre_hooks:
                    out = hook(self.module, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(self.grad_outputs):
                        raise RuntimeError(
                            f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, but expected {len(self.grad_outputs)}"
                        )
                    self.grad_outputs = tuple(out)
                # No input needs a gradient: the hooks run here, with None.
                if not self.inputs_need_grad:
                    import warnings

                    warnings.warn(
                        "Full backward hook is firing when gradients are computed with respect to module outputs "
                        "since no inputs require gradients. See https://docs.pytorch.org/docs/main/generated/"
                        "torch.nn.Module.html#torch.nn.Module.register_full_backward_hook for more details.",
                        stacklevel=2,
                    )
                    self._call_hooks([None] * self.n_inputs)
                return self.grad_outputs

            node.register_prehook(pre_hook)
            return new

        new_result, _ = _pass_through(fn, result)
        return new_result
