"""``torch.nn.functional``: every function is a row of the native op
registry (``fxvm_ops``), except those PyTorch itself writes in Python:
plain delegations to a Tensor method or another functional (no
``__torch_function__`` of their own, so tracing records the call they
make), and compositions that dispatch ``__torch_function__`` first, in
PyTorch's form, so that graphs record one call as torch.fx does."""

import math
import warnings

import torch as _torch
from torch._jit_internal import boolean_dispatched as _boolean_dispatched

globals().update(_torch._functional)


def _override(fn, args, **kwargs):
    """``__torch_function__`` for a function written here: ``args`` reach
    overrides positionally, ``kwargs`` by keyword. Returns (handled, result)."""
    return _torch._C._handle_torch_function(fn, args, kwargs)


def _boolean_dispatch(name, index, if_true, if_false):
    """PyTorch's ``boolean_dispatch``: with ``return_indices`` true (by
    keyword or at position ``index``) the call is ``if_true``'s, so graphs
    record ``max_pool2d_with_indices`` as torch.fx does."""

    def fn(*args, **kwargs):
        flag = kwargs["return_indices"] if "return_indices" in kwargs else len(args) > index and args[index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = __name__
    _boolean_dispatched[fn] = {
        "if_true": if_true,
        "if_false": if_false,
        "index": index,
        "default": False,
        "arg_name": "return_indices",
    }
    return fn


max_pool1d = _boolean_dispatch("max_pool1d", 6, max_pool1d_with_indices, max_pool1d)
max_pool2d = _boolean_dispatch("max_pool2d", 6, max_pool2d_with_indices, max_pool2d)
max_pool3d = _boolean_dispatch("max_pool3d", 6, max_pool3d_with_indices, max_pool3d)
adaptive_max_pool1d = _boolean_dispatch("adaptive_max_pool1d", 2, adaptive_max_pool1d_with_indices, adaptive_max_pool1d)
adaptive_max_pool2d = _boolean_dispatch("adaptive_max_pool2d", 2, adaptive_max_pool2d_with_indices, adaptive_max_pool2d)
adaptive_max_pool3d = _boolean_dispatch("adaptive_max_pool3d", 2, adaptive_max_pool3d_with_indices, adaptive_max_pool3d)


def _fractional_max_pool(name, spatial, sample):
    """``fractional_max_pool{2,3}d`` and its ``_with_indices`` form: one
    uniform sample per plane and axis is drawn here (as PyTorch does) unless
    given, then the native pool places its windows by them."""

    def with_indices(
        input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
    ):
        handled, result = _override(
            with_indices,
            (input, kernel_size),
            output_size=output_size,
            output_ratio=output_ratio,
            return_indices=return_indices,
            _random_samples=_random_samples,
        )
        if handled:
            return result
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
        if output_size is None:
            ratio = (output_ratio,) * spatial if isinstance(output_ratio, (int, float)) else tuple(output_ratio)
            if len(ratio) != spatial:
                raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of Ints.")
            output_size = [int(input.size(d - spatial) * r) for d, r in enumerate(ratio)]
        if _random_samples is None:
            n_batch = 1 if input.dim() == spatial + 1 else input.size(0)
            _random_samples = _torch.rand(n_batch, input.size(-spatial - 1), spatial, dtype=input.dtype)
        return sample(input, kernel_size, output_size, _random_samples)

    def values_only(
        input, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None
    ):
        handled, result = _override(
            dispatch,
            (input, kernel_size),
            output_size=output_size,
            output_ratio=output_ratio,
            return_indices=return_indices,
            _random_samples=_random_samples,
        )
        if handled:
            return result
        return with_indices(input, kernel_size, output_size, output_ratio, return_indices, _random_samples)[0]

    with_indices.__name__ = with_indices.__qualname__ = name + "_with_indices"
    dispatch = _boolean_dispatch(name, 4, with_indices, values_only)
    return with_indices, dispatch


fractional_max_pool2d_with_indices, fractional_max_pool2d = _fractional_max_pool(
    "fractional_max_pool2d", 2, _torch._C._nn.fractional_max_pool2d
)
fractional_max_pool3d_with_indices, fractional_max_pool3d = _fractional_max_pool(
    "fractional_max_pool3d", 3, _torch._C._nn.fractional_max_pool3d
)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """Samples from the Gumbel-softmax distribution: softmax of
    ``(logits + g) / tau`` with Gumbel noise ``g = -log(Exp(1))``; ``hard``
    returns one-hot vectors that carry the soft values' gradient."""
    handled, result = _override(gumbel_softmax, (logits,), tau=tau, hard=hard, eps=eps, dim=dim)
    if handled:
        return result
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_torch.empty(logits.shape, dtype=logits.dtype).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _torch.zeros(logits.shape, dtype=logits.dtype).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine transforms (for ``grid_sample``)."""
    handled, result = _override(affine_grid, (theta, size), align_corners=align_corners)
    if handled:
        return result
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(
                f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. Got {theta.shape}."
            )
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(
                f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. Got {theta.shape}."
            )
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, respectively. Got size {size}."
        )
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when align_corners=True. This is not an intended use case of affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _torch.affine_grid_generator(theta, size, align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``input`` read at the grid's normalised points (``[-1, 1]`` spans the input)."""
    handled, result = _override(
        grid_sample, (input, grid), mode=mode, padding_mode=padding_mode, align_corners=align_corners
    )
    if handled:
        return result
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in paddings:
        raise ValueError(
            f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(
            "Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for details.",
            stacklevel=2,
        )
        align_corners = False
    return _torch.grid_sampler(input, grid, modes[mode], paddings[padding_mode], align_corners)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    return _torch._grouped_mm(mat_a, mat_b, offs=offs, bias=bias, out_dtype=out_dtype)


def linear_cross_entropy(
    input,
    linear_weight,
    target,
    *,
    linear_bias=None,
    weight=None,
    reduction="mean",
    ignore_index=None,
    label_smoothing=0.0,
    options=None,
):
    """Cross entropy of ``linear(input, linear_weight, linear_bias)``; a
    K-dimensional weight ``[C, d1, …, dK, in]`` gives K-dimensional logits.
    ``options`` (PyTorch's chunked, memory-saving path) computes the same loss."""
    handled, result = _override(
        linear_cross_entropy,
        (input, linear_weight, target),
        linear_bias=linear_bias,
        weight=weight,
        reduction=reduction,
        ignore_index=ignore_index,
        label_smoothing=label_smoothing,
        options=options,
    )
    if handled:
        return result
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got {linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            f"expected equal input and linear_weight last dimensions (in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively"
        )
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got {tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} requires batched input, (N, {in_features}), got unbatched input with shape {tuple(input.shape)}"
        )
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(
        logits,
        target,
        weight=weight,
        reduction=reduction,
        ignore_index=-100 if ignore_index is None else ignore_index,
        label_smoothing=label_smoothing,
    )


def _attention_mask(mask, dtype):
    """A boolean mask (True = masked) as an additive float mask."""
    if mask is not None and mask.dtype == _torch.bool:
        return _torch.zeros(mask.shape, dtype=dtype).masked_fill(mask, float("-inf"))
    return mask


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """Attention over ``num_heads`` heads of sequence-first ``query``/``key``/
    ``value`` (``[L, N, E]``, or ``[L, E]`` unbatched): input projections
    (packed or separate), optional bias/zero key-value rows, masks, softmax
    with dropout, output projection. Returns ``(output, weights or None)``."""
    handled, result = _override(
        multi_head_attention_forward,
        (
            query,
            key,
            value,
            embed_dim_to_check,
            num_heads,
            in_proj_weight,
            in_proj_bias,
            bias_k,
            bias_v,
            add_zero_attn,
            dropout_p,
            out_proj_weight,
            out_proj_bias,
        ),
        training=training,
        key_padding_mask=key_padding_mask,
        need_weights=need_weights,
        attn_mask=attn_mask,
        is_causal=is_causal,
        use_separate_proj_weight=use_separate_proj_weight,
        q_proj_weight=q_proj_weight,
        k_proj_weight=k_proj_weight,
        v_proj_weight=v_proj_weight,
        static_k=static_k,
        static_v=static_v,
        average_attn_weights=average_attn_weights,
    )
    if handled:
        return result
    unbatched = query.dim() == 2
    if unbatched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method `generate_square_subsequent_mask` to create this mask."
        )
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        w_q, w_k, w_v = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q = b_k = b_v = None
    if in_proj_bias is not None:
        b_q, b_k, b_v = in_proj_bias.chunk(3)
    q = linear(query, w_q, b_q)
    k = linear(key, w_k, b_k)
    v = linear(value, w_v, b_v)
    attn_mask = _attention_mask(attn_mask, q.dtype)
    if bias_k is not None and bias_v is not None:
        k = _torch.cat([k, bias_k.repeat(1, bsz, 1)])
        v = _torch.cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = static_k if static_k is not None else k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = static_v if static_v is not None else v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = _torch.cat([k, _torch.zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype)], dim=1)
        v = _torch.cat([v, _torch.zeros((bsz * num_heads, 1, head_dim), dtype=v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        kpm = (
            _attention_mask(key_padding_mask, q.dtype)
            .view(bsz, 1, 1, src_len)
            .expand(-1, num_heads, -1, -1)
            .reshape(bsz * num_heads, 1, src_len)
        )
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    scores = _torch.bmm(q * (1.0 / math.sqrt(head_dim)), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    out = _torch.bmm(weights, v)
    out = out.transpose(0, 1).contiguous().view(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, embed_dim)
    if unbatched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if unbatched:
        weights = weights.squeeze(0)
    return out, weights


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def triplet_margin_with_distance_loss(
    anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False, reduction="mean"
):
    """A triplet loss over any distance: a Python composition in PyTorch too,
    around a callable that no registry row can take."""
    handled, result = _override(
        triplet_margin_with_distance_loss,
        (anchor, positive, negative),
        distance_function=distance_function,
        margin=margin,
        swap=swap,
        reduction=reduction,
    )
    if handled:
        return result
    if margin <= 0:
        raise ValueError(
            f"triplet_margin_with_distance_loss: expected margin to be greater than 0, got {margin} instead"
        )
    a_dim, p_dim, n_dim = anchor.ndim, positive.ndim, negative.ndim
    if not (a_dim == p_dim and p_dim == n_dim):
        raise RuntimeError(
            f"The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: anchor {a_dim}D, positive {p_dim}D, and negative {n_dim}D inputs"
        )
    distance = distance_function if distance_function is not None else pairwise_distance
    dist_pos = distance(anchor, positive)
    dist_neg = distance(anchor, negative)
    if swap:
        dist_neg = _torch.minimum(dist_neg, distance(positive, negative))
    loss = _torch.clamp_min(margin + dist_pos - dist_neg, 0)
    if reduction == "mean":
        return _torch.mean(loss)
    if reduction == "sum":
        return _torch.sum(loss)
    return loss
