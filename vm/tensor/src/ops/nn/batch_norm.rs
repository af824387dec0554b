//! Batch and instance normalisation over dim 1: statistics per channel
//! (per sample and channel for instance norm), the running statistics
//! updated in place in training.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use crate::ops::{PARALLEL_MIN, reduce, shape};

use super::*;

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
