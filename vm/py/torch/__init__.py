"""PyTorch's Python API over fxvm's native tensor core (``torch._C``)."""

from torch import _C
from torch import version

__version__ = version.__version__
