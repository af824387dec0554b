from torch.nn import functional as F
from torch.nn.modules.module import Module
from torch.nn.modules.utils import _ntuple, _pair, _quadruple
from torch import Tensor

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
]

_sextuple = _ntuple(6, "_sextuple")


class _PadNd(Module):
    """A fixed padding in one of F.pad's modes. Each family sets ``mode``;
    each class of it sets ``_expand``, which spreads one int over its dims."""

    __constants__ = ["padding"]
    mode = None
    _expand = None

    def __init__(self, padding):
        super().__init__()
        self.padding = self._expand(padding)

    def forward(self, input) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input) -> Tensor:
        self._check_input_dim(input)
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _expand = staticmethod(_pair)

    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class CircularPad2d(_CircularPadNd):
    _expand = staticmethod(_quadruple)

    def _check_input_dim(self, input):
        if input.dim() != 3 and input.dim() != 4:
            raise ValueError(f"expected 3D or 4D input (got {input.dim()}D input)")


class CircularPad3d(_CircularPadNd):
    _expand = staticmethod(_sextuple)

    def _check_input_dim(self, input):
        if input.dim() != 4 and input.dim() != 5:
            raise ValueError(f"expected 4D or 5D input (got {input.dim()}D input)")


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _expand = None

    def __init__(self, padding, value):
        super().__init__()
        self.padding = self._expand(padding)
        self.value = value

    def forward(self, input) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _expand = staticmethod(_pair)


class ConstantPad2d(_ConstantPadNd):
    _expand = staticmethod(_quadruple)


class ConstantPad3d(_ConstantPadNd):
    _expand = staticmethod(_sextuple)


class _ReflectionPadNd(_PadNd):
    mode = "reflect"


class ReflectionPad1d(_ReflectionPadNd):
    _expand = staticmethod(_pair)


class ReflectionPad2d(_ReflectionPadNd):
    _expand = staticmethod(_quadruple)


class ReflectionPad3d(_ReflectionPadNd):
    _expand = staticmethod(_sextuple)


class _ReplicationPadNd(_PadNd):
    mode = "replicate"


class ReplicationPad1d(_ReplicationPadNd):
    _expand = staticmethod(_pair)


class ReplicationPad2d(_ReplicationPadNd):
    _expand = staticmethod(_quadruple)


class ReplicationPad3d(_ReplicationPadNd):
    _expand = staticmethod(_sextuple)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
