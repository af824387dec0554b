"""make_tensor: random tensors of any dtype for tests, drawn as PyTorch
draws them (the same values after the same seed)."""

import math

import torch

_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)


def _bounds(low, high, lowest, highest, default_low, default_high):
    """Clamps the requested interval into what the dtype can hold."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    low = max(low, lowest)
    high = min(high, highest)
    return low, high


def make_tensor(
    *shape,
    dtype,
    device,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
    memory_format=None,
):
    """A tensor of `shape` with values uniformly drawn from [low, high)
    (defaults -9 and 9 or 10, clamped to the dtype), as PyTorch's
    torch.testing.make_tensor."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple, torch.Size)):
        shape = tuple(shape[0])
    if noncontiguous and memory_format is not None:
        raise ValueError(
            f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, "
            f"but got noncontiguous={noncontiguous} and memory_format={memory_format}"
        )
    if requires_grad and dtype in (torch.bool,) + _INTEGERS:
        raise ValueError(
            f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dtype}"
        )
    if dtype is torch.bool:
        result = torch.randint(0, 2, shape, device=device, dtype=dtype)
    elif dtype in _INTEGERS:
        info = torch.iinfo(dtype)
        low, high = _bounds(low, high, info.min, info.max + 1, -9, 10)
        result = torch.randint(math.ceil(low), math.ceil(high), shape, device=device, dtype=dtype)
    elif dtype in _FLOATS:
        info = torch.finfo(dtype)
        low, high = _bounds(low, high, info.min, info.max, -9, 9)
        result = torch.empty(shape, device=device, dtype=dtype)
        if high - low >= info.max:
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
    else:
        raise TypeError(
            f"The requested dtype '{dtype}' is not supported by torch.testing.make_tensor()."
            " To request support, file an issue at: https://github.com/pytorch/pytorch/issues"
        )
    if noncontiguous and result.numel() > 1:
        result = torch.repeat_interleave(result, 2, dim=-1)
        result = result[..., ::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        replacement = 1 if dtype in _INTEGERS or dtype is torch.bool else torch.finfo(dtype).tiny
        result[result == 0] = replacement
    if dtype in _FLOATS:
        result.requires_grad = requires_grad
    return result
