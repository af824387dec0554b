"""``LBFGS``: limited-memory BFGS over all parameters as one flat vector,
with a fixed step or a strong-Wolfe line search (cubic interpolation,
bracketing then zoom), as PyTorch's (the minFunc algorithm). Its state keeps
PyTorch's keys, so a state dict moves between the two."""

import torch
from torch.optim.optimizer import Optimizer, _check_lr, _number

__all__ = ["LBFGS"]


def _cubic_minimum(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through two points with their slopes,
    clamped to ``bounds`` (default: between the points); the middle of the
    bounds when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (lo + hi) / 2.0
    d2 = d2_square.sqrt()
    if x1 <= x2:
        x = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        x = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(x, lo), hi)


class _Point:
    """A trial step with its loss, gradient and directional derivative."""

    __slots__ = ("t", "f", "g", "gtd")

    def __init__(self, t, f, g, gtd):
        self.t, self.f, self.g, self.gtd = t, f, g, gtd


def _strong_wolfe(evaluate, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """A step along ``d`` satisfying the strong Wolfe conditions (sufficient
    decrease ``c1``, curvature ``c2``): ``(loss, grad, t, evaluations)``."""
    # Every gradient here is a fresh tensor (`LBFGS._flat_grad` concatenates)
    # that nothing writes to: points share them without copies.
    d_norm = d.abs().max()

    def probe(t):
        f_new, g_new = evaluate(t)
        return _Point(t, f_new, g_new, g_new.dot(d))

    def decreases(p):
        return p.f <= f + c1 * p.t * gtd

    def curved(p):
        return abs(p.gtd) <= -c2 * gtd

    # Bracketing: grow the step until an interval holds a Wolfe point.
    prev = _Point(0, f, g, gtd)
    new = probe(t)
    evals, ls_iter, done, bracket = 1, 0, False, None
    while ls_iter < max_ls:
        if not decreases(new) or (ls_iter > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if curved(new):
            bracket, done = [new], True
            break
        if new.gtd >= 0:
            bracket = [prev, new]
            break
        t_next = _cubic_minimum(
            prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd, bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10)
        )
        prev, new = new, probe(t_next)
        evals += 1
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [_Point(0, f, g, None), _Point(new.t, new.f, new.g, None)]

    # Zoom: shrink the bracket by interpolation until a point satisfies both.
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        a, b = bracket[0].t, bracket[1].t
        if abs(b - a) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(a, bracket[0].f, bracket[0].gtd, b, bracket[1].f, bracket[1].gtd)
        top, bottom = max(a, b), min(a, b)
        eps = 0.1 * (top - bottom)
        # Too close to an end: move inside unless the last move was too.
        if min(top - t, t - bottom) < eps:
            if insufficient_progress or t >= top or t <= bottom:
                t = top - eps if abs(t - top) < abs(t - bottom) else bottom + eps
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        new = probe(t)
        evals += 1
        ls_iter += 1
        if not decreases(new) or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
        else:
            if curved(new):
                done = True
            elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
                bracket[high] = bracket[low]
            bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


class LBFGS(Optimizer):
    def __init__(
        self,
        params,
        lr=1,
        max_iter=20,
        max_eval=None,
        tolerance_grad=1e-7,
        tolerance_change=1e-9,
        history_size=100,
        line_search_fn=None,
        *,
        maximize=False,
    ):
        _check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(
            lr=lr,
            max_iter=max_iter,
            max_eval=max_eval,
            tolerance_grad=tolerance_grad,
            tolerance_change=tolerance_change,
            history_size=history_size,
            line_search_fn=line_search_fn,
            maximize=maximize,
        )
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def _flat_grad(self):
        views = [p.new_zeros(p.numel()) if p.grad is None else p.grad.reshape(-1) for p in self._params]
        flat = torch.cat(views, 0)
        if self.param_groups[0].get("maximize", False):
            flat.neg_()
        return flat

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(update[offset : offset + n].view_as(p), alpha=step_size)
            offset += n

    def _loss(self, closure):
        loss = float(closure())
        return -loss if self.param_groups[0].get("maximize", False) else loss

    def _evaluate_at(self, closure, x, t, d):
        """Loss and gradient at ``x + t·d``; the parameters are left at ``x``."""
        self._add_grad(t, d)
        loss = self._loss(closure)
        flat_grad = self._flat_grad()
        for p, saved in zip(self._params, x):
            p.copy_(saved)
        return loss, flat_grad

    @torch.no_grad()
    def step(self, closure):
        """Runs up to ``max_iter`` iterations; ``closure`` recomputes the
        loss and gradients. Returns the loss before the first."""
        closure = torch.enable_grad()(closure)
        if len(self._params) == 0:
            return closure()
        group = self.param_groups[0]
        lr = _number(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        maximize = group.get("maximize", False)

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = -float(orig_loss) if maximize else float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad, prev_loss = state.get("H_diag"), state.get("prev_flat_grad"), state.get("prev_loss")
        opt_cond = False
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = flat_grad.neg()
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                # Curvature pair from the last step, kept when positive.
                y = flat_grad.sub(prev_flat_grad)
                s = d.mul(t)
                ys = y.dot(s)
                if ys > 1e-10:
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                # Two-loop recursion: d = -H·g.
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = flat_grad.neg()
                for i in reversed(range(len(old_dirs))):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q.add_(old_dirs[i], alpha=-al[i])
                d = r = torch.mul(q, H_diag)
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r.add_(old_stps[i], alpha=al[i] - be_i)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone(memory_format=torch.contiguous_format)
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [p.clone(memory_format=torch.contiguous_format) for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda step: self._evaluate_at(closure, x_init, step, d),
                    t,
                    d,
                    loss,
                    flat_grad,
                    gtd,
                    max_ls=max_eval - current_evals,
                )
                self._add_grad(t, d)
                opt_cond = flat_grad.abs().max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = self._loss(closure)
                    flat_grad = self._flat_grad()
                    opt_cond = flat_grad.abs().max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break

        state.update(
            d=d,
            t=t,
            old_dirs=old_dirs,
            old_stps=old_stps,
            ro=ro,
            H_diag=H_diag,
            prev_flat_grad=prev_flat_grad,
            prev_loss=prev_loss,
        )
        return orig_loss
