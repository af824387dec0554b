//! `torch.nn.functional` layers: convolution, pooling, normalisation,
//! embedding, padding, resampling, attention, dropout.

use fxvm_tensor::ops::attention;
use fxvm_tensor::ops::bag::{self, BagMode};
use fxvm_tensor::ops::conv::{self, Padding};
use fxvm_tensor::ops::create::{self, DropoutKind};
use fxvm_tensor::ops::pool::{self, Window};
use fxvm_tensor::ops::resample::{self, InterpMode, PadMode, Target};
use fxvm_tensor::ops::shape;
use fxvm_tensor::ops::{nn, norm};
use fxvm_tensor::random::Generator;
use fxvm_tensor::{Result, Tensor, TensorError};

use super::maybe_in_place;
use crate::autograd::ops as o;
use crate::meta;
use crate::op::{NN, Op, Place, op};
use crate::value::{Or, Value};

use Place::{Functional, FunctionalIsTorch, Torch};

type ConvArgs = (
    Tensor,
    Tensor,
    Option<Tensor>,
    Vec<i64>,
    Or<String, Vec<i64>>,
    Vec<i64>,
    i64,
);

fn conv_row(decl: &'static str, spatial: usize) -> Op {
    op(
        decl,
        &[Torch, FunctionalIsTorch],
        move |(x, w, bias, stride, padding, dilation, groups): ConvArgs| {
            let padding = match padding {
                Or::A(s) => Padding::parse(&s)?,
                Or::B(p) => Padding::Explicit(p),
            };
            conv::conv(
                &x,
                &w,
                bias.as_ref(),
                &stride,
                &padding,
                &dilation,
                groups,
                spatial,
            )
        },
    )
    .grad(crate::derivatives::conv::conv(spatial))
}

type ConvTransposeArgs = (
    Tensor,
    Tensor,
    Option<Tensor>,
    Vec<i64>,
    Vec<i64>,
    Vec<i64>,
    i64,
    Vec<i64>,
);

fn conv_transpose_row(decl: &'static str, spatial: usize) -> Op {
    op(
        decl,
        &[Torch, FunctionalIsTorch],
        move |(x, w, bias, stride, padding, output_padding, groups, dilation): ConvTransposeArgs| {
            conv::conv_transpose(
                &x,
                &w,
                bias.as_ref(),
                &stride,
                &padding,
                &output_padding,
                groups,
                &dilation,
                spatial,
            )
        },
    )
    .grad(crate::derivatives::conv::conv_transpose(spatial))
}

/// `max_pool{n}d`; the `_with_indices` form (which `F.max_pool{n}d` becomes
/// with `return_indices=True`) always returns both results.
fn max_pool_row(decl: &'static str, places: &'static [Place], spatial: usize) -> Op {
    let pair = decl.contains("_with_indices(");
    op(
        decl,
        places,
        move |(x, kernel, stride, padding, dilation, ceil_mode, return_indices): (
            Tensor,
            Vec<i64>,
            Option<Vec<i64>>,
            Vec<i64>,
            Vec<i64>,
            bool,
            bool,
        )| {
            let stride = stride.unwrap_or_default();
            let w = Window {
                kernel: &kernel,
                stride: &stride,
                padding: &padding,
                dilation: &dilation,
                ceil_mode,
            };
            if !(return_indices || pair) {
                return pool::max_pool_values(&x, &w, spatial).map(Value::Tensor);
            }
            let (values, indices) = pool::max_pool(&x, &w, spatial)?;
            Ok(Value::Tuple(vec![
                Value::Tensor(values),
                Value::Tensor(indices),
            ]))
        },
    )
    .grad(crate::derivatives::conv::max_pool(spatial))
}

type AvgPoolArgs = (Tensor, Vec<i64>, Option<Vec<i64>>, Vec<i64>, bool, bool);

fn avg_pool(
    x: &Tensor,
    (kernel, stride, padding, ceil_mode): (Vec<i64>, Option<Vec<i64>>, Vec<i64>, bool),
    spatial: usize,
    count_include_pad: bool,
    divisor: Option<i64>,
) -> Result<Tensor> {
    let stride = stride.unwrap_or_default();
    let w = Window {
        kernel: &kernel,
        stride: &stride,
        padding: &padding,
        dilation: &[1],
        ceil_mode,
    };
    pool::avg_pool(x, &w, spatial, count_include_pad, divisor)
}

/// `avg_pool2d`/`avg_pool3d`, builtins of `torch._C._nn` only.
fn avg_pool_row(decl: &'static str, spatial: usize) -> Op {
    let row = op(
        decl,
        NN,
        move |(x, k, s, p, ceil, count, divisor): (
            Tensor,
            Vec<i64>,
            Option<Vec<i64>>,
            Vec<i64>,
            bool,
            bool,
            Option<i64>,
        )| { avg_pool(&x, (k, s, p, ceil), spatial, count, divisor) },
    )
    .grad(crate::derivatives::conv::avg_pool(spatial));
    // PyTorch's 3-d average pooling has no narrow-float kernel.
    if spatial == 3 {
        row.kernel_dtypes("avg_pool3d_out_frame", crate::kernels::AVG_POOL3D)
    } else {
        row
    }
}

/// `adaptive_max_pool{n}d`: the values, or with `return_indices` the pair.
fn adaptive_max_pool_row(decl: &'static str, places: &'static [Place], spatial: usize) -> Op {
    let pair = decl.contains("_with_indices(");
    op(
        decl,
        places,
        move |(x, size, return_indices): (Tensor, Vec<Option<i64>>, bool)| -> Result<Value> {
            let (values, indices) = pool::adaptive_max_pool(&x, &size, spatial)?;
            Ok(if return_indices || pair {
                Value::Tuple(vec![Value::Tensor(values), Value::Tensor(indices)])
            } else {
                Value::Tensor(values)
            })
        },
    )
    .grad(crate::derivatives::conv::adaptive_max_pool(spatial))
    .kernel_dtypes(adaptive_max_pool_kernel(spatial), crate::kernels::FLOATING)
}

/// The kernel PyTorch names for adaptive max pooling (1-d runs the 2-d one).
fn adaptive_max_pool_kernel(spatial: usize) -> &'static str {
    if spatial == 3 {
        "adaptive_max_pool3d_cpu"
    } else {
        "adaptive_max_pool2d"
    }
}

/// `max_unpool{n}d`: the output size is the pooling's input size, given
/// (spatial dims, or with the leading ones) or inferred from the window.
fn max_unpool_row(decl: &'static str, spatial: usize) -> Op {
    op(
        decl,
        &[Functional(3)],
        move |(x, indices, kernel, stride, padding, output_size): (
            Tensor,
            Tensor,
            Vec<i64>,
            Option<Vec<i64>>,
            Vec<i64>,
            Option<Vec<i64>>,
        )| {
            let name = ["max_unpool1d", "max_unpool2d", "max_unpool3d"][spatial - 1];
            let kernel = conv::per_dim(name, "kernel_size", &kernel, spatial)?;
            let stride = match stride {
                Some(s) if !s.is_empty() => conv::per_dim(name, "stride", &s, spatial)?,
                _ => kernel.clone(),
            };
            let padding = conv::per_dim(name, "padding", &padding, spatial)?;
            let input = &x.shape()[x.ndim().saturating_sub(spatial)..];
            let default: Vec<i64> = (0..spatial)
                .map(|d| {
                    (input[d] as i64 - 1) * stride[d] as i64 + kernel[d] as i64
                        - 2 * padding[d] as i64
                })
                .collect();
            let size = match output_size {
                None => default,
                Some(size) => {
                    let size = if size.len() == spatial + 2 {
                        size[size.len() - spatial..].to_vec()
                    } else {
                        size
                    };
                    if size.len() != spatial {
                        return Err(TensorError::value(
                            name,
                            format!(
                                "output_size should be a sequence containing {spatial} or {} elements, but it has a length of '{}'",
                                spatial + 2,
                                size.len()
                            ),
                        ));
                    }
                    for d in 0..spatial {
                        let (low, high) =
                            (default[d] - stride[d] as i64, default[d] + stride[d] as i64);
                        if size[d] <= low || size[d] >= high {
                            return Err(TensorError::value(
                                name,
                                format!(
                                    "invalid output_size \"{}\" (dim {d} must be between {low} and {high})",
                                    tuple(&size)
                                ),
                            ));
                        }
                    }
                    size
                }
            };
            let size: Vec<usize> = size.iter().map(|&s| s.max(0) as usize).collect();
            pool::max_unpool(&x, &indices, &size, spatial)
        },
    )
    .grad(crate::derivatives::conv::max_unpool(spatial))
}

/// `lp_pool{n}d`: the `p`-norm of each window, as PyTorch composes it
/// from an average pool of `x^p` (negative averages clamp to zero).
fn lp_pool_row(decl: &'static str, spatial: usize) -> Op {
    op(
        decl,
        &[Functional(3)],
        move |(x, p, kernel, stride, ceil): (Tensor, f64, Vec<i64>, Option<Vec<i64>>, bool)| {
            let name = ["lp_pool1d", "lp_pool2d", "lp_pool3d"][spatial - 1];
            let taps: usize = conv::per_dim(name, "kernel_size", &kernel, spatial)?
                .iter()
                .product();
            // Composite, as PyTorch's: the average of the p-th powers.
            let mut args = vec![
                Value::Tensor(o::pow_s(&x, p)?),
                Value::Ints(kernel),
                stride.map_or(Value::None, Value::Ints),
                Value::Ints(vec![0]),
                Value::Bool(ceil),
            ];
            if spatial > 1 {
                args.push(Value::Bool(true));
            }
            let out = o::call(&format!("avg_pool{spatial}d"), args, vec![])?;
            let magnitude = o::unary("relu", &o::unary("abs", &out)?)?;
            let signed = o::mul(&o::unary("sign", &out)?, &magnitude)?;
            let scaled = o::mul_scalar(&signed, fxvm_tensor::Scalar::Int(taps as i64))?;
            o::pow_s(&scaled, 1.0 / p)
        },
    )
    .composite()
}

/// A Python tuple's text, as PyTorch's messages print sizes.
fn tuple(v: &[i64]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A `normalized_shape` argument as sizes (negative ones as 0, which the
/// kernels refuse with PyTorch's message).
pub(super) fn normalized_shape(shape: Vec<i64>) -> Vec<usize> {
    shape.into_iter().map(|d| d.max(0) as usize).collect()
}

/// Layer norm over the trailing `shape` (`F.layer_norm` and `torch.layer_norm`).
pub(super) fn layer_norm(
    x: &Tensor,
    shape: Vec<i64>,
    w: Option<Tensor>,
    b: Option<Tensor>,
    eps: f64,
) -> Result<Tensor> {
    norm::layer_norm(x, &normalized_shape(shape), w.as_ref(), b.as_ref(), eps)
}

/// Batch and instance norm's arguments: `[running_mean, running_var,
/// weight, bias]`, whether to use the input's statistics, momentum, eps.
pub(super) fn norm_args<'a>(
    [running_mean, running_var, weight, bias]: [&'a Option<Tensor>; 4],
    training: bool,
    momentum: f64,
    eps: f64,
) -> nn::BatchNorm<'a> {
    nn::BatchNorm {
        running_mean: running_mean.as_ref(),
        running_var: running_var.as_ref(),
        weight: weight.as_ref(),
        bias: bias.as_ref(),
        training,
        momentum,
        eps,
    }
}

pub(super) const PLAIN: DropoutKind = DropoutKind {
    feature: false,
    alpha: false,
};
pub(super) const FEATURE: DropoutKind = DropoutKind {
    feature: true,
    alpha: false,
};

/// `F.batch_norm`'s (and group_norm's) check of training statistics: more
/// than one value per channel. The size prints as a `torch.Size` or, as
/// group_norm passes it, a list.
fn verify_batch_size(size: &[usize], as_torch_size: bool) -> Result<()> {
    let values = size.first().copied().unwrap_or(1) * size.iter().skip(2).product::<usize>();
    if values != 1 {
        return Ok(());
    }
    let list = format!("{size:?}");
    let shown = if as_torch_size {
        format!("torch.Size({list})")
    } else {
        list
    };
    Err(TensorError::value(
        "batch_norm",
        format!("Expected more than 1 value per channel when training, got input size {shown}"),
    ))
}

/// `F.instance_norm`'s check when it normalizes by the input's statistics.
fn verify_spatial_size(size: &[usize]) -> Result<()> {
    if size.iter().skip(2).product::<usize>() != 1 {
        return Ok(());
    }
    Err(TensorError::value(
        "instance_norm",
        format!(
            "Expected more than 1 spatial element when training, got input size torch.Size({size:?})"
        ),
    ))
}

/// A dropout functional. `spatial = Some(n)` is `dropout{n}d`, one draw per
/// channel; unbatched input (`n + 1` dims) gets a batch dim for the draw.
/// Only dropout1d refuses other ranks: PyTorch's dropout2d/3d warn and go on
/// (dropout2d reading 3-D input as (N, C, L)).
pub(super) fn dropout_row(
    decl: &'static str,
    places: &'static [Place],
    kind: DropoutKind,
    spatial: Option<usize>,
) -> Op {
    op(
        decl,
        places,
        move |(x, p, training, inplace): (Tensor, f64, bool, bool)| {
            dropout(&x, p, training, inplace, kind, spatial)
        },
    )
    .grad(crate::derivatives::nn::dropout(kind.alpha))
}

/// Dropout of every kind: `spatial` names dropout1d/2d/3d's rank rules.
pub(super) fn dropout(
    x: &Tensor,
    p: f64,
    training: bool,
    inplace: bool,
    kind: DropoutKind,
    spatial: Option<usize>,
) -> Result<Value> {
    create::check_dropout_probability(p)?;
    let d = x.ndim();
    if spatial == Some(1) && d != 2 && d != 3 {
        return Err(TensorError::runtime(
            "dropout1d",
            format!(
                "dropout1d: Expected 2D or 3D input, but received a {d}D input. Note that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs)."
            ),
        ));
    }
    if !training {
        return Ok(Value::Input(0));
    }
    // The mask's float scale cannot be stored in an integer tensor (p of
    // 0 or 1 and empty input need no scale).
    if !x.dtype().is_float() && p > 0.0 && p < 1.0 && x.numel() > 0 {
        return Err(TensorError::InplaceCast {
            from: fxvm_tensor::DType::F32,
            to: x.dtype(),
        });
    }
    let unbatched = matches!(spatial, Some(1) if d == 2) || matches!(spatial, Some(3) if d != 5);
    // A feature dropout that draws needs (batch and) channels: the rank
    // counts the batch dim dropout3d adds to an unbatched input.
    let rank = d + usize::from(spatial == Some(3) && unbatched);
    if kind.feature && p > 0.0 && x.numel() > 0 && rank < 2 {
        return Err(TensorError::runtime(
            "dropout",
            "Feature dropout requires at least 2 dimensions in the input",
        ));
    }
    let g = Generator::default_cpu();
    let result = if unbatched {
        let drawn = create::dropout(&shape::unsqueeze(x, 0)?, p, kind, &g)?;
        shape::squeeze(&drawn, Some(&[0]))
    } else {
        create::dropout(x, p, kind, &g)
    };
    maybe_in_place(x, || result, inplace)
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        conv_row(
            "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, str|int[] padding=0, int[] dilation=1, int groups=1)",
            1,
        ).meta(meta::conv),
        conv_row(
            "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, str|int[] padding=0, int[] dilation=1, int groups=1)",
            2,
        ).meta(meta::conv),
        conv_row(
            "conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, str|int[] padding=0, int[] dilation=1, int groups=1)",
            3,
        ).meta(meta::conv),
        conv_transpose_row(
            "conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] output_padding=0, int groups=1, int[] dilation=1)",
            1,
        ).meta(meta::conv_transpose),
        conv_transpose_row(
            "conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] output_padding=0, int groups=1, int[] dilation=1)",
            2,
        ).meta(meta::conv_transpose),
        conv_transpose_row(
            "conv_transpose3d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, int[] padding=0, int[] output_padding=0, int groups=1, int[] dilation=1)",
            3,
        ).meta(meta::conv_transpose),
        op(
            "conv_tbc(Tensor input, Tensor weight, Tensor bias, int pad=0)",
            &[Torch, FunctionalIsTorch],
            |(x, w, b, pad): (Tensor, Tensor, Tensor, i64)| conv::conv_tbc(&x, &w, &b, pad),
        )
        .grad(crate::derivatives::conv::conv_tbc()),
        max_pool_row(
            "max_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False)",
            &[Torch, Functional(2)],
            1,
        ).meta(meta::pool),
        max_pool_row(
            "max_pool1d_with_indices(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            1,
        ),
        max_pool_row(
            "max_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False)",
            &[Torch, Functional(2)],
            2,
        ).meta(meta::pool),
        max_pool_row(
            "max_pool2d_with_indices(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            2,
        ).meta(meta::pool),
        op(
            "avg_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True)",
            &[Torch, FunctionalIsTorch],
            |(x, k, s, p, ceil, count): AvgPoolArgs| avg_pool(&x, (k, s, p, ceil), 1, count, None),
        ).grad(crate::derivatives::conv::avg_pool(1)).meta(meta::pool),
        max_pool_row(
            "max_pool3d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False)",
            &[Torch, Functional(2)],
            3,
        ).meta(meta::pool),
        max_pool_row(
            "max_pool3d_with_indices(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            3,
        ),
        avg_pool_row(
            "avg_pool3d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)",
            3,
        ).meta(meta::pool),
        adaptive_max_pool_row(
            "adaptive_max_pool1d(Tensor input, int?[] output_size, bool return_indices=False)",
            &[Functional(2)],
            1,
        ).meta(meta::adaptive_pool),
        adaptive_max_pool_row(
            "adaptive_max_pool1d_with_indices(Tensor input, int?[] output_size, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            1,
        ),
        // The builtin `torch.adaptive_max_pool1d` always returns both.
        op(
            "adaptive_max_pool1d(Tensor input, int[] output_size)",
            &[Torch],
            |(x, size): (Tensor, Vec<i64>)| {
                let size: Vec<Option<i64>> = size.into_iter().map(Some).collect();
                let (values, indices) = pool::adaptive_max_pool(&x, &size, 1)?;
                Ok(Value::Tuple(vec![
                    Value::Tensor(values),
                    Value::Tensor(indices),
                ]))
            },
        ).grad(crate::derivatives::conv::adaptive_max_pool(1))
        .kernel_dtypes(adaptive_max_pool_kernel(1), crate::kernels::FLOATING)
        .meta(meta::adaptive_pool),
        adaptive_max_pool_row(
            "adaptive_max_pool2d(Tensor input, int?[] output_size, bool return_indices=False)",
            &[Functional(2)],
            2,
        )
        .python_reads(&[("input", "size")]).meta(meta::adaptive_pool),
        adaptive_max_pool_row(
            "adaptive_max_pool2d_with_indices(Tensor input, int?[] output_size, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            2,
        )
        .python_reads(&[("input", "size")]),
        adaptive_max_pool_row(
            "adaptive_max_pool3d(Tensor input, int?[] output_size, bool return_indices=False)",
            &[Functional(2)],
            3,
        )
        .python_reads(&[("input", "size")]),
        adaptive_max_pool_row(
            "adaptive_max_pool3d_with_indices(Tensor input, int?[] output_size, bool return_indices=False) -> tuple[Tensor, Tensor]",
            &[Functional(2)],
            3,
        )
        .python_reads(&[("input", "size")]),
        op(
            "adaptive_avg_pool3d(Tensor input, int?[] output_size) -> Tensor",
            &[Functional(2)],
            |(x, size): (Tensor, Vec<Option<i64>>)| pool::adaptive_avg_pool(&x, &size, 3),
        )
        .python_reads(&[("input", "size")]).grad(crate::derivatives::conv::adaptive_avg_pool(3)).meta(meta::adaptive_pool),
        lp_pool_row(
            "lp_pool1d(Tensor input, float norm_type, int[] kernel_size, int[]? stride=None, bool ceil_mode=False) -> Tensor",
            1,
        )
        .python_reads(&[("input", "pow")]),
        lp_pool_row(
            "lp_pool2d(Tensor input, float norm_type, int[] kernel_size, int[]? stride=None, bool ceil_mode=False) -> Tensor",
            2,
        )
        .python_reads(&[("input", "pow")]),
        lp_pool_row(
            "lp_pool3d(Tensor input, float norm_type, int[] kernel_size, int[]? stride=None, bool ceil_mode=False) -> Tensor",
            3,
        )
        .python_reads(&[("input", "pow")]),
        op(
            "unfold(Tensor input, int[] kernel_size, int[] dilation=1, int[] padding=0, int[] stride=1) -> Tensor",
            &[Functional(2)],
            |(x, k, d, p, s): (Tensor, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>)| {
                conv::fold::unfold(&x, &k, &d, &p, &s)
            },
        )
        .grad(crate::derivatives::conv::im2col()),
        op(
            "fold(Tensor input, int[] output_size, int[] kernel_size, int[] dilation=1, int[] padding=0, int[] stride=1) -> Tensor",
            &[Functional(3)],
            |(x, o, k, d, p, s): (Tensor, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>)| {
                conv::fold::fold(&x, &o, &k, &d, &p, &s)
            },
        )
        .grad(crate::derivatives::conv::col2im()),
        max_unpool_row(
            "max_unpool1d(Tensor input, Tensor indices, int[] kernel_size, int[]? stride=None, int[] padding=0, int[]? output_size=None) -> Tensor",
            1,
        ),
        max_unpool_row(
            "max_unpool2d(Tensor input, Tensor indices, int[] kernel_size, int[]? stride=None, int[] padding=0, int[]? output_size=None) -> Tensor",
            2,
        ),
        max_unpool_row(
            "max_unpool3d(Tensor input, Tensor indices, int[] kernel_size, int[]? stride=None, int[] padding=0, int[]? output_size=None) -> Tensor",
            3,
        ),
        avg_pool_row(
            "avg_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)",
            2,
        ).meta(meta::pool),
        op(
            "adaptive_avg_pool1d(Tensor input, int?[] output_size)",
            &[Torch, FunctionalIsTorch],
            |(x, size): (Tensor, Vec<Option<i64>>)| pool::adaptive_avg_pool(&x, &size, 1),
        ).grad(crate::derivatives::conv::adaptive_avg_pool(1)).meta(meta::adaptive_pool),
        op(
            "adaptive_avg_pool2d(Tensor input, int?[] output_size) -> Tensor",
            &[Functional(2)],
            |(x, size): (Tensor, Vec<Option<i64>>)| pool::adaptive_avg_pool(&x, &size, 2),
        )
        .python_reads(&[("input", "size")]).grad(crate::derivatives::conv::adaptive_avg_pool(2)).meta(meta::adaptive_pool),
        op(
            "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None, bool training=False, float? momentum=0.1, float eps=1e-05) -> Tensor",
            &[Functional(3)],
            |(x, rm, rv, w, b, training, momentum, eps): (
                Tensor,
                Option<Tensor>,
                Option<Tensor>,
                Option<Tensor>,
                Option<Tensor>,
                bool,
                f64,
                f64,
            )| {
                if training {
                    verify_batch_size(x.shape(), true)?;
                }
                nn::batch_norm(&x, &norm_args([&rm, &rv, &w, &b], training, momentum, eps))
            },
        ).grad(crate::derivatives::norm::batch_norm(crate::derivatives::norm::BatchNormArgs { running_mean: 1, running_var: 2, weight: 3, bias: 4, training: 5, eps: 7 })).meta(meta::same),
        op(
            "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
            &[Functional(2)],
            |(x, shape, w, b, eps): (Tensor, Vec<i64>, Option<Tensor>, Option<Tensor>, f64)| {
                layer_norm(&x, shape, w, b, eps)
            },
        ).grad(crate::derivatives::norm::layer_norm()).meta(meta::same),
        op(
            "rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
            &[Torch, Functional(2)],
            |(x, shape, w, eps): (Tensor, Vec<i64>, Option<Tensor>, Option<f64>)| {
                let shape = normalized_shape(shape);
                // None: the machine epsilon of the input's dtype (torch.finfo(dtype).eps).
                let eps = eps.unwrap_or(if x.dtype() == fxvm_tensor::DType::F32 {
                    f64::from(f32::EPSILON)
                } else {
                    f64::EPSILON
                });
                norm::rms_norm(&x, &shape, w.as_ref(), eps)
            },
        ).grad(crate::derivatives::norm::rms_norm()).meta(meta::same),
        op(
            "local_response_norm(Tensor input, int size, float alpha=0.0001, float beta=0.75, float k=1.0) -> Tensor",
            &[Functional(2)],
            |(x, size, alpha, beta, k): (Tensor, i64, f64, f64, f64)| {
                norm::local_response_norm(&x, size, alpha, beta, k)
            },
        )
        .grad(crate::derivatives::norm::local_response_norm())
        .python_reads(&[("input", "dim")]).meta(meta::same),
        op(
            "instance_norm(Tensor input, Tensor? running_mean=None, Tensor? running_var=None, Tensor? weight=None, Tensor? bias=None, bool use_input_stats=True, float momentum=0.1, float eps=1e-05) -> Tensor",
            &[Functional(1)],
            |(x, rm, rv, w, b, use_input_stats, momentum, eps): (
                Tensor,
                Option<Tensor>,
                Option<Tensor>,
                Option<Tensor>,
                Option<Tensor>,
                bool,
                f64,
                f64,
            )| {
                if use_input_stats {
                    verify_spatial_size(x.shape())?;
                }
                nn::instance_norm(&x, &norm_args([&rm, &rv, &w, &b], use_input_stats, momentum, eps))
            },
        ).grad(crate::derivatives::norm::instance_norm(crate::derivatives::norm::BatchNormArgs { running_mean: 1, running_var: 2, weight: 3, bias: 4, training: 5, eps: 7 })).meta(meta::same),
        op(
            "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05) -> Tensor",
            &[Functional(2)],
            |(x, groups, w, b, eps): (Tensor, i64, Option<Tensor>, Option<Tensor>, f64)| {
                // PyTorch's functional checks its group statistics first.
                if x.ndim() >= 2 && groups > 0 {
                    let mut size = vec![x.shape()[0] * x.shape()[1] / groups as usize, groups as usize];
                    size.extend(&x.shape()[2..]);
                    verify_batch_size(&size, false)?;
                }
                nn::group_norm(&x, groups, w.as_ref(), b.as_ref(), eps)
            },
        )
        .python_reads(&[("input", "dim")])
        .grad(crate::derivatives::norm::group_norm())
        .meta(meta::same),
        op(
            "embedding_bag(Tensor input, Tensor weight, Tensor? offsets=None, float? max_norm=None, float norm_type=2, bool scale_grad_by_freq=False, str mode='mean', bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False, int? padding_idx=None) -> Tensor",
            &[Functional(2)],
            |(x, w, offsets, _, _, _, mode, _, psw, last, padding_idx): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<f64>,
                f64,
                bool,
                String,
                bool,
                Option<Tensor>,
                bool,
                Option<i64>,
            )| {
                let value = |m: String| TensorError::value("embedding_bag", m);
                if w.ndim() != 2 {
                    return Err(value(format!(
                        "weight has to be a 2D Tensor, but got Tensor of dimension {}",
                        w.ndim()
                    )));
                }
                match (x.ndim(), &offsets) {
                    (2, Some(_)) => return Err(value("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed length sequences. However, found offsets of type <class 'torch.Tensor'>".into())),
                    (1, None) => return Err(value("offsets has to be a 1D Tensor but got None".into())),
                    (1, Some(o)) if o.ndim() != 1 => return Err(value("offsets has to be a 1D Tensor".into())),
                    (1 | 2, _) => {}
                    (d, _) => return Err(value(format!("input has to be 1D or 2D Tensor, but got Tensor of dimension {d}"))),
                }
                let mode = BagMode::parse(&mode)?;
                if let Some(w) = &psw {
                    if w.shape() != x.shape() {
                        return Err(value(format!(
                            "embedding_bag: If per_sample_weights ({:?}) is not None, then it must have the same shape as the input ({:?})",
                            w.shape(),
                            x.shape()
                        )));
                    }
                    if mode != BagMode::Sum {
                        let name = if mode == BagMode::Mean { "mean" } else { "max" };
                        return Err(TensorError::not_implemented(format!(
                            "embedding_bag: per_sample_weights was not None. per_sample_weights is only supported for mode='sum' (got mode='{name}'). Please open a feature request on GitHub."
                        )));
                    }
                }
                bag::embedding_bag(
                    &x,
                    &w,
                    offsets.as_ref(),
                    mode,
                    psw.as_ref(),
                    last,
                    padding_idx,
                )
            },
        )
        .python_reads(&[("weight", "dtype"), ("weight", "dim"), ("input", "dim")])
        .grad(crate::derivatives::norm::embedding_bag()),
        op(
            "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
            &[Functional(2)],
            |(x, w, padding_idx, _, _, _, _): (
                Tensor,
                Tensor,
                Option<i64>,
                Option<f64>,
                f64,
                bool,
                bool,
            )| { nn::embedding(&x, &w, padding_idx) },
        ).grad(crate::derivatives::norm::embedding(1, 0, 2)).meta(meta::embedding),
        op(
            "pad(Tensor input, int[] pad, str mode='constant', float? value=None) -> Tensor",
            &[Functional(2)],
            |(x, pad, mode, value): (Tensor, Vec<i64>, String, Option<f64>)| {
                resample::pad(&x, &pad, PadMode::parse(&mode)?, value)
            },
        ).grad(crate::derivatives::resample::pad()).meta(meta::pad),
        op(
            "interpolate(Tensor input, int[]? size=None, float[]? scale_factor=None, str mode='nearest', bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) -> Tensor",
            &[Functional(1)],
            |(x, size, scale, mode, align, recompute, _): (
                Tensor,
                Option<Vec<i64>>,
                Option<Vec<f64>>,
                String,
                Option<bool>,
                Option<bool>,
                bool,
            )| {
                let target = match (size, scale) {
                    (Some(_), Some(_)) => {
                        return Err(TensorError::value(
                            "interpolate",
                            "only one of size or scale_factor should be defined",
                        ));
                    }
                    (None, None) => {
                        return Err(TensorError::value(
                            "interpolate",
                            "either size or scale_factor should be defined",
                        ));
                    }
                    (Some(s), None) => Target::Size(s),
                    (None, Some(f)) => Target::Scale(f),
                };
                let mode = InterpMode::parse(&mode, x.ndim())?;
                resample::interpolate(&x, target, mode, align, recompute.unwrap_or(false))
            },
        ).grad(crate::derivatives::resample::interpolate()).meta(meta::interpolate),
        op(
            "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False)",
            NN,
            |(q, k, v, mask, dropout_p, is_causal, scale, enable_gqa): (
                Tensor,
                Tensor,
                Tensor,
                Option<Tensor>,
                f64,
                bool,
                Option<f64>,
                bool,
            )| {
                let args = nn::Attention {
                    mask: mask.as_ref(),
                    dropout_p,
                    is_causal,
                    scale,
                    enable_gqa,
                };
                nn::scaled_dot_product_attention(&q, &k, &v, &args)
            },
        ).grad(crate::derivatives::nn::attention()).meta(meta::attention),
        // What the attention above runs as where PyTorch's CPU build runs
        // flash attention, and its backward (not bound in Python).
        op(
            "_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, Tensor value, float dropout_p=0.0, bool is_causal=False, *, Tensor? attn_mask=None, float? scale=None) -> tuple[Tensor, Tensor]",
            &[Torch],
            |(q, k, v, dropout_p, is_causal, mask, scale): (Tensor, Tensor, Tensor, f64, bool, Option<Tensor>, Option<f64>)| -> Result<Value> {
                let flash = flash_args(&q, dropout_p, is_causal, mask.as_ref(), scale)?;
                let (out, lse) = attention::flash_attention(&q, &k, &v, &flash)?;
                Ok(Value::Tuple(vec![Value::Tensor(out), Value::Tensor(lse)]))
            },
        )
        .grad(crate::derivatives::nn::flash_attention())
        .nondiff_outputs(&[1]),
        op(
            "_scaled_dot_product_flash_attention_for_cpu_backward(Tensor grad_out, Tensor query, Tensor key, Tensor value, Tensor out, Tensor logsumexp, float dropout_p, bool is_causal, *, Tensor? attn_mask=None, float? scale=None) -> tuple[Tensor, Tensor, Tensor]",
            &[],
            |(g, q, k, v, out, lse, dropout_p, is_causal, mask, scale): (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, f64, bool, Option<Tensor>, Option<f64>)| -> Result<Value> {
                let flash = flash_args(&q, dropout_p, is_causal, mask.as_ref(), scale)?;
                let (dq, dk, dv) = attention::flash_attention_backward(&g, &q, &k, &v, &out, &lse, &flash)?;
                Ok(Value::Tuple(vec![Value::Tensor(dq), Value::Tensor(dk), Value::Tensor(dv)]))
            },
        ),
        dropout_row(
            "dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor",
            &[Functional(1)],
            PLAIN,
            None,
        ).meta(meta::same),
        dropout_row(
            "alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor",
            &[Functional(1)],
            DropoutKind {
                feature: false,
                alpha: true,
            },
            None,
        ).meta(meta::same),
        dropout_row(
            "feature_alpha_dropout(Tensor input, float p=0.5, bool training=False, bool inplace=False) -> Tensor",
            &[Functional(1)],
            DropoutKind {
                feature: true,
                alpha: true,
            },
            None,
        ).meta(meta::same),
        dropout_row(
            "dropout1d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor",
            &[Functional(1)],
            FEATURE,
            Some(1),
        )
        .python_reads(&[("input", "dim")]).meta(meta::same),
        dropout_row(
            "dropout2d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor",
            &[Functional(1)],
            FEATURE,
            Some(2),
        )
        .python_reads(&[("input", "dim")]).meta(meta::same),
        dropout_row(
            "dropout3d(Tensor input, float p=0.5, bool training=True, bool inplace=False) -> Tensor",
            &[Functional(1)],
            FEATURE,
            Some(3),
        )
        .python_reads(&[("input", "dim")]).meta(meta::same),
    ]
}

/// The flash attention rows' arguments besides the operands, refusing
/// dropout as PyTorch's CPU kernel does.
fn flash_args<'a>(
    q: &Tensor,
    dropout_p: f64,
    causal: bool,
    mask: Option<&'a Tensor>,
    scale: Option<f64>,
) -> Result<attention::Flash<'a>> {
    if dropout_p > 0.0 {
        return Err(TensorError::runtime(
            "_scaled_dot_product_flash_attention_for_cpu",
            "scaled_dot_product_attention_flash_attention: Currently do not support dropout > 0",
        ));
    }
    Ok(attention::Flash {
        mask,
        causal,
        scale: scale.unwrap_or_else(|| attention::default_scale(q)),
    })
}
