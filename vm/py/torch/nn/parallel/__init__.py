"""``torch.nn.parallel`` without GPUs, as PyTorch behaves when no
accelerator is present: ``DataParallel`` wraps the module and calls it;
``data_parallel`` cannot pick a device; ``DistributedDataParallel`` imports
(training scripts import it at the top) and, with no process group to
join, refuses to be built as PyTorch does before ``init_process_group``."""

from torch.nn.modules.module import Module

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    raise RuntimeError("device type could not be determined")


class DistributedDataParallel(Module):
    def __init__(
        self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, process_group=None, **kwargs
    ):
        super().__init__()
        import torch.distributed

        # PyTorch looks the default group up first; there is none in fxvm.
        torch.distributed.get_rank()


DistributedDataParallel.__module__ = "torch.nn.parallel.distributed"
