"""``SGD`` with momentum, dampening, Nesterov and weight decay settings."""

import torch
from torch.optim.optimizer import Optimizer, _check_fused, _check_lr, _number

__all__ = ["SGD"]


class SGD(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        momentum=0,
        dampening=0,
        weight_decay=0,
        nesterov=False,
        *,
        maximize=False,
        foreach=None,
        differentiable=False,
        fused=None,
    ):
        _check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_fused(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _hyper(self, group):
        return dict(
            lr=_number(group["lr"]),
            momentum=group["momentum"],
            dampening=group["dampening"],
            weight_decay=_number(group["weight_decay"]),
            nesterov=group["nesterov"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every group (a momentum buffer starts as the gradient)."""
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            momentum = group["momentum"]
            buffers, fresh = [], []
            if momentum != 0:
                for i, (p, state) in enumerate(zip(params, states)):
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = torch.empty_like(p)
                        fresh.append(i)
                    buffers.append(buf)
            self._update(torch._optim_sgd_, group, params, grads, buffers, fresh)
        return loss
