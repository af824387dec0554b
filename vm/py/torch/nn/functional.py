"""``torch.nn.functional``: generated from the same op table as ``torch``."""

import torch as _torch

globals().update(_torch._functional)
