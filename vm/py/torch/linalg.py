"""``torch.linalg``: the registry's linear-algebra rows (``torch.linalg.qr``
is the builtin ``torch._C._linalg.linalg_qr``)."""

import torch as _torch

__all__ = sorted(_torch._linalg) + ["LinAlgError"]
globals().update(_torch._linalg)
LinAlgError = _torch._C._LinAlgError
