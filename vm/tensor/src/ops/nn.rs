//! Neural-network ops: normalisation (`batch_norm layer_norm group_norm`),
//! `embedding`, the losses (`nll_loss cross_entropy mse_loss l1_loss`) and
//! `scaled_dot_product_attention`. Statistics accumulate in f64.

use rayon::prelude::*;

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::Layout;
use crate::tensor::Tensor;

use super::attention::{self, FlashForm};
use super::elementwise::{Arg, Binary, binary};
use super::{PARALLEL_MIN, create, linalg, reduce, shape};

pub(super) fn float_only(op: &'static str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(op, t.dtype()));
    }
    Ok(())
}

/// Mean and biased variance of a slice.
pub(super) fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len().max(1) as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// An optional per-feature parameter as f64s, checked to have `len` elements.
pub(super) fn param(
    t: Option<&Tensor>,
    len: usize,
    check: impl Fn(&Tensor) -> Result<()>,
) -> Result<Option<Vec<f64>>> {
    match t {
        None => Ok(None),
        Some(t) => {
            check(t)?;
            debug_assert_eq!(t.numel(), len);
            Ok(Some(t.to_vec()))
        }
    }
}

pub(super) fn list(s: &[usize]) -> String {
    s.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// PyTorch's CPU rule for a norm's parameters (weight, bias, running
/// statistics): one dtype among them, which is the input's — or float32
/// for a half-precision input (its "mixed dtype" kernels).
pub fn check_norm_params(x: &Tensor, params: &[Option<&Tensor>]) -> Result<()> {
    let dtypes: Vec<DType> = params.iter().flatten().map(|p| p.dtype()).collect();
    let Some(&first) = dtypes.first() else {
        return Ok(());
    };
    let one = dtypes.iter().all(|&d| d == first);
    let mixed = matches!(x.dtype(), DType::F16 | DType::BF16) && first == DType::F32;
    if one && (first == x.dtype() || mixed) {
        return Ok(());
    }
    let message = if one && x.dtype() == DType::F64 {
        "mixed dtype (CPU): all inputs must share same datatype."
    } else {
        "mixed dtype (CPU): expect parameter to have scalar type of Float"
    };
    Err(TensorError::runtime("norm", message))
}

/// Arguments of `F.batch_norm` beyond the input.
pub struct BatchNorm<'a> {
    pub running_mean: Option<&'a Tensor>,
    pub running_var: Option<&'a Tensor>,
    pub weight: Option<&'a Tensor>,
    pub bias: Option<&'a Tensor>,
    pub training: bool,
    pub momentum: f64,
    pub eps: f64,
}

/// `F.batch_norm` over dim 1; in training it updates the running statistics in place.
pub fn batch_norm(x: &Tensor, a: &BatchNorm) -> Result<Tensor> {
    float_only("batch_norm", x)?;
    check_norm_params(x, &[a.weight, a.bias, a.running_mean, a.running_var])?;
    if x.ndim() < 2 {
        return Err(TensorError::value(
            "batch_norm",
            format!("Expected 2D or 3D input (got {}D input)", x.ndim()),
        ));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let inner: usize = x.shape()[2..].iter().product();
    if !a.training && (a.running_mean.is_none() || a.running_var.is_none()) {
        let which = if a.running_mean.is_none() {
            "running_mean"
        } else {
            "running_var"
        };
        return Err(TensorError::runtime(
            "batch_norm",
            format!("{which} must be defined in evaluation mode"),
        ));
    }
    let check = |name: &str, t: &Tensor| {
        if t.numel() != c {
            return Err(TensorError::runtime(
                "batch_norm",
                format!("{name} should contain {c} elements not {}", t.numel()),
            ));
        }
        Ok(())
    };
    let w = param(a.weight, c, |t| check("weight", t))?;
    let b = param(a.bias, c, |t| check("bias", t))?;
    let rm = param(a.running_mean, c, |t| check("running_mean", t))?;
    let rv = param(a.running_var, c, |t| check("running_var", t))?;
    if !a.training && x.dtype() == DType::F32 {
        let (rm, rv) = (
            rm.as_ref().expect("checked above"),
            rv.as_ref().expect("checked above"),
        );
        return Ok(eval_f32(x, c, inner, |ch| {
            // As PyTorch folds it: y = x·α + β per channel.
            let alpha = w.as_ref().map_or(1.0, |w| w[ch]) / (rv[ch] + a.eps).sqrt();
            let beta = b.as_ref().map_or(0.0, |b| b[ch]) - rm[ch] * alpha;
            (alpha as f32, beta as f32)
        }));
    }
    let data: Vec<f64> = x.to_vec();
    // Per channel: (mean, variance) used to normalise.
    let stats: Vec<(f64, f64)> = if a.training {
        (0..c)
            .into_par_iter()
            .map(|ch| {
                let values: Vec<f64> = (0..n)
                    .flat_map(|i| {
                        data[(i * c + ch) * inner..(i * c + ch + 1) * inner]
                            .iter()
                            .copied()
                    })
                    .collect();
                moments(&values)
            })
            .collect()
    } else {
        let (rm, rv) = (
            rm.as_ref().expect("checked above"),
            rv.as_ref().expect("checked above"),
        );
        (0..c).map(|ch| (rm[ch], rv[ch])).collect()
    };
    if a.training {
        let count = (n * inner) as f64;
        let m = a.momentum;
        if let (Some(t), Some(old)) = (a.running_mean, &rm) {
            let new: Vec<f64> = (0..c)
                .map(|ch| (1.0 - m) * old[ch] + m * stats[ch].0)
                .collect();
            t.copy_from(&Tensor::from_vec(new, t.shape()))?;
        }
        if let (Some(t), Some(old)) = (a.running_var, &rv) {
            let unbiased = |v: f64| v * count / (count - 1.0);
            let new: Vec<f64> = (0..c)
                .map(|ch| (1.0 - m) * old[ch] + m * unbiased(stats[ch].1))
                .collect();
            t.copy_from(&Tensor::from_vec(new, t.shape()))?;
        }
    }
    let mut out = data;
    if inner > 0 {
        out.par_chunks_mut(inner)
            .with_min_len(PARALLEL_MIN.div_ceil(inner))
            .enumerate()
            .for_each(|(i, plane)| {
                let ch = i % c;
                let (mean, var) = stats[ch];
                let scale = w.as_ref().map_or(1.0, |w| w[ch]) / (var + a.eps).sqrt();
                let shift = b.as_ref().map_or(0.0, |b| b[ch]);
                plane
                    .iter_mut()
                    .for_each(|v| *v = (*v - mean) * scale + shift);
            });
    }
    Ok(Tensor::from_vec(out, x.shape()).to_dtype(x.dtype()))
}

/// Evaluation-mode batch norm of an f32 tensor: each plane of channel `ch`
/// becomes `x·α + β` with `fold(ch) = (α, β)`.
fn eval_f32(
    x: &Tensor,
    c: usize,
    inner: usize,
    fold: impl Fn(usize) -> (f32, f32) + Sync,
) -> Tensor {
    let folded: Vec<(f32, f32)> = (0..c).map(fold).collect();
    let mut out = x.contiguous().to_vec::<f32>();
    if inner > 0 {
        out.par_chunks_mut(inner)
            .with_min_len(PARALLEL_MIN.div_ceil(inner))
            .enumerate()
            .for_each(|(i, plane)| {
                let (alpha, beta) = folded[i % c];
                plane.iter_mut().for_each(|v| *v = *v * alpha + beta);
            });
    }
    Tensor::from_vec(out, x.shape())
}

/// `F.group_norm`: statistics per (sample, group), affine per channel.
pub fn group_norm(
    x: &Tensor,
    groups: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    float_only("group_norm", x)?;
    check_norm_params(x, &[weight, bias])?;
    if x.ndim() < 2 {
        return Err(TensorError::runtime(
            "group_norm",
            format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                x.ndim()
            ),
        ));
    }
    let c = x.shape()[1];
    let g = usize::try_from(groups).ok().filter(|&g| g > 0 && c.is_multiple_of(g)).ok_or_else(|| {
        TensorError::runtime("group_norm", format!("Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={groups}", x.shape()))
    })?;
    let inner: usize = x.shape()[2..].iter().product();
    let check = |name: &str, t: &Tensor| {
        if t.ndim() != 1 || t.numel() != c {
            return Err(TensorError::runtime(
                "group_norm",
                format!(
                    "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {:?} and input of shape {:?}",
                    t.shape(),
                    x.shape()
                ),
            ));
        }
        Ok(())
    };
    let w = param(weight, c, |t| check("weight", t))?;
    let b = param(bias, c, |t| check("bias", t))?;
    let mut data: Vec<f64> = x.to_vec();
    let per_group = c / g * inner;
    if per_group > 0 {
        data.par_chunks_mut(per_group)
            .enumerate()
            .for_each(|(i, block)| {
                let (mean, var) = moments(block);
                let inv = 1.0 / (var + eps).sqrt();
                for (j, plane) in block.chunks_mut(inner.max(1)).enumerate() {
                    let ch = (i % g) * (c / g) + j;
                    let (scale, shift) = (
                        w.as_ref().map_or(1.0, |w| w[ch]),
                        b.as_ref().map_or(0.0, |b| b[ch]),
                    );
                    plane
                        .iter_mut()
                        .for_each(|v| *v = (*v - mean) * inv * scale + shift);
                }
            });
    }
    Ok(Tensor::from_vec(data, x.shape()).to_dtype(x.dtype()))
}

/// `F.embedding`: rows of `weight` picked by integer `indices`.
pub fn embedding(indices: &Tensor, weight: &Tensor, padding_idx: Option<i64>) -> Result<Tensor> {
    if !matches!(indices.dtype(), DType::I64 | DType::I32) {
        return Err(TensorError::runtime(
            "embedding",
            format!(
                "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got torch.{}Tensor instead (while checking arguments for embedding)",
                legacy_name(indices.dtype())
            ),
        ));
    }
    if weight.ndim() != 2 {
        return Err(TensorError::runtime("embedding", "'weight' must be 2-D"));
    }
    if let Some(p) = padding_idx {
        let rows = weight.shape()[0] as i64;
        if p >= rows || p < -rows {
            return Err(TensorError::Other {
                kind: crate::ErrorKind::Runtime,
                message: "Padding_idx must be within num_embeddings".into(),
            });
        }
    }
    // A view of the indices keeps its offset and strides.
    let flat = super::shape::reshape(indices, &[-1])?.contiguous();
    let rows = weight.shape()[0] as i64;
    if flat.to_vec::<i64>().iter().any(|&i| i < 0 || i >= rows) {
        return Err(TensorError::index_error("index out of range in self"));
    }
    let picked = super::index::index_select(weight, 0, &flat)?;
    let mut out_shape = indices.shape().to_vec();
    out_shape.push(weight.shape()[1]);
    Ok(picked.with_layout(Layout::contiguous(&out_shape)))
}

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
        super::elementwise::unary(super::elementwise::Unary::Abs, &diff)?
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
    let smooth = super::index::masked_fill(&smooth, &ignored, Scalar::Float(0.0))?;
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

/// Arguments of `F.scaled_dot_product_attention` beyond q, k, v.
pub struct Attention<'a> {
    pub mask: Option<&'a Tensor>,
    pub dropout_p: f64,
    pub is_causal: bool,
    pub scale: Option<f64>,
    pub enable_gqa: bool,
}

/// `softmax(q @ kᵀ · scale + bias) @ v`, as PyTorch's reference math.
pub fn scaled_dot_product_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    a: &Attention,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention";
    if a.is_causal && a.mask.is_some() {
        return Err(TensorError::runtime(
            op,
            "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True",
        ));
    }
    if q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2 {
        return Err(TensorError::runtime(
            op,
            "scaled_dot_product_attention: query, key and value must be at least 2-D",
        ));
    }
    if let Some(form) = attention::flash_form(q, k, v, a.mask, a.dropout_p, a.enable_gqa) {
        return flash(q, k, v, a, form);
    }
    let l = q.shape()[q.ndim() - 2];
    let s = k.shape()[k.ndim() - 2];
    let (mut k, mut v) = (k.clone(), v.clone());
    if a.enable_gqa && q.ndim() >= 3 && k.ndim() >= 3 {
        let (hq, hk) = (q.shape()[q.ndim() - 3], k.shape()[k.ndim() - 3]);
        if hk > 0 && hq % hk == 0 && hq != hk {
            let rep = hq / hk;
            let index = Tensor::from_vec(
                (0..hq).map(|h| (h / rep) as i64).collect::<Vec<i64>>(),
                &[hq],
            );
            k = super::index::index_select(&k, -3, &index)?;
            v = super::index::index_select(&v, -3, &index)?;
        }
    }
    let scale = a.scale.unwrap_or_else(|| attention::default_scale(q));
    let kt = shape::transpose(&k, -2, -1)?;
    let mut scores = binary(
        Binary::Mul,
        &Arg::Tensor(linalg::matmul(q, &kt)?),
        &Arg::Scalar(Scalar::Float(scale)),
    )?;
    if a.is_causal {
        let masked = Tensor::from_vec(
            (0..l * s).map(|i| i % s > i / s).collect::<Vec<bool>>(),
            &[l, s],
        );
        scores = super::index::masked_fill(&scores, &masked, Scalar::Float(f64::NEG_INFINITY))?;
    }
    if let Some(m) = a.mask {
        scores = if m.dtype() == DType::Bool {
            let masked = super::elementwise::map::<bool, bool>(m, |keep| !keep);
            super::index::masked_fill(&scores, &masked, Scalar::Float(f64::NEG_INFINITY))?
        } else {
            binary(Binary::Add, &Arg::Tensor(scores), &Arg::Tensor(m.clone()))?
        };
    }
    let mut weights = safe_softmax(&scores)?;
    if a.dropout_p > 0.0 {
        weights = create::dropout(
            &weights,
            a.dropout_p,
            create::DropoutKind {
                feature: false,
                alpha: false,
            },
            &crate::random::Generator::default_cpu(),
        )?;
    }
    linalg::matmul(&weights, &v)
}

/// Attention as flash attention (see [`super::attention::flash_form`]).
fn flash(q: &Tensor, k: &Tensor, v: &Tensor, a: &Attention, form: FlashForm) -> Result<Tensor> {
    let batched = |t: &Tensor| match form {
        FlashForm::Batched => t.clone(),
        FlashForm::Unbatched => t.with_layout(t.layout().unsqueeze(0)),
    };
    let mask = a.mask.map(|m| attention::additive_mask(m, q.dtype()));
    let flash = attention::Flash {
        mask: mask.as_ref(),
        causal: a.is_causal,
        scale: a.scale.unwrap_or_else(|| attention::default_scale(q)),
    };
    let (out, _) = attention::flash_attention(&batched(q), &batched(k), &batched(v), &flash)?;
    Ok(match form {
        FlashForm::Batched => out,
        FlashForm::Unbatched => shape::squeeze(&out, Some(&[0]))?,
    })
}

/// Softmax over the last dim, with zeros for a row that masks every key
/// (all -inf), as PyTorch's attention computes it (a plain softmax gives
/// NaN there, which the next product spreads to every position).
fn safe_softmax(scores: &Tensor) -> Result<Tensor> {
    let weights = reduce::softmax(scores, -1, None, reduce::SoftmaxKind::Softmax)?;
    let plan = reduce::Plan::new(scores, Some(&[-1]), true)?;
    let masked = plan.map_rows(scores, |row: &[f64]| {
        row.iter().all(|&x| x == f64::NEG_INFINITY)
    });
    if !masked.to_vec::<bool>().contains(&true) {
        return Ok(weights);
    }
    super::index::masked_fill(&weights, &masked, Scalar::Float(0.0))
}

/// `F.instance_norm`: each (sample, channel) normalised on its own, computed
/// as PyTorch does — batch norm of the input seen as one sample of N·C
/// channels, with the running statistics averaged back over the samples.
pub fn instance_norm(x: &Tensor, a: &BatchNorm) -> Result<Tensor> {
    if x.ndim() < 2 {
        return Err(TensorError::runtime(
            "instance_norm",
            format!(
                "instance_norm(): Expected at least 2 dimensions for input tensor but received {}",
                x.ndim()
            ),
        ));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    // One copy of a per-channel vector for each sample: [N·C].
    let repeat = |t: Option<&Tensor>| -> Result<Option<Tensor>> {
        t.map(|t| {
            let tiled = t.broadcast_to(&[n, t.numel()])?.copy();
            shape::reshape(&tiled, &[-1])
        })
        .transpose()
    };
    let (rm, rv) = (repeat(a.running_mean)?, repeat(a.running_var)?);
    let (w, b) = (repeat(a.weight)?, repeat(a.bias)?);
    let mut folded: Vec<i64> = vec![1, (n * c) as i64];
    folded.extend(x.shape()[2..].iter().map(|&d| d as i64));
    let out = batch_norm(
        &shape::reshape(x, &folded)?,
        &BatchNorm {
            running_mean: rm.as_ref(),
            running_var: rv.as_ref(),
            weight: w.as_ref(),
            bias: b.as_ref(),
            training: a.training,
            momentum: a.momentum,
            eps: a.eps,
        },
    )?;
    if a.training {
        for (stats, tiled) in [(a.running_mean, &rm), (a.running_var, &rv)] {
            if let (Some(stats), Some(tiled)) = (stats, tiled) {
                let per_sample = shape::reshape(tiled, &[n as i64, c as i64])?;
                stats.copy_from(&reduce::mean(&per_sample, Some(&[0]), false, None)?)?;
            }
        }
    }
    let sizes: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    shape::reshape(&out, &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_reads_the_rows_a_view_of_indices_names() {
        let w = Tensor::from_vec((0..8).map(|v| v as f32).collect(), &[4, 2]);
        let t = Tensor::from_vec(vec![0i64, 1, 2, 3], &[2, 2]);
        let row = crate::ops::shape::select(&t, 0, 1).unwrap();
        let picked = embedding(&row, &w, None).unwrap();
        assert_eq!(picked.to_vec::<f32>(), vec![4., 5., 6., 7.]);
        let picked = crate::ops::index::index_select(&w, 0, &row).unwrap();
        assert_eq!(picked.to_vec::<f32>(), vec![4., 5., 6., 7.]);
    }

    #[test]
    fn eval_batch_norm_in_f32_matches_the_f64_path() {
        let x64 = Tensor::from_vec(
            (0..2 * 3 * 40)
                .map(|i| ((i * 37) % 101) as f64 / 10.0 - 5.0)
                .collect::<Vec<f64>>(),
            &[2, 3, 5, 8],
        );
        let stats = |v: [f64; 3]| Tensor::from_vec(v.to_vec(), &[3]);
        let (rm, rv, w, b) = (
            stats([0.5, -1.0, 2.0]),
            stats([1.0, 0.25, 4.0]),
            stats([1.5, -2.0, 0.5]),
            stats([0.1, 0.2, -0.3]),
        );
        let args64 = BatchNorm {
            running_mean: Some(&rm),
            running_var: Some(&rv),
            weight: Some(&w),
            bias: Some(&b),
            training: false,
            momentum: 0.1,
            eps: 1e-5,
        };
        let args = BatchNorm { ..args64 };
        let want = batch_norm(&x64, &args).unwrap().to_vec::<f64>();
        let x32 = x64.to_dtype(DType::F32);
        // Parameters of the input's dtype, as PyTorch's CPU kernels require.
        let [rm, rv, w, b] = [&rm, &rv, &w, &b].map(|t| t.to_dtype(DType::F32));
        let args = BatchNorm {
            running_mean: Some(&rm),
            running_var: Some(&rv),
            weight: Some(&w),
            bias: Some(&b),
            ..args
        };
        let got = batch_norm(&x32, &args).unwrap();
        assert_eq!(got.dtype(), DType::F32);
        for (g, w) in got.to_vec::<f64>().iter().zip(&want) {
            assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
        }
        // A transposed (non-contiguous) view.
        let t = x32.with_layout(x32.layout().transpose(2, 3));
        let t64 = x64.with_layout(x64.layout().transpose(2, 3));
        let (got, want) = (
            batch_norm(&t, &args).unwrap(),
            batch_norm(&t64, &args64).unwrap(),
        );
        assert_eq!(got.shape(), want.shape());
        for (g, w) in got.to_vec::<f64>().iter().zip(&want.to_vec::<f64>()) {
            assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
        }
    }

    fn training<'a>(
        running_mean: Option<&'a Tensor>,
        running_var: Option<&'a Tensor>,
    ) -> BatchNorm<'a> {
        BatchNorm {
            running_mean,
            running_var,
            weight: None,
            bias: None,
            training: true,
            momentum: 0.5,
            eps: 0.0,
        }
    }

    #[test]
    fn instance_norm_normalises_each_sample_channel_alone() {
        // Two samples, one channel: [1, 2, 3] and [10, 20, 30].
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 10.0, 20.0, 30.0], &[2, 1, 3]);
        let (rm, rv) = (
            Tensor::zeros(&[1], DType::F64),
            Tensor::full(&[1], Scalar::Float(1.0), DType::F64),
        );
        let y = instance_norm(&x, &training(Some(&rm), Some(&rv)))
            .unwrap()
            .to_vec::<f64>();
        let s = (1.5f64).sqrt();
        for (got, want) in y.iter().zip([-s, 0.0, s, -s, 0.0, s]) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
        // Running mean: half of the average of the two sample means (2, 20).
        assert!((rm.to_vec::<f64>()[0] - 5.5).abs() < 1e-12);
    }

    #[test]
    fn instance_norm_needs_a_channel_dim() {
        let x = Tensor::zeros(&[3], DType::F32);
        assert!(instance_norm(&x, &training(None, None)).is_err());
    }

    /// PyTorch's CPU norms take parameters of one dtype: the input's, or
    /// float32 for a half-precision input.
    #[test]
    fn norm_parameters_share_the_inputs_dtype_or_float32_for_half_inputs() {
        let ones = |d: DType| Tensor::from_vec(vec![1.0f32; 3], &[3]).to_dtype(d);
        let check = |x: DType, p: DType| check_norm_params(&ones(x), &[Some(&ones(p)), None]);
        assert!(check(DType::F32, DType::F32).is_ok());
        assert!(check(DType::BF16, DType::F32).is_ok());
        assert!(check(DType::F16, DType::F16).is_ok());
        assert_eq!(
            check(DType::F64, DType::F32).unwrap_err().to_string(),
            "mixed dtype (CPU): all inputs must share same datatype."
        );
        assert_eq!(
            check(DType::F32, DType::F64).unwrap_err().to_string(),
            "mixed dtype (CPU): expect parameter to have scalar type of Float"
        );
        let (w, b) = (ones(DType::F32), ones(DType::F64));
        assert!(check_norm_params(&ones(DType::F64), &[Some(&w), Some(&b)]).is_err());
    }
}
