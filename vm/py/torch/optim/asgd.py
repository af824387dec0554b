"""``ASGD``: averaged SGD with a decaying rate."""

import torch
from torch.optim.optimizer import Optimizer, _check_lr, _number, _step_tensor

__all__ = ["ASGD"]


class ASGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        lambd=1e-4,
        alpha=0.75,
        t0=1e6,
        weight_decay=0,
        foreach=None,
        maximize=False,
        differentiable=False,
        capturable=False,
    ):
        _check_lr(lr)
        if not 0.0 <= lambd:
            raise ValueError(f"Invalid lambd value: {lambd}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["eta"] = _step_tensor(_number(group["lr"]))
        state["mu"] = _step_tensor(1.0)
        state["ax"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        return dict(
            lr=_number(group["lr"]),
            lambd=group["lambd"],
            alpha=group["alpha"],
            t0=group["t0"],
            weight_decay=group["weight_decay"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_asgd_,
                group,
                params,
                grads,
                [s["ax"] for s in states],
                [s["eta"] for s in states],
                [s["mu"] for s in states],
                [s["step"] for s in states],
            )
        return loss
