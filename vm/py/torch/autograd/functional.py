"""``torch.autograd.functional``: Jacobians, Hessians and their products
with vectors, computed with backward passes (``jvp`` by the double-vjp
trick)."""

import torch

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _as_tuple(x, name, fn_name):
    if isinstance(x, torch.Tensor):
        return False, (x,)
    if not isinstance(x, tuple):
        x = tuple(x) if isinstance(x, list) else x
    if not isinstance(x, tuple) or not all(isinstance(t, torch.Tensor) for t in x):
        raise TypeError(
            f"The {name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the value at index 0 has type {type(x[0] if isinstance(x, tuple) and x else x)}."
        )
    return True, x


def _grad_inputs(inputs, create_graph):
    """Fresh leaves (or, with ``create_graph``, views keeping history)."""
    return tuple(
        i.view_as(i).requires_grad_() if create_graph and i.requires_grad else i.detach().requires_grad_()
        for i in inputs
    )


def _grads(outputs, inputs, grad_outputs, create_graph, strict, fn_name):
    outs = [o for o in outputs]
    gos = list(grad_outputs)
    pairs = [(o, g) for o, g in zip(outs, gos) if o.requires_grad]
    if not pairs:
        grads = (None,) * len(inputs)
    else:
        grads = torch.autograd.grad(
            [o for o, _ in pairs],
            inputs,
            [g for _, g in pairs],
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
        )
    result = []
    for k, (g, i) in enumerate(zip(grads, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {k}. This is not allowed in strict mode."
                )
            g = torch.zeros_like(i)
        result.append(g)
    return tuple(result)


def _restore(is_tuple, values):
    return tuple(values) if is_tuple else values[0]


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ J)``."""
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_inputs(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
                )
            v = (torch.ones_like(outputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "vjp")
        grads = _grads(outputs, inputs, v, create_graph, strict, "vjp")
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return _restore(is_outputs_tuple, outs), _restore(is_inputs_tuple, grads)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``, from two backward passes."""
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_inputs(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError(
                    "The vector v can only be None if the input to the user-provided function is a single Tensor with a single element."
                )
            v = (torch.ones_like(inputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "jvp")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        # uᵀ J is linear in u: its gradient with respect to u along v is J v.
        us = tuple(torch.zeros_like(o).requires_grad_() for o in outputs)
        g = _grads(outputs, inputs, us, True, strict, "jvp")
        jv = torch.autograd.grad(g, us, v, create_graph=create_graph, allow_unused=True)
        jv = tuple(torch.zeros_like(o) if j is None else j for j, o in zip(jv, outputs))
    outs = tuple(o if create_graph else o.detach() for o in outputs)
    return _restore(is_outputs_tuple, outs), _restore(is_outputs_tuple, jv)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian: for output ``i`` and input ``j``, a tensor of shape
    ``output.shape + input.shape``."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_inputs(inputs, create_graph)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        rows = []
        for i, out in enumerate(outputs):
            per_input = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                if out.requires_grad:
                    grads = torch.autograd.grad(
                        flat[k], inputs, retain_graph=True, create_graph=create_graph, allow_unused=True
                    )
                else:
                    grads = (None,) * len(inputs)
                for j, (g, x) in enumerate(zip(grads, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of input {j}. This is not allowed in strict mode."
                            )
                        g = torch.zeros_like(x)
                    per_input[j].append(g)
            rows.append(
                tuple(
                    torch.stack(gs).reshape(out.shape + x.shape)
                    if gs
                    else torch.zeros(out.shape + x.shape, dtype=x.dtype)
                    for gs, x in zip(per_input, inputs)
                )
            )
    if not create_graph:
        rows = [tuple(t.detach() for t in r) for r in rows]
    if is_outputs_tuple:
        return tuple(r if is_inputs_tuple else r[0] for r in rows)
    return rows[0] if is_inputs_tuple else rows[0][0]


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning a single-element tensor."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, torch.Tensor) or out.numel() != 1:
            raise RuntimeError("The function given to hessian should return a single Tensor with a single element.")
        return _restore(is_inputs_tuple, _grads((out,), xs, (torch.ones_like(out),), True, strict, "hessian"))

    return jacobian(gradient, inputs if is_inputs_tuple else inputs[0], create_graph=create_graph, strict=strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), vᵀ H)``."""
    with torch.enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
        inputs = _grad_inputs(inputs, create_graph)
        _, v = _as_tuple(v, "v", "vhp") if v is not None else (None, (torch.ones_like(inputs[0]),))
        out = func(*inputs)
        g = _grads((out,), inputs, (torch.ones_like(out),), True, strict, "vhp")
        h = _grads(g, inputs, v, create_graph, strict, "vhp")
    return (out if create_graph else out.detach()), _restore(is_inputs_tuple, h)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` (the Hessian is symmetric: ``vᵀ H``)."""
    return vhp(func, inputs, v, create_graph, strict)
