//! Losses.

use fxvm_tensor::ops::elementwise as ew;
use fxvm_tensor::ops::elementwise::{Binary, Unary};
use fxvm_tensor::ops::nn::{self, Reduction};
use fxvm_tensor::ops::{ctc, reduce};
use fxvm_tensor::{Result, Tensor, TensorError};

use super::bin;
use crate::autograd::ops as o;
use crate::meta;
use crate::op::{Op, Place, op};
use crate::value::{Or, Value};

use Place::Functional;

/// `|x - t|`.
fn abs_diff(x: Tensor, t: Tensor) -> Result<Tensor> {
    ew::unary(Unary::Abs, &bin(Binary::Sub, x, t)?)
}

/// The smooth-L1/Huber shape over `z = |x - t|`: `quadratic(0.5·z·z)` where
/// `z < bound`, else `linear(z)`, each rounded in PyTorch's order.
fn quadratic_below(
    z: Tensor,
    bound: f64,
    quadratic: impl FnOnce(Tensor) -> Result<Tensor>,
    linear: impl FnOnce(&Tensor) -> Result<Tensor>,
) -> Result<Tensor> {
    let small = bin(Binary::Lt, &z, bound)?;
    let half_square = bin(Binary::Mul, bin(Binary::Mul, 0.5, &z)?, &z)?;
    let below = quadratic(half_square)?;
    let above = linear(&z)?;
    ew::where_(&small, &below.into(), &above.into())
}

/// Multiplies by an optional per-element weight.
fn weighted(loss: Tensor, weight: Option<Tensor>) -> Result<Tensor> {
    match weight {
        Some(w) => bin(Binary::Mul, loss, w),
        None => Ok(loss),
    }
}

/// The binary cross entropies take a target of exactly the input's size.
fn same_size(op: &'static str, input: &Tensor, target: &Tensor) -> Result<()> {
    if target.shape() == input.shape() {
        return Ok(());
    }
    Err(TensorError::TargetSize {
        op,
        target: target.shape().to_vec(),
        input: input.shape().to_vec(),
    })
}

/// `log(x)` clamped below at -100, as PyTorch's binary cross entropy does.
fn clamped_log(x: Tensor) -> Result<Tensor> {
    ew::clamp(
        &ew::unary(Unary::Log, &x)?,
        Some(fxvm_tensor::Scalar::Float(-100.0)),
        None,
    )
}

/// `log(sigmoid(x))`, computed as `-softplus(-x)`.
fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    let neg = ew::unary(Unary::Neg, x)?;
    ew::unary(Unary::Neg, &ew::unary(Unary::Softplus, &neg)?)
}

/// Sequence lengths given as a list or as an integer tensor.
fn lengths(v: Or<Tensor, Vec<i64>>) -> Vec<i64> {
    match v {
        Or::A(t) => t.to_dtype(fxvm_tensor::DType::I64).contiguous().to_vec(),
        Or::B(v) => v,
    }
}

/// A CTC loss call of the rows' arguments.
fn ctc_call<'a>(
    log_probs: &'a Tensor,
    targets: &'a Tensor,
    input_lengths: &'a [i64],
    target_lengths: &'a [i64],
    blank: i64,
    reduction: Reduction,
    zero_infinity: bool,
) -> ctc::Ctc<'a> {
    ctc::Ctc {
        log_probs,
        targets,
        input_lengths,
        target_lengths,
        blank,
        reduction,
        zero_infinity,
    }
}

type CtcArgs<R> = (
    Tensor,
    Tensor,
    Or<Tensor, Vec<i64>>,
    Or<Tensor, Vec<i64>>,
    i64,
    R,
    bool,
);

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "ctc_loss(Tensor log_probs, Tensor targets, Tensor|int[] input_lengths, Tensor|int[] target_lengths, int blank=0, str reduction='mean', bool zero_infinity=False) -> Tensor",
            &[Functional(4)],
            |(lp, t, il, tl, blank, reduction, zero_inf): CtcArgs<String>| {
                let r = Reduction::parse(&reduction)?;
                ctc_call(&lp, &t, &lengths(il), &lengths(tl), blank, r, zero_inf).loss()
            },
        )
        .kernel_dtypes("ctc_loss_cpu", crate::kernels::FLOAT32_64)
        .grad(crate::derivatives::loss::ctc_loss()),
        // The builtin takes the reduction as PyTorch's enum: 0 none, 1 mean, 2 sum.
        op(
            // PyTorch declares `reduction=Mean`, but its argument parser reads
            // that default as 0: torch.ctc_loss unreduced unless told.
            "ctc_loss(Tensor log_probs, Tensor targets, Tensor|int[] input_lengths, Tensor|int[] target_lengths, int blank=0, int reduction=0, bool zero_infinity=False)",
            &[Place::Torch],
            |(lp, t, il, tl, blank, reduction, zero_inf): CtcArgs<i64>| {
                let r = match reduction {
                    0 => Reduction::None,
                    1 => Reduction::Mean,
                    2 => Reduction::Sum,
                    _ => {
                        return Err(TensorError::runtime(
                            "ctc_loss",
                            format!("{reduction} is not a valid value for reduction"),
                        ));
                    }
                };
                ctc_call(&lp, &t, &lengths(il), &lengths(tl), blank, r, zero_inf).loss()
            },
        )
        .kernel_dtypes("ctc_loss_cpu", crate::kernels::FLOAT32_64)
        .grad(crate::derivatives::loss::ctc_loss()),
        // The CTC loss's gradient (not bound in Python): what its derivative
        // calls. Reduction codes as the builtin's.
        op(
            "ctc_loss_backward(Tensor grad, Tensor log_probs, Tensor targets, int[] input_lengths, int[] target_lengths, int blank, int reduction, bool zero_infinity)",
            &[],
            |(g, lp, t, il, tl, blank, reduction, zero_inf): (Tensor, Tensor, Tensor, Vec<i64>, Vec<i64>, i64, i64, bool)| {
                let r = match reduction {
                    1 => Reduction::Mean,
                    2 => Reduction::Sum,
                    _ => Reduction::None,
                };
                ctc_call(&lp, &t, &il, &tl, blank, r, zero_inf).backward(&g)
            },
        )
        .nondiff(),
        op(
            "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, bool? size_average=None, int ignore_index=-100, bool? reduce=None, str reduction='mean', float label_smoothing=0.0) -> Tensor",
            &[Functional(2)],
            |(x, t, w, size_average, ignore_index, reduce, reduction, label_smoothing): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<bool>,
                i64,
                Option<bool>,
                String,
                f64,
            )| {
                let args = nn::CrossEntropy {
                    weight: w.as_ref(),
                    ignore_index,
                    reduction: Reduction::from_args(size_average, reduce, &reduction)?,
                    label_smoothing,
                };
                nn::cross_entropy(&x, &t, &args)
            },
        ).grad(crate::derivatives::loss::cross_entropy()).meta(meta::loss),
        op(
            "nll_loss(Tensor input, Tensor target, Tensor? weight=None, bool? size_average=None, int ignore_index=-100, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, w, size_average, ignore_index, reduce, reduction): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<bool>,
                i64,
                Option<bool>,
                String,
            )| {
                let r = Reduction::from_args(size_average, reduce, &reduction)?;
                nn::nll_loss(&x, &t, w.as_ref(), ignore_index, r)
            },
        ).grad(crate::derivatives::loss::nll_loss()).meta(meta::loss),
        op(
            "mse_loss(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean', Tensor? weight=None) -> Tensor",
            &[Functional(2)],
            |(x, t, size_average, reduce, reduction, weight): (
                Tensor,
                Tensor,
                Option<bool>,
                Option<bool>,
                String,
                Option<Tensor>,
            )| {
                let Some(w) = weight else {
                    return nn::mse_loss(
                        &x,
                        &t,
                        Reduction::from_args(size_average, reduce, &reduction)?,
                    );
                };
                if w.shape() != x.shape() {
                    return Err(TensorError::value(
                        "mse_loss",
                        "Weights and input must have the same size.",
                    ));
                }
                let reduction = match (size_average, reduce) {
                    (None, None) => reduction,
                    _ => match Reduction::from_args(size_average, reduce, "")? {
                        Reduction::None => "none".into(),
                        Reduction::Mean => "mean".into(),
                        Reduction::Sum => "sum".into(),
                    },
                };
                // PyTorch's weighted form: a weighted mean divides by the weights' sum.
                let weighted = bin(Binary::Mul, nn::mse_loss(&x, &t, Reduction::None)?, &w)?;
                let total = |t: &Tensor| reduce::sum(t, None, false, None);
                match reduction.as_str() {
                    "none" => Ok(weighted),
                    "sum" => total(&weighted),
                    "mean" => bin(Binary::Div, total(&weighted)?, total(&w)?),
                    other => Err(TensorError::value(
                        "mse_loss",
                        format!(
                            "Invalid reduction mode: {other}. Expected one of 'none', 'mean', 'sum'."
                        ),
                    )),
                }
            },
        )
        .python_reads(&[("target", "size"), ("input", "size"), ("weight", "size")]).grad(crate::derivatives::loss::mse_loss()).meta(meta::loss),
        op(
            "l1_loss(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, size_average, reduce, reduction): (
                Tensor,
                Tensor,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                // Composite, as PyTorch's: the mean (or sum) of |x - t|.
                let r = Reduction::from_args(size_average, reduce, &reduction)?;
                o::reduced(r, o::unary("abs", &o::sub(&x, &t)?)?)
            },
        )
        .python_reads(&[("target", "size"), ("input", "size")])
        .composite()
        .meta(meta::loss),
        op(
            "binary_cross_entropy(Tensor input, Tensor target, Tensor? weight=None, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, w, size_average, reduce, reduction): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                let r = Reduction::from_args(size_average, reduce, &reduction)?;
                same_size("binary_cross_entropy", &x, &t)?;
                let one_minus = |a: &Tensor| bin(Binary::Sub, 1.0, a);
                let pos = bin(Binary::Mul, &t, clamped_log(x.clone())?)?;
                let neg = bin(Binary::Mul, one_minus(&t)?, clamped_log(one_minus(&x)?)?)?;
                let loss = ew::unary(Unary::Neg, &bin(Binary::Add, pos, neg)?)?;
                r.apply(weighted(loss, w)?)
            },
        )
        .python_reads(&[("target", "size"), ("input", "size"), ("weight", "size")]).grad(crate::derivatives::loss::binary_cross_entropy()).meta(meta::loss),
        op(
            "binary_cross_entropy_with_logits(Tensor input, Tensor target, Tensor? weight=None, bool? size_average=None, bool? reduce=None, str reduction='mean', Tensor? pos_weight=None) -> Tensor",
            &[Functional(2)],
            |(x, t, w, size_average, reduce, reduction, pos_weight): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<bool>,
                Option<bool>,
                String,
                Option<Tensor>,
            )| {
                let r = Reduction::from_args(size_average, reduce, &reduction)?;
                same_size("binary_cross_entropy_with_logits", &x, &t)?;
                let log_sig = log_sigmoid(&x)?;
                let log_one_minus = log_sigmoid(&ew::unary(Unary::Neg, &x)?)?;
                let pos = match pos_weight {
                    Some(p) => bin(Binary::Mul, bin(Binary::Mul, p, &t)?, log_sig)?,
                    None => bin(Binary::Mul, &t, log_sig)?,
                };
                let neg = bin(Binary::Mul, bin(Binary::Sub, 1.0, &t)?, log_one_minus)?;
                let loss = ew::unary(Unary::Neg, &bin(Binary::Add, pos, neg)?)?;
                r.apply(weighted(loss, w)?)
            },
        )
        .python_reads(&[("target", "size"), ("input", "size")]).grad(crate::derivatives::loss::binary_cross_entropy_with_logits()).meta(meta::loss),
        op(
            "smooth_l1_loss(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean', float beta=1.0) -> Tensor",
            &[Functional(2)],
            |(x, t, size_average, reduce, reduction, beta): (
                Tensor,
                Tensor,
                Option<bool>,
                Option<bool>,
                String,
                f64,
            )| {
                let r = Reduction::from_args(size_average, reduce, &reduction)?;
                let diff = abs_diff(x, t)?;
                let loss = if beta == 0.0 {
                    diff
                } else {
                    // 0.5·z²/beta below beta, z - 0.5·beta above.
                    quadratic_below(
                        diff,
                        beta,
                        |half_square| bin(Binary::Div, half_square, beta),
                        |z| bin(Binary::Sub, z, 0.5 * beta),
                    )?
                };
                r.apply(loss)
            },
        )
        .python_reads(&[("target", "size"), ("input", "size")]).grad(crate::derivatives::loss::smooth_l1(false)).meta(meta::loss),
        op(
            "huber_loss(Tensor input, Tensor target, str reduction='mean', float delta=1.0, Tensor? weight=None) -> Tensor",
            &[Functional(2)],
            |(x, t, reduction, delta, w): (Tensor, Tensor, String, f64, Option<Tensor>)| {
                let r = Reduction::from_args(None, None, &reduction)?;
                // 0.5·z² below delta, delta·(z - 0.5·delta) above.
                let loss = quadratic_below(abs_diff(x, t)?, delta, Ok, |z| {
                    bin(Binary::Mul, bin(Binary::Sub, z, 0.5 * delta)?, delta)
                })?;
                r.apply(weighted(loss, w)?)
            },
        )
        .python_reads(&[("target", "size"), ("input", "size"), ("weight", "size")]).grad(crate::derivatives::loss::smooth_l1(true)).meta(meta::loss),
        op(
            "kl_div(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean', bool log_target=False) -> Tensor",
            &[Functional(2)],
            |(x, t, size_average, reduce, reduction, log_target): (
                Tensor,
                Tensor,
                Option<bool>,
                Option<bool>,
                String,
                bool,
            )| {
                // Pointwise target * (log target - input), with 0 where the
                // target is 0 (xlogy), or from log-space targets.
                // Composite, as PyTorch's.
                let loss = if log_target {
                    o::mul(&o::unary("exp", &t)?, &o::sub(&t, &x)?)?
                } else {
                    let xlogy = o::call(
                        "xlogy",
                        vec![Value::Tensor(t.clone()), Value::Tensor(t.clone())],
                        vec![],
                    )?;
                    o::sub(&xlogy, &o::mul(&t, &x)?)?
                };
                if size_average.is_none() && reduce.is_none() && reduction == "batchmean" {
                    let total = o::reduced(Reduction::Sum, loss)?;
                    return match x.shape().first() {
                        Some(&n) => o::call(
                            "div",
                            vec![Value::Tensor(total), Value::Scalar(fxvm_tensor::Scalar::Int(n as i64))],
                            vec![],
                        ),
                        None => Ok(total),
                    };
                }
                o::reduced(Reduction::from_args(size_average, reduce, &reduction)?, loss)
            },
        )
        .composite(),
    ]
}
