"""``torch.amp``: ``GradScaler`` (loss scaling, real on the CPU as in
PyTorch) and ``autocast``. fxvm computes in the dtypes it is given: an
autocast that would change them on the CPU is refused (rather than run in
float32 and answer differently); one that PyTorch disables — for CUDA,
which fxvm lacks, or ``enabled=False`` — is a no-op, as there."""

import contextlib
import warnings

from torch.amp.grad_scaler import GradScaler

__all__ = ["GradScaler", "autocast", "is_autocast_available"]


def is_autocast_available(device_type):
    return False


class autocast(contextlib.ContextDecorator):
    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        if enabled and device_type == "cuda":
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if enabled:
            raise NotImplementedError(
                f"fxvm does not implement autocast's mixed precision (device_type={device_type!r}); "
                "compute in the model's own dtype, or cast it with model.to(dtype)"
            )
        self._enabled = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


autocast.__module__ = "torch.amp.autocast_mode"
