"""``torch.functional``: where PyTorch defines ``split``, ``einsum``,
``meshgrid`` … in Python (graphs print them as ``torch.functional.split``);
here they are the registry's rows whose module is this one, exposed under
it as PyTorch exposes them."""

import torch as _torch

__all__ = sorted(name for name, f in vars(_torch).items() if callable(f) and getattr(f, "__module__", None) == __name__)
globals().update({name: getattr(_torch, name) for name in __all__})


def broadcast_shapes(*shapes):
    """The shape that tensors of ``shapes`` (sizes or ints) broadcast to."""
    result = []
    for i, shape in enumerate(shapes):
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        for d in dims:
            if not isinstance(d, int) or isinstance(d, bool):
                raise RuntimeError(
                    f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {shape}"
                )
            if d < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension ({d}): ({d})")
        padded = [1] * (len(dims) - len(result)) + result
        merged = []
        for k, (r, d) in enumerate(zip(padded, (1,) * (len(padded) - len(dims)) + dims)):
            if r != d and r != 1 and d != 1:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {d} at {k - len(padded)}! Mismatching argument at index {i} "
                    f"had {dims}; but expected shape should be broadcastable to {result}"
                )
            merged.append(d if r == 1 else r)
        result = merged
    return _torch.Size(result)


__all__.append("broadcast_shapes")
