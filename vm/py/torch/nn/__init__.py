"""``torch.nn``: the Module system, parameters, layers, init and functional."""

from torch.nn.parameter import Parameter, Buffer
from torch.nn.modules import *  # noqa: F401,F403
from torch.nn.modules import Module
from torch.nn.modules import _LAZY as _LAZY_LAYERS
from torch.nn import functional
from torch.nn import init
from torch.nn import utils


def __getattr__(name):
    if name in _LAZY_LAYERS:
        from torch.nn import modules

        value = getattr(modules, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_LAYERS))
