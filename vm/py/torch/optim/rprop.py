"""``Rprop``: per-element step sizes that grow while the gradient's sign holds."""

import torch
from torch.optim.optimizer import Optimizer, _check_lr, _number, _step_tensor

__all__ = ["Rprop"]


class Rprop(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-2,
        etas=(0.5, 1.2),
        step_sizes=(1e-6, 50),
        *,
        capturable=False,
        foreach=None,
        maximize=False,
        differentiable=False,
    ):
        _check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["prev"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["step_size"] = torch.full_like(p.grad, _number(group["lr"]))

    def _hyper(self, group):
        etaminus, etaplus = group["etas"]
        step_size_min, step_size_max = group["step_sizes"]
        return dict(
            etaminus=etaminus,
            etaplus=etaplus,
            step_size_min=step_size_min,
            step_size_max=step_size_max,
            maximize=group["maximize"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_rprop_,
                group,
                params,
                grads,
                [s["prev"] for s in states],
                [s["step_size"] for s in states],
                [s["step"] for s in states],
            )
        return loss
