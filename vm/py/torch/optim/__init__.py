"""``torch.optim``: optimizers and learning-rate schedules. fxvm has no
autograd, so parameters never carry gradients and ``step()`` leaves them
unchanged, exactly as PyTorch's ``step()`` does for parameters whose
``grad`` is None; the optimizers' groups, state dicts and schedules behave
as PyTorch's, so training scripts import, build and run."""

from torch.optim import lr_scheduler
from torch.optim.optimizer import Optimizer
from torch.optim.sgd import SGD
from torch.optim.adam import Adam, AdamW

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "lr_scheduler"]
