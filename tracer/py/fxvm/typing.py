"""``fxvm.typing.Tensor[(2, 1, 3, 3), torch.float32]``: an input signature
for ``fxvm.global_function`` (OneFlow's ``tp.Numpy.Placeholder``). A size may
be ``None`` (any size: a symbolic dim); the dtype defaults to float32."""

import torch

__all__ = ["Tensor", "TensorSpec"]


class TensorSpec:
    """A tensor argument's declared shape and dtype."""

    def __init__(self, shape, dtype=torch.float32):
        if not isinstance(shape, (tuple, list)) or not all(s is None or (isinstance(s, int) and s >= 0) for s in shape):
            raise TypeError(f"a tensor signature's shape is a tuple of sizes (or None for any), not {shape!r}")
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"a tensor signature's dtype is a torch.dtype, not {dtype!r}")
        self.shape = tuple(shape)
        self.dtype = dtype

    def dynamic_dims(self):
        return [d for d, s in enumerate(self.shape) if s is None]

    def example(self):
        """A tensor of this signature (unknown sizes as 2, the smallest a
        symbolic size takes)."""
        return torch.zeros([2 if s is None else s for s in self.shape], dtype=self.dtype)

    def mismatch(self, value):
        """Why ``value`` does not fit, or None."""
        if not isinstance(value, torch.Tensor):
            return f"expected a tensor, got {type(value).__name__}"
        shape = tuple(value.shape)
        fits = len(shape) == len(self.shape) and all(s is None or s == n for s, n in zip(self.shape, shape))
        if value.dtype != self.dtype or not fits:
            return f"expected {self}, got {value.dtype} {shape}"
        return None

    def __repr__(self):
        sizes = ", ".join("?" if s is None else str(s) for s in self.shape)
        return f"{self.dtype} ({sizes}{',' if len(self.shape) == 1 else ''})"


class _TensorType:
    def __getitem__(self, spec):
        if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], torch.dtype):
            return TensorSpec(spec[0], spec[1])
        return TensorSpec(spec)

    def __repr__(self):
        return "fxvm.typing.Tensor"


Tensor = _TensorType()
