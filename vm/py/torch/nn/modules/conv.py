import math

import torch
from torch.nn import functional as F
from torch.nn import init
from torch.nn.parameter import Parameter
from torch.nn.modules.module import Module
from torch.nn.modules.utils import _single, _pair, _triple, _reverse_repeat_tuple
from torch import Tensor

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]


class _ConvNd(Module):
    __constants__ = [
        "stride",
        "padding",
        "dilation",
        "groups",
        "padding_mode",
        "output_padding",
        "in_channels",
        "out_channels",
        "kernel_size",
    ]

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(
                f"padding_mode must be one of {valid_padding_modes}, but got padding_mode='{padding_mode}'"
            )
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            self.weight = Parameter(torch.empty((in_channels, out_channels // groups, *kernel_size), dtype=dtype))
        else:
            self.weight = Parameter(torch.empty((out_channels, in_channels // groups, *kernel_size), dtype=dtype))
        if bias:
            self.bias = Parameter(torch.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    """Conv1d/2d/3d: `_ntuple` spreads each int over the spatial dims and
    `_functional` is the matching F.conv*d."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=1,
        bias=True,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        n = self._ntuple
        padding_ = padding if isinstance(padding, str) else n(padding)
        super().__init__(
            in_channels,
            out_channels,
            n(kernel_size),
            n(stride),
            padding_,
            n(dilation),
            False,
            n(0),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._functional
        if self.padding_mode != "zeros":
            return conv(
                F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                weight,
                bias,
                self.stride,
                self._ntuple(0),
                self.dilation,
                self.groups,
            )
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input) -> Tensor:
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _ntuple = staticmethod(_single)
    _functional = staticmethod(F.conv1d)


class Conv2d(_Conv):
    _ntuple = staticmethod(_pair)
    _functional = staticmethod(F.conv2d)


class Conv3d(_Conv):
    _ntuple = staticmethod(_triple)
    _functional = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        bias,
        padding_mode,
        device=None,
        dtype=None,
    ):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        """The output_padding that makes the output `output_size` (spatial
        sizes, or the full size), checked against the sizes reachable."""
        if output_size is None:
            return _single(self.output_padding)
        leading = 2 if input.dim() == num_spatial_dims + 2 else 1
        if len(output_size) == leading + num_spatial_dims:
            output_size = output_size[leading:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size must have {num_spatial_dims} or {leading + num_spatial_dims} elements (got {len(output_size)})"
            )
        smallest = [
            (input.size(d + leading) - 1) * stride[d]
            - 2 * padding[d]
            + (1 if dilation is None else dilation[d]) * (kernel_size[d] - 1)
            + 1
            for d in range(num_spatial_dims)
        ]
        largest = [low + s - 1 for low, s in zip(smallest, stride)]
        for size, low, high in zip(output_size, smallest, largest):
            if size < low or size > high:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range from {smallest} to {largest} (for an input of {input.size()[2:]})"
                )
        return [size - low for size, low in zip(output_size, smallest)]


class _ConvTranspose(_ConvTransposeNd):
    """ConvTranspose1d/2d/3d, as `_Conv` for the forward direction."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride=1,
        padding=0,
        output_padding=0,
        groups=1,
        bias=True,
        dilation=1,
        padding_mode="zeros",
        device=None,
        dtype=None,
    ):
        n = self._ntuple
        super().__init__(
            in_channels,
            out_channels,
            n(kernel_size),
            n(stride),
            n(padding),
            n(dilation),
            True,
            n(output_padding),
            groups,
            bias,
            padding_mode,
            device,
            dtype,
        )

    def forward(self, input, output_size=None) -> Tensor:
        if self.padding_mode != "zeros":
            raise ValueError(f"Only `zeros` padding mode is supported for {type(self).__name__}")
        spatial = len(self.kernel_size)
        output_padding = self._output_padding(
            input, output_size, self.stride, self.padding, self.kernel_size, spatial, self.dilation
        )
        return type(self)._functional(
            input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups, self.dilation
        )


class ConvTranspose1d(_ConvTranspose):
    _ntuple = staticmethod(_single)
    _functional = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    _ntuple = staticmethod(_pair)
    _functional = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    _ntuple = staticmethod(_triple)
    _functional = staticmethod(F.conv_transpose3d)
