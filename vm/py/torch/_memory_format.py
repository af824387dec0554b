"""``torch.memory_format``: how a tensor's elements are laid out in memory."""

from torch._named import _TorchName


class memory_format(_TorchName):
    __module__ = "torch"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")
