"""``torch.nn.utils.parametrizations``: ``weight_norm`` as PyTorch 2 builds it,
on ``parametrize``: ``parametrizations.weight.original0`` (the magnitude)
and ``original1`` (the direction)."""

from torch.nn.modules.module import Module
from torch.nn.utils import parametrize
from torch.nn.utils.weight_norm import _weight_norm, norm_except_dim

__all__ = ["weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
