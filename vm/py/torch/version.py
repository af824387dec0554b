"""Version information, as ``torch.version`` exposes it."""

from _fxvm_metadata import VERSIONS
from torch import _C

# The PyTorch API level fxvm follows.
__version__ = VERSIONS["torch"]
fxvm = _C._fxvm_version
cuda = None
debug = False
hip = None
rocm = None
xpu = None
