"""``RMSprop``: steps scaled by a running RMS of gradients (centered, with momentum)."""

import torch
from torch.optim.optimizer import Optimizer, _check_lr, _number, _step_tensor

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        alpha=0.99,
        eps=1e-8,
        weight_decay=0,
        momentum=0,
        centered=False,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["square_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if group["momentum"] > 0:
            state["momentum_buffer"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if group["centered"]:
            state["grad_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        return dict(
            lr=_number(group["lr"]),
            alpha=group["alpha"],
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            momentum=group["momentum"],
            centered=group["centered"],
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_rmsprop_,
                group,
                params,
                grads,
                [s["square_avg"] for s in states],
                [s["grad_avg"] for s in states] if group["centered"] else [],
                [s["momentum_buffer"] for s in states] if group["momentum"] > 0 else [],
                [s["step"] for s in states],
            )
        return loss
