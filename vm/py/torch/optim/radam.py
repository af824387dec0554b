"""``RAdam``: Adam with its adaptive step rectified by the variance of its estimate."""

import torch
from torch.optim.adam import _check_adam
from torch.optim.optimizer import Optimizer, _number, _step_tensor

__all__ = ["RAdam"]


class RAdam(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        decoupled_weight_decay=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
    ):
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return dict(
            lr=_number(group["lr"]),
            beta1=beta1,
            beta2=beta2,
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_radam_,
                group,
                params,
                grads,
                [s["exp_avg"] for s in states],
                [s["exp_avg_sq"] for s in states],
                [s["step"] for s in states],
            )
        return loss
