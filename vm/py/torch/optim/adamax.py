"""``Adamax``: Adam scaled by the infinity norm of past gradients."""

import torch
from torch.optim.adam import _check_adam
from torch.optim.optimizer import Optimizer, _number, _step_tensor

__all__ = ["Adamax"]


class Adamax(Optimizer):
    def __init__(
        self,
        params,
        lr=2e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        foreach=None,
        *,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["exp_inf"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return dict(
            lr=_number(group["lr"]),
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_adamax_,
                group,
                params,
                grads,
                [s["exp_avg"] for s in states],
                [s["exp_inf"] for s in states],
                [s["step"] for s in states],
            )
        return loss
