"""The base of learning-rate schedules: ``LRScheduler`` (the chainable
step, the closed form for an explicit epoch, state dicts, PyTorch's
warnings) and the helpers schedulers share."""

import warnings
import weakref
from functools import wraps

import torch
from torch.optim.optimizer import Optimizer

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available. "
    "Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)

_HOW_TO = "See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"


def _copy(value):
    return value.clone() if isinstance(value, torch.Tensor) else value


def _group_values(optimizer, key):
    """``group[key]`` of every group (tensors copied, so later fills do not alias)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def _set_group_value(group, key, value):
    """Sets ``group[key]``; a tensor-valued option is filled in place."""
    if isinstance(group[key], torch.Tensor):
        group[key].fill_(value.item() if isinstance(value, torch.Tensor) else value)
    else:
        group[key] = value


def _per_group(name, optimizer, value):
    """``value`` for each group: a list of one per group, or one for all."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} has {len(value)} values, "
                f"param_groups has {len(optimizer.param_groups)}."
            )
    else:
        value = [value] * len(optimizer.param_groups)
    return [_copy(v) for v in value]


def _track_optimizer_steps(optimizer):
    """Wraps the optimizer's ``step`` (once) so that it records having run:
    a scheduler stepped before it warns."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    opt_ref = weakref.ref(optimizer)
    func = optimizer.step.__func__

    @wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func.__get__(opt, opt.__class__)(*args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


def _set_momentum(use_beta1, group, momentum):
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _momentum_kind(optimizer):
    """Whether the momentum a cyclic schedule moves is Adam's beta1 (else SGD's momentum)."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


def _live_step(step):
    """A scheduler's ``step`` that, in a training step being recorded,
    runs again at every replay (see ``torch.compiler._run_live``): the
    count and the rates it sets are Python state."""

    @wraps(step)
    def live(self, *args, **kwargs):
        if torch._C._step_recording():
            return torch.compiler._run_live(f"{type(self).__name__}.step", step, self, *args, **kwargs)
        return step(self, *args, **kwargs)

    return live


class LRScheduler:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            cls.step = _live_step(cls.__dict__["step"])

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with last_epoch >= 0.\n"
                        "This typically happens when:\n"
                        "1. You're trying to resume training from a checkpoint but haven't properly loaded the optimizer state\n"
                        "2. You're using last_epoch >= 0 for a fresh training run (not recommended)"
                    )
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_optimizer_steps(self.optimizer)
        self._initial_step()

    def _initial_step(self):
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)

    def get_last_lr(self):
        """The learning rates the last step set."""
        return self._last_lr

    def get_lr(self):
        raise NotImplementedError

    def _warn_outside_step(self):
        if not self._get_lr_called_within_step:
            warnings.warn(
                "To get the last learning rate computed by the scheduler, please use `get_last_lr()`.",
                UserWarning,
                stacklevel=3,
            )

    @_live_step
    def step(self, epoch=None):
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(
                    "Seems like `optimizer.step()` has been overridden after learning rate scheduler initialization. "
                    "Please, make sure to call `optimizer.step()` before `lr_scheduler.step()`. " + _HOW_TO,
                    UserWarning,
                    stacklevel=2,
                )
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(
                    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you "
                    "should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to "
                    "do this will result in PyTorch skipping the first value of the learning rate schedule. " + _HOW_TO,
                    UserWarning,
                    stacklevel=2,
                )
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            self._set_lrs(self.get_lr)
        else:
            self.last_epoch = epoch
            self._set_lrs(getattr(self, "_get_closed_form_lr", self.get_lr))

    def _set_lrs(self, compute):
        """Sets every group's lr to what ``compute()`` gives, called as from
        inside a step (``get_lr`` does not warn there)."""
        self._get_lr_called_within_step = True
        try:
            values = compute()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            _set_group_value(group, "lr", lr)
        self._last_lr = _group_values(self.optimizer, "lr")


class _LRScheduler(LRScheduler):
    """The deprecated name of ``LRScheduler``."""
