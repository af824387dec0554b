"""``Adam`` (with AMSGrad, and decoupled weight decay as an option)."""

import torch
from torch.optim.optimizer import Optimizer, _check_fused, _check_lr, _number, _step_tensor

__all__ = ["Adam"]


def _check_betas(betas):
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")


def _check_adam(lr, eps, betas, weight_decay):
    _check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    _check_betas(betas)
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


class Adam(Optimizer):
    def __init__(
        self,
        params,
        lr=1e-3,
        betas=(0.9, 0.999),
        eps=1e-8,
        weight_decay=0,
        amsgrad=False,
        *,
        foreach=None,
        maximize=False,
        capturable=False,
        differentiable=False,
        fused=None,
        decoupled_weight_decay=False,
    ):
        if isinstance(lr, torch.Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and foreach=True")
        _check_adam(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)
        _check_fused(defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for key, default in [
                ("amsgrad", False),
                ("maximize", False),
                ("foreach", None),
                ("capturable", False),
                ("differentiable", False),
                ("fused", None),
                ("decoupled_weight_decay", False),
            ]:
                group.setdefault(key, default)
            for p in group["params"]:
                s = self.state.get(p, {})
                if len(s) != 0 and not isinstance(s["step"], torch.Tensor):
                    s["step"] = _step_tensor(s["step"])

    def _init_state(self, group, p, state):
        state["step"] = _step_tensor()
        state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)

    def _hyper(self, group):
        beta1, beta2 = group["betas"]
        return dict(
            lr=_number(group["lr"]),
            beta1=_number(beta1),
            beta2=_number(beta2),
            eps=group["eps"],
            weight_decay=group["weight_decay"],
            amsgrad=group["amsgrad"],
            maximize=group["maximize"],
            decoupled_weight_decay=group["decoupled_weight_decay"],
        )

    @torch.no_grad()
    def step(self, closure=None):
        loss = self._closure_loss(closure)
        for group, params, grads, states in self._groups():
            self._update(
                torch._optim_adam_,
                group,
                params,
                grads,
                [s["exp_avg"] for s in states],
                [s["exp_avg_sq"] for s in states],
                [s["max_exp_avg_sq"] for s in states] if group["amsgrad"] else [],
                [s["step"] for s in states],
            )
        return loss
