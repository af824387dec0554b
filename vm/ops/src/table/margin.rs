//! Margin, ranking, embedding and likelihood losses, composed from
//! elementwise ops in PyTorch's order of operations — through the rows
//! (`autograd::ops::ew`), so that most are composite rows recording their
//! history; `multi_margin_loss` and `multilabel_margin_loss` run the core's
//! kernels.

use fxvm_tensor::ops::elementwise::{Arg, Binary, Unary};
use fxvm_tensor::ops::margin as margins;
use fxvm_tensor::ops::nn::Reduction;
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use super::activation::pairwise_distance;
use crate::autograd::ops::{self as o, ew};
use crate::op::{Op, Place, op};

/// A binary op through its row.
fn bin(op: Binary, a: impl Into<Arg>, b: impl Into<Arg>) -> Result<Tensor> {
    ew::binary(op, &a.into(), &b.into())
}

use Place::Functional;

/// `max(x, 0)`.
fn clamp_min0(x: &Tensor) -> Result<Tensor> {
    ew::clamp(x, Some(Scalar::Float(0.0)), None)
}

/// `t` where `mask`, else zero.
fn only_where(mask: &Tensor, t: Tensor) -> Result<Tensor> {
    ew::where_(mask, &t.into(), &0.0.into())
}

/// The reduction the legacy flags or `reduction` name.
fn reduction(size_average: Option<bool>, reduce: Option<bool>, name: &str) -> Result<Reduction> {
    Reduction::from_args(size_average, reduce, name)
}

/// `log(sigmoid(x))` as `-softplus(-x)`.
fn log_sigmoid(x: &Tensor) -> Result<Tensor> {
    let neg = ew::unary(Unary::Neg, x)?;
    ew::unary(Unary::Neg, &ew::unary(Unary::Softplus, &neg)?)
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "margin_ranking_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(3)],
            |(a, b, t, margin, sa, re, name): (
                Tensor,
                Tensor,
                Tensor,
                f64,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                if a.ndim() != b.ndim() || a.ndim() != t.ndim() {
                    return Err(TensorError::runtime(
                        "margin_ranking_loss",
                        format!(
                            "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: torch.Size({:?}), input2: torch.Size({:?}), target: torch.Size({:?}) ",
                            a.shape(),
                            b.shape(),
                            t.shape()
                        ),
                    ));
                }
                let r = reduction(sa, re, &name)?;
                let neg_t = ew::unary(Unary::Neg, &t)?;
                let loss = bin(
                    Binary::Add,
                    bin(Binary::Mul, neg_t, bin(Binary::Sub, &a, &b)?)?,
                    margin,
                )?;
                o::reduced(r, clamp_min0(&loss)?)
            },
        )
        .python_reads(&[("input1", "dim"), ("input2", "dim"), ("target", "dim")])
        .composite(),
        op(
            "hinge_embedding_loss(Tensor input, Tensor target, float margin=1.0, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, margin, sa, re, name): (
                Tensor,
                Tensor,
                f64,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                let r = reduction(sa, re, &name)?;
                let margin_part = clamp_min0(&bin(Binary::Sub, margin, &x)?)?;
                let outside = only_where(&bin(Binary::Ne, &t, 1.0)?, margin_part)?;
                let inside = only_where(&bin(Binary::Ne, &t, -1.0)?, x)?;
                o::reduced(r, bin(Binary::Add, outside, inside)?)
            },
        )
        .composite(),
        op(
            "soft_margin_loss(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, sa, re, name): (Tensor, Tensor, Option<bool>, Option<bool>, String)| {
                let r = reduction(sa, re, &name)?;
                // PyTorch computes into a tensor of the input's dtype, in place.
                let z = o::to_dtype(&ew::unary(Unary::Neg, &bin(Binary::Mul, &t, &x)?)?, x.dtype())?;
                o::reduced(r, ew::unary(Unary::Log1p, &ew::unary(Unary::Exp, &z)?)?)
            },
        )
        .composite(),
        op(
            "cosine_embedding_loss(Tensor input1, Tensor input2, Tensor target, float margin=0, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(3)],
            |(a, b, t, margin, sa, re, name): (
                Tensor,
                Tensor,
                Tensor,
                f64,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                let r = reduction(sa, re, &name)?;
                let dim = [if t.ndim() == 0 { 0 } else { 1 }];
                let sum = |x: Tensor| o::sum(&x, &dim, false);
                const EPSILON: f64 = 1e-12;
                let dot = sum(bin(Binary::Mul, &a, &b)?)?;
                let sq_a = bin(Binary::Add, sum(bin(Binary::Mul, &a, &a)?)?, EPSILON)?;
                let sq_b = bin(Binary::Add, sum(bin(Binary::Mul, &b, &b)?)?, EPSILON)?;
                let cos = bin(
                    Binary::Div,
                    dot,
                    ew::unary(Unary::Sqrt, &bin(Binary::Mul, sq_a, sq_b)?)?,
                )?;
                let pos = only_where(&bin(Binary::Eq, &t, 1.0)?, bin(Binary::Sub, 1.0, &cos)?)?;
                let neg = only_where(
                    &bin(Binary::Eq, &t, -1.0)?,
                    clamp_min0(&bin(Binary::Sub, &cos, margin)?)?,
                )?;
                o::reduced(r, bin(Binary::Add, pos, neg)?)
            },
        )
        .composite(),
        op(
            "poisson_nll_loss(Tensor input, Tensor target, bool log_input=True, bool full=False, bool? size_average=None, float eps=1e-08, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, log_input, full, sa, eps, re, name): (
                Tensor,
                Tensor,
                bool,
                bool,
                Option<bool>,
                f64,
                Option<bool>,
                String,
            )| {
                let r = reduction(sa, re, &name)?;
                let mut loss = if log_input {
                    bin(
                        Binary::Sub,
                        ew::unary(Unary::Exp, &x)?,
                        bin(Binary::Mul, &t, &x)?,
                    )?
                } else {
                    let log = ew::unary(Unary::Log, &bin(Binary::Add, &x, eps)?)?;
                    bin(Binary::Sub, &x, bin(Binary::Mul, &t, log)?)?
                };
                if full {
                    // Stirling's term t·log t - t + ½·log(2πt), for targets above 1.
                    let t_log_t = bin(Binary::Mul, &t, ew::unary(Unary::Log, &t)?)?;
                    let two_pi_t = bin(Binary::Mul, 2.0 * std::f64::consts::PI, &t)?;
                    let half_log = bin(Binary::Mul, 0.5, ew::unary(Unary::Log, &two_pi_t)?)?;
                    let stirling = bin(Binary::Add, bin(Binary::Sub, t_log_t, &t)?, half_log)?;
                    let stirling =
                        ew::where_(&bin(Binary::Le, &t, 1.0)?, &0.0.into(), &stirling.into())?;
                    loss = bin(Binary::Add, loss, stirling)?;
                }
                o::reduced(r, loss)
            },
        )
        .composite(),
        op(
            "gaussian_nll_loss(Tensor input, Tensor target, Tensor|float var, bool full=False, float eps=1e-06, str reduction='mean') -> Tensor",
            &[Functional(3)],
            |(x, t, var, full, eps, name): (
                Tensor,
                Tensor,
                crate::value::Or<Tensor, f64>,
                bool,
                f64,
                String,
            )| {
                let op = "gaussian_nll_loss";
                let var = match var {
                    crate::value::Or::A(v) => v,
                    crate::value::Or::B(v) => Tensor::scalar(Scalar::Float(v), x.dtype()),
                };
                let var = if var.shape() == x.shape() || var.ndim() == 0 {
                    var
                } else if x.shape().split_last().map(|(_, a)| a) == Some(var.shape()) {
                    // One fewer dim: a variance per row (homoscedastic).
                    o::unsqueeze(&var, -1)?
                } else if x.shape().split_last().map(|(_, a)| a)
                    == var.shape().split_last().map(|(_, a)| a)
                    && var.shape().last() == Some(&1)
                {
                    var
                } else {
                    return Err(TensorError::value(op, "var is of incorrect size"));
                };
                if !["none", "mean", "sum"].contains(&name.as_str()) {
                    return Err(TensorError::value(op, format!("{name} is not valid")));
                }
                if ew::unary(Unary::Neg, &var)?
                    .to_dtype(fxvm_tensor::DType::F64)
                    .to_vec::<f64>()
                    .iter()
                    .any(|&v| v > 0.0)
                {
                    return Err(TensorError::value(op, "var has negative entry/entries"));
                }
                let var = ew::clamp(&var, Some(Scalar::Float(eps)), None)?;
                let sq = bin(Binary::Pow, bin(Binary::Sub, &x, &t)?, 2.0)?;
                let mut loss = bin(
                    Binary::Mul,
                    0.5,
                    bin(
                        Binary::Add,
                        ew::unary(Unary::Log, &var)?,
                        bin(Binary::Div, sq, &var)?,
                    )?,
                )?;
                if full {
                    loss = bin(Binary::Add, loss, 0.5 * (2.0 * std::f64::consts::PI).ln())?;
                }
                o::reduced(reduction(None, None, &name)?, loss)
            },
        )
        .python_reads(&[("input", "size")])
        .composite(),
        op(
            "triplet_margin_loss(Tensor anchor, Tensor positive, Tensor negative, float margin=1.0, float p=2, float eps=1e-06, bool swap=False, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(3)],
            |(a, pos, neg, margin, p, eps, swap, sa, re, name): (
                Tensor,
                Tensor,
                Tensor,
                f64,
                f64,
                f64,
                bool,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                let r = reduction(sa, re, &name)?;
                let d_pos = pairwise_distance(&a, &pos, p, eps, false)?;
                let mut d_neg = pairwise_distance(&a, &neg, p, eps, false)?;
                if swap {
                    let d_swap = pairwise_distance(&pos, &neg, p, eps, false)?;
                    d_neg = bin(Binary::Minimum, d_neg, d_swap)?;
                }
                let loss = bin(Binary::Sub, bin(Binary::Add, d_pos, margin)?, d_neg)?;
                o::reduced(r, clamp_min0(&loss)?)
            },
        )
        .composite(),
        op(
            "multi_margin_loss(Tensor input, Tensor target, int p=1, float margin=1.0, Tensor? weight=None, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, p, margin, w, sa, re, name): (
                Tensor,
                Tensor,
                i64,
                f64,
                Option<Tensor>,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                if p != 1 && p != 2 {
                    return Err(TensorError::value(
                        "multi_margin_loss",
                        "only p == 1 and p == 2 supported",
                    ));
                }
                if w.as_ref().is_some_and(|w| w.ndim() != 1) {
                    return Err(TensorError::value(
                        "multi_margin_loss",
                        "weight must be one-dimensional",
                    ));
                }
                let r = reduction(sa, re, &name)?;
                o::reduced(r, margins::multi_margin(&x, &t, p, margin, w.as_ref())?)
            },
        )
        .python_reads(&[("weight", "dim")])
        .kernel_dtypes("multi_margin_loss_cpu_kernel", crate::kernels::FLOAT32_64)
        .grad(crate::derivatives::loss::multi_margin()),
        op(
            "multilabel_margin_loss(Tensor input, Tensor target, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, sa, re, name): (Tensor, Tensor, Option<bool>, Option<bool>, String)| {
                o::reduced(reduction(sa, re, &name)?, margins::multilabel_margin(&x, &t)?)
            },
        )
        .kernel_dtypes("multilabel_margin_loss_forward_out_frame", crate::kernels::FLOAT32_64)
        .grad(crate::derivatives::loss::multilabel_margin()),
        op(
            "multilabel_soft_margin_loss(Tensor input, Tensor target, Tensor? weight=None, bool? size_average=None, bool? reduce=None, str reduction='mean') -> Tensor",
            &[Functional(2)],
            |(x, t, w, sa, re, name): (
                Tensor,
                Tensor,
                Option<Tensor>,
                Option<bool>,
                Option<bool>,
                String,
            )| {
                let r = reduction(sa, re, &name)?;
                // PyTorch's functional reads `input.size(-1)` first.
                if x.ndim() == 0 {
                    return Err(TensorError::NoDims { dim: -1 });
                }
                let pos = bin(Binary::Mul, &t, log_sigmoid(&x)?)?;
                let neg = bin(
                    Binary::Mul,
                    bin(Binary::Sub, 1.0, &t)?,
                    log_sigmoid(&ew::unary(Unary::Neg, &x)?)?,
                )?;
                let mut loss = ew::unary(Unary::Neg, &bin(Binary::Add, pos, neg)?)?;
                if let Some(w) = w {
                    loss = bin(Binary::Mul, loss, w)?;
                }
                let class_dim = x.ndim() as i64 - 1;
                let classes = x.shape().last().copied().unwrap_or(1) as f64;
                let per_sample = bin(
                    Binary::Div,
                    o::sum(&loss, &[class_dim], false)?,
                    classes,
                )?;
                o::reduced(r, per_sample)
            },
        )
        .composite(),
    ]
}
