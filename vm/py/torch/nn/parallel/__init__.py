"""``torch.nn.parallel`` without GPUs, as PyTorch behaves when no
accelerator is present: ``DataParallel`` wraps the module and calls it;
``data_parallel`` cannot pick a device."""

from torch.nn.modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    raise RuntimeError("device type could not be determined")
