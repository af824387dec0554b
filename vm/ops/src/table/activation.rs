//! Activations as `torch.nn.functional` spells them (`inplace`, `approximate`,
//! `dim` defaults), and the small compositions PyTorch writes in Python.

use fxvm_tensor::ops::activation_grad;
use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary, Unary};
use fxvm_tensor::ops::reduce::{self, SoftmaxKind};
use fxvm_tensor::ops::shape;
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::{bin, fill_in_place, in_place, maybe_in_place, unary_in_place};
use crate::autograd::Name;
use crate::autograd::ops as o;
use crate::derivatives::activation::in_place_flag;
use crate::meta;
use crate::op::{NN, Op, Place, op};
use crate::value::Value;

use Place::{Functional, FunctionalIsTorch, FunctionalNative, FunctionalNativeAs, Torch};

/// PyTorch's activations have float kernels only: integer and bool inputs
/// raise instead of being promoted.
fn float_kernel(x: &Tensor, kernel: &'static str) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(TensorError::not_implemented_for(kernel, x.dtype()))
    }
}

/// The softmax dim PyTorch picks when none is given.
fn softmax_dim(x: &Tensor, dim: Option<i64>) -> i64 {
    dim.unwrap_or(match x.ndim() {
        0 | 1 | 3 => 0,
        _ => 1,
    })
}

/// `clamp(x, lo, hi)` in `x`'s dtype: an integer tensor's bounds are
/// truncated, so the result stays an integer tensor (as PyTorch's
/// hardtanh kernel casts its bounds).
fn clamp(x: &Tensor, lo: f64, hi: f64) -> Result<Tensor> {
    let bound = |v: f64| {
        if x.dtype().is_float() {
            Scalar::Float(v)
        } else {
            Scalar::Int(v as i64)
        }
    };
    ew::clamp(x, Some(bound(lo)), Some(bound(hi)))
}

/// `clamp(x + 3, 0, 6)`: the gate hardsigmoid and hardswish share.
fn hard_gate(x: &Tensor) -> Result<Tensor> {
    clamp(&bin(Binary::Add, x, 3.0)?, 0.0, 6.0)
}

/// `x` where positive, else `negative(x)`.
fn where_positive(x: &Tensor, negative: Tensor) -> Result<Tensor> {
    let positive = bin(Binary::Gt, x, 0.0)?;
    ew::where_(&positive, &x.into(), &negative.into())
}

fn softplus(x: &Tensor, beta: f64, threshold: f64) -> Tensor {
    // x when beta·x > threshold, else log1p(exp(beta·x)) / beta.
    let y = ew::map::<f64, f64>(&x.to_dtype(DType::F64), move |v| {
        if v * beta > threshold {
            v
        } else {
            (v * beta).exp().ln_1p() / beta
        }
    });
    y.to_dtype(x.dtype())
}

fn inplace_unary(decl: &'static str, u: Unary) -> Op {
    op(
        decl,
        &[Functional(1)],
        move |(x, inplace): (Tensor, bool)| {
            if inplace {
                unary_in_place(&x, u)
            } else {
                ew::unary(u, &x).map(Value::Tensor)
            }
        },
    )
    .grad_opt(crate::derivatives::elementwise::unary_op(u))
}

fn softmax_row(decl: &'static str, kind: SoftmaxKind) -> Op {
    // PyTorch's function asks `input.dim()` for a missing dim, then calls
    // `input.softmax(dim)` (or `log_softmax`).
    let method = match kind {
        SoftmaxKind::Softmax => "softmax",
        SoftmaxKind::LogSoftmax => "log_softmax",
    };
    op(
        decl,
        &[Functional(1)],
        move |(x, dim, _stacklevel, dtype): (Tensor, Option<i64>, i64, Option<DType>)| {
            reduce::softmax(&x, softmax_dim(&x, dim), dtype, kind)
        },
    )
    .python_read_when_none("dim", "input", "dim")
    .python_reads(&[("input", method)])
    .grad(crate::derivatives::reduce::softmax(
        kind == SoftmaxKind::LogSoftmax,
    ))
}

/// `||x1 - x2 + eps||_p` over the last dim of the broadcast pair.
pub(super) fn pairwise_distance(
    x1: &Tensor,
    x2: &Tensor,
    p: f64,
    eps: f64,
    keepdim: bool,
) -> Result<Tensor> {
    // Composite: written in rows, so it records history.
    let diff = o::add_s(&o::sub(x1, x2)?, eps)?;
    if diff.ndim() == 0 {
        return o::norm(&diff, p, None, keepdim);
    }
    o::norm(&diff, p, Some(&[-1]), keepdim)
}

/// `clamp(x, lo, hi)`, refusing bool input as PyTorch does.
fn hardtanh(x: &Tensor, lo: f64, hi: f64) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Err(TensorError::not_implemented(
            "Bool inputs not supported for hardtanh",
        ));
    }
    clamp(x, lo, hi)
}

fn leaky_relu(x: &Tensor, slope: f64) -> Result<Tensor> {
    float_kernel(x, "leaky_relu_cpu")?;
    where_positive(x, bin(Binary::Mul, x, slope)?)
}

fn elu(x: &Tensor, alpha: f64) -> Result<Tensor> {
    float_kernel(x, "elu_cpu")?;
    let negative = bin(Binary::Mul, ew::unary(Unary::Expm1, x)?, alpha)?;
    where_positive(x, negative)
}

fn celu(x: &Tensor, alpha: f64) -> Result<Tensor> {
    float_kernel(x, "elu_cpu")?;
    if alpha == 0.0 {
        return Err(TensorError::runtime("celu", "ZeroDivisionError"));
    }
    let scaled = bin(Binary::Mul, x, 1.0 / alpha)?;
    let negative = bin(Binary::Mul, ew::unary(Unary::Expm1, &scaled)?, alpha)?;
    where_positive(x, negative)
}

fn selu(x: &Tensor) -> Result<Tensor> {
    float_kernel(x, "elu_cpu")?;
    // PyTorch's constants (Klambauer et al.), to double precision.
    const ALPHA: f64 = 1.673_263_242_354_377_3;
    const SCALE: f64 = 1.050_700_987_355_480_5;
    let negative = bin(Binary::Mul, ew::unary(Unary::Expm1, x)?, ALPHA * SCALE)?;
    let positive = bin(Binary::Mul, x, SCALE)?;
    ew::where_(
        &bin(Binary::Gt, x, 0.0)?,
        &positive.into(),
        &negative.into(),
    )
}

/// `value` where `x <= threshold`, so NaN passes through.
fn threshold(x: &Tensor, threshold: f64, value: f64) -> Result<Tensor> {
    let replaced = bin(Binary::Le, x, threshold)?;
    let value = Tensor::scalar(Scalar::Float(value), x.dtype());
    ew::where_(&replaced, &value.into(), &Arg::Tensor(x.clone()))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        inplace_unary("relu(Tensor input, bool inplace=False) -> Tensor", Unary::Relu).meta(meta::pointwise),
        inplace_unary("silu(Tensor input, bool inplace=False) -> Tensor", Unary::Silu).meta(meta::pointwise),
        inplace_unary("mish(Tensor input, bool inplace=False) -> Tensor", Unary::Mish).meta(meta::pointwise),
        softmax_row(
            "softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor",
            SoftmaxKind::Softmax,
        ).meta(meta::pointwise),
        softmax_row(
            "log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor",
            SoftmaxKind::LogSoftmax,
        ).meta(meta::pointwise),
        op(
            "gelu(Tensor input, *, str approximate='none')",
            &[FunctionalNative],
            |(x, approximate): (Tensor, String)| {
                let u = match approximate.as_str() {
                    "none" => Unary::Gelu,
                    "tanh" => Unary::GeluTanh,
                    other => {
                        return Err(TensorError::runtime(
                            "gelu",
                            format!(
                                "approximate argument must be either none or tanh., got {other}"
                            ),
                        ));
                    }
                };
                ew::unary(u, &x)
            },
        ).grad(crate::derivatives::nn::gelu()).meta(meta::pointwise),
        // The gradients through relu and gelu, as ATen's backward ops (not
        // bound in Python: what the derivatives call, and what a gradient
        // of a gradient differentiates).
        op(
            "threshold_backward(Tensor grad_output, Tensor input, Scalar threshold)",
            &[],
            |(g, x, threshold): (Tensor, Tensor, Scalar)| {
                activation_grad::threshold_backward(&g, &x, threshold.to_f64())
            },
        ).grad(crate::derivatives::nn::threshold_backward()),
        op(
            "gelu_backward(Tensor grad_output, Tensor input, *, str approximate='none')",
            &[],
            |(g, x, approximate): (Tensor, Tensor, String)| {
                activation_grad::gelu_backward(&g, &x, approximate == "tanh")
            },
        ).grad(crate::derivatives::nn::gelu_backward()),
        op(
            "softplus(Tensor input, Scalar beta=1, Scalar threshold=20)",
            NN,
            |(x, beta, threshold): (Tensor, Scalar, Scalar)| -> Result<Tensor> {
                float_kernel(&x, "softplus_cpu")?;
                Ok(softplus(&x, beta.to_f64(), threshold.to_f64()))
            },
        ).grad(crate::derivatives::nn::softplus()).meta(meta::pointwise),
        op(
            "log_sigmoid(Tensor input)",
            &[FunctionalNativeAs("logsigmoid")],
            |(x,): (Tensor,)| -> Result<Tensor> {
                float_kernel(&x, "log_sigmoid_cpu")?;
                ew::unary(
                    Unary::Neg,
                    &softplus(&ew::unary(Unary::Neg, &x)?, 1.0, 20.0),
                )
            },
        ).grad(crate::derivatives::nn::log_sigmoid()).meta(meta::pointwise),
        op(
            "hardtanh(Tensor input, float min_val=-1.0, float max_val=1.0, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, lo, hi, inplace): (Tensor, f64, f64, bool)| {
                // The functional's own check (the ATen `hardtanh_` has none).
                if lo > hi {
                    return Err(TensorError::value(
                        "hardtanh",
                        "min_val cannot be greater than max_val",
                    ));
                }
                maybe_in_place(&x, || hardtanh(&x, lo, hi), inplace)
            },
        ).grad(crate::derivatives::nn::hardtanh(None)).meta(meta::pointwise),
        op(
            "hardtanh_(Tensor(a!) input, float min_val=-1.0, float max_val=1.0)",
            NN,
            |(x, lo, hi): (Tensor, f64, f64)| in_place(&x, || hardtanh(&x, lo, hi)),
        ).grad(crate::derivatives::nn::hardtanh(None)).meta(meta::pointwise),
        op(
            "relu6(Tensor input, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, inplace): (Tensor, bool)| {
                if x.dtype() == DType::Bool {
                    return Err(TensorError::not_implemented(
                        "Bool inputs not supported for hardtanh",
                    ));
                }
                maybe_in_place(&x, || clamp(&x, 0.0, 6.0), inplace)
            },
        ).grad(crate::derivatives::nn::hardtanh(Some((0.0, 6.0)))).meta(meta::pointwise),
        op(
            "leaky_relu(Tensor input, float negative_slope=0.01, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, slope, inplace): (Tensor, f64, bool)| {
                maybe_in_place(&x, || leaky_relu(&x, slope), inplace)
            },
        ).grad(crate::derivatives::nn::leaky_relu(Name::Pick(|v| in_place_flag(v, 2, "LeakyReluBackward0", "LeakyReluBackward1")))).meta(meta::pointwise),
        op(
            "leaky_relu_(Tensor(a!) input, float negative_slope=0.01)",
            NN,
            |(x, slope): (Tensor, f64)| in_place(&x, || leaky_relu(&x, slope)),
        ).grad(crate::derivatives::nn::leaky_relu("LeakyReluBackward1".into())).meta(meta::pointwise),
        op(
            "elu(Tensor input, float alpha=1.0, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, alpha, inplace): (Tensor, f64, bool)| maybe_in_place(&x, || elu(&x, alpha), inplace),
        ).grad(crate::derivatives::nn::elu(Name::Pick(|v| in_place_flag(v, 2, "EluBackward0", "EluBackward1")))).meta(meta::pointwise),
        op(
            "elu_(Tensor(a!) input, float alpha=1.0)",
            NN,
            |(x, alpha): (Tensor, f64)| in_place(&x, || elu(&x, alpha)),
        ).grad(crate::derivatives::nn::elu("EluBackward1".into())).meta(meta::pointwise),
        op(
            "hardsigmoid(Tensor input, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, inplace): (Tensor, bool)| {
                float_kernel(&x, "hardsigmoid_cpu")?;
                maybe_in_place(&x, || bin(Binary::Div, hard_gate(&x)?, 6.0), inplace)
            },
        ).grad(crate::derivatives::nn::hardsigmoid()).meta(meta::pointwise),
        op(
            "hardswish(Tensor input, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, inplace): (Tensor, bool)| {
                float_kernel(&x, "hardswish_cpu")?;
                // x * gate / 6, multiplied before the division as PyTorch rounds it.
                let gate = hard_gate(&x)?;
                maybe_in_place(
                    &x,
                    || bin(Binary::Div, bin(Binary::Mul, &x, gate)?, 6.0),
                    inplace,
                )
            },
        ).grad(crate::derivatives::nn::hardswish()).meta(meta::pointwise),
        op(
            "celu(Tensor input, float alpha=1.0, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, alpha, inplace): (Tensor, f64, bool)| maybe_in_place(&x, || celu(&x, alpha), inplace),
        ).grad(crate::derivatives::activation::celu(Name::Pick(|v| in_place_flag(v, 2, "CeluBackward0", "CeluBackward1")))).meta(meta::pointwise),
        op(
            "celu_(Tensor(a!) input, float alpha=1.0)",
            &[Torch, FunctionalIsTorch],
            |(x, alpha): (Tensor, f64)| in_place(&x, || celu(&x, alpha)),
        ).grad(crate::derivatives::activation::celu("CeluBackward1".into())).meta(meta::pointwise),
        op(
            "selu(Tensor input, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, inplace): (Tensor, bool)| maybe_in_place(&x, || selu(&x), inplace),
        ).grad(crate::derivatives::activation::selu(Name::Pick(|v| in_place_flag(v, 1, "EluBackward0", "EluBackward1")))).meta(meta::pointwise),
        op(
            "selu_(Tensor(a!) input)",
            &[Torch, FunctionalIsTorch],
            |(x,): (Tensor,)| in_place(&x, || selu(&x)),
        ).grad(crate::derivatives::activation::selu("EluBackward1".into())).meta(meta::pointwise),
        op(
            "hardshrink(Tensor input, Scalar lambd=0.5)",
            &[Torch, Place::Method, FunctionalIsTorch],
            |(x, lambd): (Tensor, Scalar)| {
                float_kernel(&x, "hardshrink_cpu")?;
                let kept = bin(Binary::Gt, ew::unary(Unary::Abs, &x)?, lambd.to_f64())?;
                ew::where_(&kept, &Arg::Tensor(x), &Arg::Scalar(Scalar::Int(0)))
            },
        ).grad(crate::derivatives::activation::hardshrink()).meta(meta::pointwise),
        op(
            "softshrink(Tensor input, Scalar lambd=0.5)",
            &[FunctionalNative],
            |(x, lambd): (Tensor, Scalar)| {
                float_kernel(&x, "softshrink_cpu")?;
                let l = lambd.to_f64();
                if l < 0.0 {
                    let max = if x.dtype() == DType::F32 {
                        "3.40282e+38"
                    } else {
                        "1.79769e+308"
                    };
                    return Err(TensorError::runtime(
                        "softshrink",
                        format!(
                            "lambda must be in range [0, {max}] for input dtype {}, but found {l}",
                            fxvm_tensor::error::legacy_name(x.dtype())
                        ),
                    ));
                }
                let above = bin(Binary::Gt, &x, l)?;
                let below = bin(Binary::Lt, &x, -l)?;
                let shrunk_down = bin(Binary::Sub, &x, l)?;
                let shrunk_up = bin(Binary::Add, &x, l)?;
                let inner = ew::where_(&below, &shrunk_up.into(), &Arg::Scalar(Scalar::Int(0)))?;
                ew::where_(&above, &shrunk_down.into(), &inner.into())
            },
        ).grad(crate::derivatives::activation::softshrink()).meta(meta::pointwise),
        op(
            "softsign(Tensor input)",
            &[Functional(1)],
            |(x,): (Tensor,)| o::div(&x, &o::add_s(&o::unary("abs", &x)?, 1.0)?),
        )
        .python_reads(&[("input", "abs")]).composite().meta(meta::pointwise),
        op(
            "tanhshrink(Tensor input)",
            &[Functional(1)],
            |(x,): (Tensor,)| o::sub(&x, &o::unary("tanh", &x)?),
        )
        .python_reads(&[("input", "tanh")]).composite().meta(meta::pointwise),
        op(
            "threshold(Tensor input, float threshold, float value, bool inplace=False) -> Tensor",
            &[Functional(1)],
            |(x, t, v, inplace): (Tensor, f64, f64, bool)| {
                if inplace {
                    // PyTorch writes a threshold even into an expanded tensor.
                    fill_in_place(&x, threshold(&x, t, v))
                } else {
                    threshold(&x, t, v).map(Value::Tensor)
                }
            },
        )
        .kernel_dtypes("threshold_cpu", crate::kernels::NOT_BOOL).grad(crate::derivatives::activation::threshold(false)).meta(meta::pointwise),
        op(
            "threshold_(Tensor(a!) input, float threshold, float value)",
            &[Torch, FunctionalIsTorch],
            |(x, t, v): (Tensor, f64, f64)| fill_in_place(&x, threshold(&x, t, v)),
        )
        .kernel_dtypes("threshold_cpu", crate::kernels::NOT_BOOL).grad(crate::derivatives::activation::threshold(true)).meta(meta::pointwise),
        op(
            "softmin(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None) -> Tensor",
            &[Functional(1)],
            |(x, dim, _stacklevel, dtype): (Tensor, Option<i64>, i64, Option<DType>)| {
                let dim = softmax_dim(&x, dim);
                let negated = o::neg(&o::to_dtype(&x, dtype.unwrap_or(x.dtype()))?)?;
                o::call("softmax", vec![Value::Tensor(negated), Value::Int(dim)], vec![])
            },
        ).python_read_when_none("dim", "input", "dim").composite().meta(meta::pointwise),
        op(
            "prelu(Tensor input, Tensor weight)",
            &[Torch, Place::Method, FunctionalIsTorch],
            |(x, weight): (Tensor, Tensor)| {
                if weight.dtype() != x.dtype() {
                    return Err(TensorError::runtime(
                        "prelu",
                        format!(
                            "prelu: Type promoting not supported. Got {} and {}",
                            fxvm_tensor::error::legacy_name(x.dtype()),
                            fxvm_tensor::error::legacy_name(weight.dtype())
                        ),
                    ));
                }
                float_kernel(&x, "prelu_cpu")?;
                let channels = if x.ndim() >= 2 { x.shape()[1] } else { 1 };
                let w = weight.numel();
                if w != 1 && w != channels {
                    return Err(TensorError::runtime(
                        "prelu",
                        format!(
                            "Mismatch of parameter numbers and input channel size. Found parameter numbers = {w} and channel size = {channels}."
                        ),
                    ));
                }
                // One slope per channel (dim 1), broadcast over the rest.
                let mut shape = vec![1; x.ndim()];
                if x.ndim() >= 2 {
                    shape[1] = w;
                }
                let slope = shape::reshape(
                    &weight,
                    &shape.iter().map(|&d| d as i64).collect::<Vec<_>>(),
                )?;
                where_positive(&x, bin(Binary::Mul, &x, slope)?)
            },
        ).grad(crate::derivatives::activation::prelu()).meta(meta::pointwise),
        op(
            "glu(Tensor input, int dim=-1) -> Tensor",
            &[Functional(1)],
            |(x, dim): (Tensor, i64)| {
                if x.ndim() == 0 {
                    return Err(TensorError::runtime(
                        "glu",
                        "glu does not support scalars because halving size must be even",
                    ));
                }
                let d = x.dim(dim)?;
                if x.shape()[d] % 2 != 0 {
                    return Err(TensorError::runtime(
                        "glu",
                        format!(
                            "Halving dimension must be even, but dimension {d} is size {}",
                            x.shape()[d]
                        ),
                    ));
                }
                let halves = shape::chunk(&x, 2, dim)?;
                bin(
                    Binary::Mul,
                    &halves[0],
                    ew::unary(Unary::Sigmoid, &halves[1])?,
                )
            },
        )
        .kernel_dtypes("glu_cpu", crate::kernels::FLOATING).grad(crate::derivatives::activation::glu()),
        op(
            "normalize(Tensor input, float p=2.0, int dim=1, float eps=1e-12, Tensor? out=None) -> Tensor",
            &[Functional(1)],
            |(x, p, dim, eps, _out): (Tensor, f64, i64, f64, Option<Tensor>)| {
                let norm = o::norm(&x, p, Some(&[dim]), true)?;
                let denom = o::expand(&o::clamp_min(&norm, eps)?, x.shape())?;
                o::div(&x, &denom)
            },
        )
        .python_reads(&[("input", "norm")])
        .composite(),
        op(
            "one_hot(Tensor tensor, int num_classes=-1)",
            NN,
            |(t, num_classes): (Tensor, i64)| {
                let fail = |m: &str| Err(TensorError::runtime("one_hot", m));
                if t.dtype() != DType::I64 {
                    return fail("one_hot is only applicable to index tensor of type LongTensor.");
                }
                let mut classes = num_classes;
                if t.numel() == 0 {
                    if classes == -1 {
                        return fail("Can not infer total number of classes from empty tensor.");
                    }
                } else {
                    let values = t.to_vec::<i64>();
                    let (lo, hi) = values
                        .iter()
                        .fold((i64::MAX, i64::MIN), |(l, h), &v| (l.min(v), h.max(v)));
                    if lo < 0 {
                        return fail("Class values must be non-negative.");
                    }
                    if classes == -1 {
                        classes = hi + 1;
                    } else if hi >= classes {
                        return fail("Class values must be smaller than num_classes.");
                    }
                }
                let range = fxvm_tensor::ops::create::arange(
                    Scalar::Int(0),
                    Scalar::Int(classes),
                    Scalar::Int(1),
                    None,
                )?;
                let hits = bin(Binary::Eq, shape::unsqueeze(&t, -1)?, range)?;
                Ok(hits.to_dtype(DType::I64))
            },
        ).nondiff(),
        op(
            "pairwise_distance(Tensor x1, Tensor x2, float p=2.0, float eps=1e-06, bool keepdim=False)",
            &[Torch, FunctionalIsTorch],
            |(x1, x2, p, eps, keepdim): (Tensor, Tensor, f64, f64, bool)| {
                pairwise_distance(&x1, &x2, p, eps, keepdim)
            },
        )
        .composite(),
        op(
            "cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08)",
            &[Torch, FunctionalIsTorch],
            |(x1, x2, dim, eps): (Tensor, Tensor, i64, f64)| {
                let shape = fxvm_tensor::layout::broadcast_shapes(x1.shape(), x2.shape())
                    .ok_or_else(|| TensorError::broadcast(x1.shape(), x2.shape()))?;
                let (x1, x2) = (o::expand(&x1, &shape)?, o::expand(&x2, &shape)?);
                let common = DType::promote(x1.dtype(), x2.dtype());
                if !common.is_float() {
                    return Err(TensorError::runtime(
                        "cosine_similarity",
                        format!(
                            "expected common dtype to be floating point, yet common dtype is {}",
                            fxvm_tensor::error::legacy_name(common)
                        ),
                    ));
                }
                let (x1, x2) = (o::to_dtype(&x1, common)?, o::to_dtype(&x2, common)?);
                // Each side is normalised before the product, as PyTorch
                // does, so that large norms do not overflow.
                let unit = |x: &Tensor| -> Result<Tensor> {
                    let n = o::norm(x, 2.0, Some(&[dim]), true)?;
                    o::div(x, &o::clamp_min(&n, eps)?)
                };
                let product = o::mul(&unit(&x1)?, &unit(&x2)?)?;
                o::sum(&product, &[dim], false)
            },
        )
        .composite(),
    ]
}
