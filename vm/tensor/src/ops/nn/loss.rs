//! The losses over classes and elements: `nll_loss`, `cross_entropy`,
//! `mse_loss`, `l1_loss`, and how a loss reduces (`Reduction`).

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError, legacy_name};
use crate::tensor::Tensor;

use crate::ops::elementwise::{Arg, Binary, binary};
use crate::ops::{reduce, shape};

use super::*;

/// How a loss combines its per-element values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduction {
    None,
    Mean,
    Sum,
}

impl Reduction {
    pub fn parse(s: &str) -> Result<Reduction> {
        match s {
            "none" => Ok(Reduction::None),
            "mean" => Ok(Reduction::Mean),
            "sum" => Ok(Reduction::Sum),
            _ => Err(TensorError::value(
                "loss",
                format!("{s} is not a valid value for reduction"),
            )),
        }
    }

    /// The reduction a loss call asks for: PyTorch's deprecated
    /// `size_average`/`reduce` flags, when given, override `reduction`.
    pub fn from_args(
        size_average: Option<bool>,
        reduce: Option<bool>,
        reduction: &str,
    ) -> Result<Reduction> {
        if size_average.is_none() && reduce.is_none() {
            return Reduction::parse(reduction);
        }
        Ok(
            match (size_average.unwrap_or(true), reduce.unwrap_or(true)) {
                (_, false) => Reduction::None,
                (true, true) => Reduction::Mean,
                (false, true) => Reduction::Sum,
            },
        )
    }

    /// Reduces elementwise losses.
    pub fn apply(self, t: Tensor) -> Result<Tensor> {
        match self {
            Reduction::None => Ok(t),
            Reduction::Mean => reduce::mean(&t, None, false, None),
            Reduction::Sum => reduce::sum(&t, None, false, None),
        }
    }
}

fn pointwise_loss(
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    square: bool,
) -> Result<Tensor> {
    let diff = binary(
        Binary::Sub,
        &Arg::Tensor(input.clone()),
        &Arg::Tensor(target.clone()),
    )?;
    let e = if square {
        binary(Binary::Mul, &Arg::Tensor(diff.clone()), &Arg::Tensor(diff))?
    } else {
        crate::ops::elementwise::unary(crate::ops::elementwise::Unary::Abs, &diff)?
    };
    reduction.apply(e)
}

pub fn mse_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    pointwise_loss(input, target, reduction, true)
}

pub fn l1_loss(input: &Tensor, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
    pointwise_loss(input, target, reduction, false)
}

/// Log-probabilities laid out as (batch, classes, positions) for the class losses.
struct ClassLayout {
    batch: usize,
    classes: usize,
    positions: usize,
}

fn class_layout(op: &'static str, input: &Tensor, target: &Tensor) -> Result<ClassLayout> {
    match input.ndim() {
        1 => {
            if target.ndim() > 0 {
                return Err(TensorError::runtime(
                    op,
                    "0D or 1D target tensor expected, multi-target not supported",
                ));
            }
            Ok(ClassLayout {
                batch: 1,
                classes: input.shape()[0],
                positions: 1,
            })
        }
        0 => Err(TensorError::runtime(op, "input tensor should be 1D or 2D")),
        r => {
            let (n, c) = (input.shape()[0], input.shape()[1]);
            if target.ndim() == 0 || target.shape()[0] != n {
                let tn = target.shape().first().copied().unwrap_or(0);
                return Err(TensorError::value(
                    op,
                    format!("Expected input batch_size ({n}) to match target batch_size ({tn})."),
                ));
            }
            if r == 2 && target.ndim() != 1 {
                return Err(TensorError::runtime(
                    op,
                    "0D or 1D target tensor expected, multi-target not supported",
                ));
            }
            let mut expected = vec![n];
            expected.extend(&input.shape()[2..]);
            if r > 2 && target.shape() != expected {
                return Err(TensorError::runtime(
                    op,
                    format!(
                        "Expected target size {expected:?}, got {:?}",
                        target.shape()
                    ),
                ));
            }
            Ok(ClassLayout {
                batch: n,
                classes: c,
                positions: input.shape()[2..].iter().product(),
            })
        }
    }
}

/// `F.nll_loss` on log-probabilities with class-index targets.
/// The elements at row-major positions `offsets`, as f64, reading only those.
fn values_at(t: &Tensor, offsets: &[usize]) -> Vec<f64> {
    match t.dtype() {
        DType::F32 => t.with_slice(|x: &[f32]| offsets.iter().map(|&o| f64::from(x[o])).collect()),
        DType::F64 => t.with_slice(|x: &[f64]| offsets.iter().map(|&o| x[o]).collect()),
        _ => {
            let x: Vec<f64> = t.to_vec();
            offsets.iter().map(|&o| x[o]).collect()
        }
    }
}

pub fn nll_loss(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: Reduction,
) -> Result<Tensor> {
    float_only("nll_loss", input)?;
    if !matches!(target.dtype(), DType::I64 | DType::I32) {
        return Err(TensorError::runtime(
            "nll_loss",
            format!(
                "expected target dtype to be Long or Byte, but got {}",
                legacy_name(target.dtype())
            ),
        ));
    }
    let l = class_layout("nll_loss", input, target)?;
    let w = param(weight, l.classes, |t| {
        if t.numel() != l.classes {
            return Err(TensorError::runtime(
                "nll_loss",
                format!(
                    "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {:?}",
                    l.classes,
                    t.shape()
                ),
            ));
        }
        if t.dtype() != input.dtype() {
            return Err(TensorError::runtime(
                "nll_loss",
                format!(
                    "expected scalar type {} but found {}",
                    legacy_name(input.dtype()),
                    legacy_name(t.dtype())
                ),
            ));
        }
        Ok(())
    })?;
    let t: Vec<i64> = target.to_vec();
    // Where each counted item's target class sits in the input (None:
    // ignored); only those elements are read.
    let mut picks = Vec::with_capacity(t.len());
    for b in 0..l.batch {
        for p in 0..l.positions {
            let class = t[b * l.positions + p];
            if class == ignore_index {
                picks.push(None);
                continue;
            }
            if class < 0 || class as usize >= l.classes {
                return Err(TensorError::index_error(format!(
                    "Target {class} is out of bounds."
                )));
            }
            let at = (b * l.classes + class as usize) * l.positions + p;
            picks.push(Some((class as usize, at)));
        }
    }
    let offsets: Vec<usize> = picks.iter().flatten().map(|&(_, at)| at).collect();
    let mut x = values_at(input, &offsets).into_iter();
    let mut losses = Vec::with_capacity(t.len());
    let (mut total, mut weight_sum) = (0.0, 0.0);
    for pick in picks {
        let Some((class, _)) = pick else {
            losses.push(0.0);
            continue;
        };
        let value = x.next().expect("one value read per counted item");
        let wc = w.as_ref().map_or(1.0, |w| w[class]);
        let v = -wc * value;
        losses.push(v);
        total += v;
        weight_sum += wc;
    }
    let out = match reduction {
        Reduction::None => Tensor::from_vec(losses, target.shape()),
        Reduction::Sum => Tensor::from_vec(vec![total], &[]),
        Reduction::Mean => Tensor::from_vec(vec![total / weight_sum], &[]),
    };
    Ok(out.to_dtype(input.dtype()))
}

/// Arguments of `F.cross_entropy` beyond input and target.
pub struct CrossEntropy<'a> {
    pub weight: Option<&'a Tensor>,
    pub ignore_index: i64,
    pub reduction: Reduction,
    pub label_smoothing: f64,
}

/// `F.cross_entropy` with class-index or class-probability targets.
pub fn cross_entropy(input: &Tensor, target: &Tensor, a: &CrossEntropy) -> Result<Tensor> {
    float_only("cross_entropy", input)?;
    if !(0.0..=1.0).contains(&a.label_smoothing) {
        return Err(TensorError::runtime(
            "cross_entropy",
            format!(
                "label_smoothing must be between 0.0 and 1.0. Got: {}",
                a.label_smoothing
            ),
        ));
    }
    let class_dim = if input.ndim() == 1 { 0 } else { 1 };
    let logp = reduce::softmax(input, class_dim, None, reduce::SoftmaxKind::LogSoftmax)?;
    let classes = input.shape().get(class_dim as usize).copied().unwrap_or(0);
    let weight_view = |w: &Tensor| -> Result<Tensor> {
        // Weights broadcast along the class dim.
        let mut shape = vec![1; input.ndim()];
        shape[class_dim as usize] = classes;
        shape::reshape(w, &shape.iter().map(|&d| d as i64).collect::<Vec<_>>())
    };
    let mul = |a: Tensor, b: Tensor| binary(Binary::Mul, &Arg::Tensor(a), &Arg::Tensor(b));
    let scale =
        |a: Tensor, s: f64| binary(Binary::Mul, &Arg::Tensor(a), &Arg::Scalar(Scalar::Float(s)));
    if target.dtype().is_float() {
        // Class probabilities.
        if target.shape() != input.shape() {
            return Err(TensorError::runtime(
                "cross_entropy",
                "0D or 1D target tensor expected, multi-target not supported",
            ));
        }
        let target = if a.label_smoothing > 0.0 {
            let kept = scale(target.clone(), 1.0 - a.label_smoothing)?;
            binary(
                Binary::Add,
                &Arg::Tensor(kept),
                &Arg::Scalar(Scalar::Float(a.label_smoothing / classes as f64)),
            )?
        } else {
            target.clone()
        };
        let mut terms = mul(logp, target)?;
        if let Some(w) = a.weight {
            terms = mul(terms, weight_view(w)?)?;
        }
        let per_item = scale(reduce::sum(&terms, Some(&[class_dim]), false, None)?, -1.0)?;
        return match a.reduction {
            Reduction::Mean if input.ndim() > 1 => scale(
                reduce::sum(&per_item, None, false, None)?,
                1.0 / (input.numel() / classes.max(1)) as f64,
            ),
            r => r.apply(per_item),
        };
    }
    let nll = nll_loss(&logp, target, a.weight, a.ignore_index, a.reduction)?;
    if a.label_smoothing == 0.0 {
        return Ok(nll);
    }
    let weighted = match a.weight {
        Some(w) => mul(logp, weight_view(w)?)?,
        None => logp,
    };
    let smooth = scale(
        reduce::sum(&weighted, Some(&[class_dim]), false, None)?,
        -1.0,
    )?;
    let ignored = binary(
        Binary::Eq,
        &Arg::Tensor(target.clone()),
        &Arg::Scalar(Scalar::Int(a.ignore_index)),
    )?;
    let smooth = crate::ops::index::masked_fill(&smooth, &ignored, Scalar::Float(0.0))?;
    let smooth = match (a.reduction, a.weight) {
        (Reduction::Mean, Some(w)) => {
            let t: Vec<i64> = target.to_vec();
            let wv: Vec<f64> = w.to_vec();
            let denom: f64 = t
                .iter()
                .filter(|&&c| c != a.ignore_index)
                .map(|&c| wv[c as usize])
                .sum();
            scale(reduce::sum(&smooth, None, false, None)?, 1.0 / denom)?
        }
        (r, _) => r.apply(smooth)?,
    };
    let lhs = scale(nll, 1.0 - a.label_smoothing)?;
    let rhs = scale(smooth, a.label_smoothing / classes as f64)?;
    binary(Binary::Add, &Arg::Tensor(lhs), &Arg::Tensor(rhs))
}
