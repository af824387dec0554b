"""``gradcheck``/``gradgradcheck``: gradients from autograd compared with
central finite differences, one input element at a time (PyTorch's slow
mode), with its tolerances and its mismatch message."""

import warnings

import torch

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised when the analytical and numerical gradients differ."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, inputs):
    out = func(*inputs)
    return tuple(o for o in _as_tuple(out) if isinstance(o, torch.Tensor))


def _numerical(func, inputs, i, eps):
    """The Jacobian of every output with respect to input ``i``: one row per
    input element, one column per output element."""
    x = inputs[i]
    outs = _outputs(func, inputs)
    jac = [torch.zeros(x.numel(), o.numel(), dtype=o.dtype if o.is_floating_point() else torch.float64) for o in outs]
    flat = x.detach().reshape(-1)

    def at(k, value):
        # Written without history; evaluated with it (gradgradcheck's
        # function takes gradients itself).
        with torch.no_grad():
            flat[k] = value
        return [o.detach().reshape(-1).clone() for o in _outputs(func, inputs)]

    for k in range(x.numel()):
        orig = flat[k].item()
        before = at(k, orig - eps)
        after = at(k, orig + eps)
        with torch.no_grad():
            flat[k] = orig
        for j, (b, a) in enumerate(zip(before, after)):
            if a.is_floating_point():
                jac[j][k] = (a - b) / (2 * eps)
    return jac


def _analytical(func, inputs, i):
    """The same Jacobian from autograd: one backward pass per output element."""
    x = inputs[i]
    outs = _outputs(func, inputs)
    jac = []
    for o in outs:
        j = torch.zeros(x.numel(), o.numel(), dtype=o.dtype if o.is_floating_point() else torch.float64)
        if o.requires_grad:
            flat = o.reshape(-1)
            for k in range(o.numel()):
                (g,) = torch.autograd.grad(flat[k], x, retain_graph=True, allow_unused=True)
                if g is not None:
                    j[:, k] = g.reshape(-1)
        jac.append(j)
    return jac


def gradcheck(
    func,
    inputs,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_batched_forward_grad=False,
    check_forward_ad=False,
    check_backward_ad=True,
    fast_mode=False,
    masked=None,
):
    """Whether ``func``'s gradients at ``inputs`` match finite differences."""
    inputs = _as_tuple(inputs)
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("fxvm's gradcheck checks backward-mode gradients only")
    differentiable = [k for k, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]
    if not differentiable:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them have requires_grad=True."
        )
    for k in differentiable:
        if inputs[k].dtype != torch.float64:
            warnings.warn(
                f"Input #{k} requires gradient and is not a double precision floating point or complex. "
                "This check will likely fail if all the inputs are not of double precision floating point or complex. "
            )
    try:
        for i in differentiable:
            numerical = _numerical(func, inputs, i, eps)
            analytical = _analytical(func, inputs, i)
            for j, (a, n) in enumerate(zip(analytical, numerical)):
                if not torch.allclose(a, n, rtol, atol):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {j} with respect to input {i},\nnumerical:{n}\nanalytical:{a}\n"
                    )
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(
    func,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    gen_non_contig_grad_outputs=False,
    raise_exception=True,
    nondet_tol=0.0,
    check_undefined_grad=True,
    check_grad_dtypes=False,
    check_batched_grad=False,
    check_fwd_over_rev=False,
    check_rev_over_rev=True,
    fast_mode=False,
    masked=False,
):
    """``gradcheck`` of ``func``'s gradients (with ``grad_outputs``, random
    when not given) at ``inputs``."""
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _outputs(func, inputs)
        grad_outputs = tuple(torch.randn_like(o).requires_grad_() for o in outs if o.requires_grad)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    differentiable = [k for k, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.requires_grad]

    def first_grads(*args):
        ins, gos = args[:n], args[n:]
        outs = [o for o in _outputs(func, ins) if o.requires_grad]
        wrt = [ins[k] for k in differentiable]
        grads = torch.autograd.grad(outs, wrt, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(
        first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception
    )
