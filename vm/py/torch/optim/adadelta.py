"""``Adadelta``: steps scaled by running RMS of updates over running RMS of gradients."""

import torch
from torch.optim.optimizer import Optimizer, _check_lr, _number, _step_tensor

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    def __init__(
        self,
        params,
        lr=1.0,
        rho=0.9,
        eps=1e-6,
        weight_decay=0,
        foreach=None,
        *,
        capturable=False,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["acc_delta"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        return dict(
            lr=_number(group["lr"]),
            rho=group["rho"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_adadelta_,
                group,
                params,
                grads,
                [s["square_avg"] for s in states],
                [s["acc_delta"] for s in states],
                [s["step"] for s in states],
            )
        return loss
