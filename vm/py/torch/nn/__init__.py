"""``torch.nn``: the Module system, parameters, layers, init and functional."""

from torch.nn.parameter import Parameter, Buffer
from torch.nn.modules import *  # noqa: F401,F403
from torch.nn.modules import Module
from torch.nn import functional
from torch.nn import init
from torch.nn import utils
