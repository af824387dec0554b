"""``torch.cuda`` as a CPU-only PyTorch answers: no device is available;
queries that need one raise PyTorch's error, bookkeeping calls do nothing."""

import contextlib

__all__ = [
    "amp",
    "current_device",
    "device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_device_properties",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "seed",
    "seed_all",
    "set_device",
    "synchronize",
]


def _not_compiled():
    raise AssertionError("Torch not compiled with CUDA enabled")


def is_available():
    return False


def device_count():
    return 0


def is_initialized():
    return False


def is_bf16_supported(including_emulation=True):
    return False


def current_device():
    _not_compiled()


def set_device(device):
    _not_compiled()


def synchronize(device=None):
    _not_compiled()


def get_device_name(device=None):
    _not_compiled()


def get_device_properties(device=None):
    _not_compiled()


def manual_seed(seed):
    """Seeds the (absent) CUDA generators: nothing to do, as in PyTorch before CUDA is initialised."""


def manual_seed_all(seed):
    """See ``manual_seed``."""


def seed():
    """See ``manual_seed``."""


def seed_all():
    """See ``manual_seed``."""


def empty_cache():
    """Frees cached device memory: there is none."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


class device:
    """``with torch.cuda.device(i):`` needs a device."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        _not_compiled()

    def __exit__(self, *exc):
        return False


class _Amp:
    """``torch.cuda.amp``: autocast and GradScaler are disabled without
    CUDA, as PyTorch disables them."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=True):
        return contextlib.nullcontext()

    @staticmethod
    def GradScaler(init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
        from torch.amp import GradScaler

        return GradScaler("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)


amp = _Amp()


def _legacy_types():
    from torch._tensor_types import cuda_types

    return cuda_types


# torch.cuda.FloatTensor … (constructing one raises PyTorch's CPU-build TypeError).
globals().update(_legacy_types())
