"""Version information, as ``torch.version`` exposes it."""

from torch import _C

# The PyTorch API level fxvm follows.
__version__ = "2.15.0+fxvm"
fxvm = _C._fxvm_version
cuda = None
debug = False
hip = None
rocm = None
xpu = None
