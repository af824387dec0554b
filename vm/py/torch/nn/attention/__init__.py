"""``torch.nn.attention``: which scaled-dot-product-attention kernels may
run. fxvm has one CPU kernel for ``F.scaled_dot_product_attention``, which
computes what PyTorch's math kernel computes; ``sdpa_kernel`` records the
choice (so code can read it back) and the kernel runs whichever is allowed,
as PyTorch's CPU build falls back to its math or flash CPU kernels."""

import contextlib
import enum

__all__ = ["SDPBackend", "WARN_FOR_UNFUSED_KERNELS", "sdpa_kernel"]

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __repr__(self):
        return f"<SDPBackend.{self.name}: {self.value}>"


SDPBackend.__module__ = "torch._C"

# The backends the innermost `sdpa_kernel` context allows.
_allowed = [tuple(b for b in SDPBackend if b is not SDPBackend.ERROR)]


def _cur_sdpa_kernel_backends(with_priority=False):
    return list(_allowed[-1])


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Allows only ``backends`` (one or a list) inside the context."""
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(backends)
    if not all(isinstance(b, SDPBackend) for b in backends):
        raise AssertionError("Backend must be an instance of SDPBackend")
    _allowed.append(tuple(backends))
    try:
        yield {}
    finally:
        _allowed.pop()
