"""``torch.nn.functional``: generated from the same op table as ``torch``,
plus compositions written here (each dispatching ``__torch_function__``)."""

import functools as _functools
import math as _math

import torch as _torch
from torch import _C
from torch.overrides import has_torch_function as _has_torch_function
from torch.overrides import overridable as _overridable

globals().update(_torch._functional)


def _traceable(n_positional):
    """Dispatches ``__torch_function__`` as PyTorch's Python-level functionals
    do: the first ``n_positional`` parameters positionally, every other one
    by keyword with its default filled in (traced graphs record this form)."""

    def wrap(fn):
        @_functools.wraps(fn)
        def public(*args, **kwargs):
            if _has_torch_function(args) or _has_torch_function(kwargs.values()):
                # inspect is slow to import; only tracing needs it.
                import inspect

                sig = inspect.signature(fn)
                names = list(sig.parameters)
                bound = sig.bind(*args, **kwargs)
                bound.apply_defaults()
                values = bound.arguments
                positional = tuple(values[n] for n in names[:n_positional])
                keywords = {n: values[n] for n in names[n_positional:]}
                handled, result = _C._handle_torch_function(public, positional, keywords)
                if handled:
                    return result
            return fn(*args, **kwargs)

        return public

    return wrap


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def _inplace(input, result, inplace):
    if inplace:
        return input.copy_(result)
    return result


@_traceable(1)
def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


_LEGACY_NAMES = {"torch.int64": "Long", "torch.int32": "Int", "torch.bool": "Bool"}


def _float_kernel(input, kernel):
    """PyTorch's activations have float kernels only: integer and bool inputs
    raise instead of being promoted."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_LEGACY_NAMES[str(input.dtype)]}\'')


@_traceable(1)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input.dtype == _torch.bool:
        raise NotImplementedError("Bool inputs not supported for hardtanh")
    return _inplace(input, _torch.clamp(input, min_val, max_val), inplace)


@_traceable(1)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    _float_kernel(input, "leaky_relu_cpu")
    return _inplace(input, _torch.where(input > 0, input, input * negative_slope), inplace)


@_traceable(1)
def elu(input, alpha=1.0, inplace=False):
    _float_kernel(input, "elu_cpu")
    return _inplace(input, _torch.where(input > 0, input, (_torch.exp(input) - 1) * alpha), inplace)


@_traceable(1)
def hardsigmoid(input, inplace=False):
    _float_kernel(input, "hardsigmoid_cpu")
    return _inplace(input, _torch.clamp(input / 6 + 0.5, 0.0, 1.0), inplace)


@_traceable(1)
def hardswish(input, inplace=False):
    _float_kernel(input, "hardswish_cpu")
    return _inplace(input, input * _torch.clamp(input / 6 + 0.5, 0.0, 1.0), inplace)


@_overridable
def logsigmoid(input):
    _float_kernel(input, "log_sigmoid_cpu")
    return -softplus(-input)


@_traceable(1)
def glu(input, dim=-1):
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim % input.dim() if -input.dim() <= dim < input.dim() else dim
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    a, b = input.chunk(2, dim)
    return a * _torch.sigmoid(b)


@_traceable(1)
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    denom = input.norm(p, dim, keepdim=True).clamp(min=eps).expand_as(input)
    return input / denom


@_overridable
def one_hot(tensor, num_classes=-1):
    if tensor.dtype != _torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if num_classes == -1:
            num_classes = int(tensor.max()) + 1
        elif int(tensor.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return (tensor.unsqueeze(-1) == _torch.arange(num_classes)).long()


def _broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    for i in reversed(range(n)):
        if a[i] != b[i] and a[i] != 1 and b[i] != 1:
            raise RuntimeError(
                f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at non-singleton dimension {i}"
            )
    return tuple(q if p == 1 else p for p, q in zip(a, b))


@_overridable
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    shape = _broadcast_shape(x1.shape, x2.shape)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        common = "Long" if _torch.int64 in (x1.dtype, x2.dtype) else "Int" if _torch.int32 in (x1.dtype, x2.dtype) else "Bool"
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is {common}")
    # Each side is normalised before the product, as PyTorch does, so that
    # large norms do not overflow.
    n1 = x1.norm(2, dim, keepdim=True).clamp(min=eps)
    n2 = x2.norm(2, dim, keepdim=True).clamp(min=eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


@_traceable(2)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    log_sig = logsigmoid(input)
    log_one_minus = logsigmoid(-input)
    if pos_weight is not None:
        loss = -(pos_weight * target * log_sig + (1 - target) * log_one_minus)
    else:
        loss = -(target * log_sig + (1 - target) * log_one_minus)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, size_average, reduce, reduction)


@_traceable(2)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) is deprecated. Please ensure they have the same size.")
    loss = -(target * _torch.clamp(_torch.log(input), min=-100) + (1 - target) * _torch.clamp(_torch.log(1 - input), min=-100))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, size_average, reduce, reduction)


@_traceable(2)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    diff = (input - target).abs()
    if beta == 0.0:
        loss = diff
    else:
        loss = _torch.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    return _reduce(loss, size_average, reduce, reduction)


def _reduce(loss, size_average, reduce, reduction):
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if (size_average and reduce) else ("sum" if reduce else "none")
    if reduction == "none":
        return loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    raise ValueError(f"{reduction} is not a valid value for reduction")


# Where PyTorch defines each of these; graphs print targets by module.
for _f in (relu6, hardtanh, leaky_relu, elu, hardsigmoid, hardswish, glu, normalize, binary_cross_entropy_with_logits,
           binary_cross_entropy, smooth_l1_loss, sigmoid, tanh):
    _f.__module__ = "torch.nn.functional"
logsigmoid.__module__ = one_hot.__module__ = "torch._C._nn"
cosine_similarity.__module__ = "torch"
del _f
