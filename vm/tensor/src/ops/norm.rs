//! Normalisation over features: layer norm and RMS norm over trailing
//! dims, local response norm across channels.

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::PARALLEL_MIN;
use super::nn::{float_only, list, moments, param};

/// `F.layer_norm` over the trailing `normalized_shape` dims.
pub fn layer_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    trailing_norm(x, normalized_shape, weight, bias, eps, false)
}

/// `F.rms_norm`: each row over the trailing dims divided by its root mean
/// square (`eps` inside the root), then scaled by `weight`.
pub fn rms_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    trailing_norm(x, normalized_shape, weight, None, eps, true)
}

/// Layer norm (centred: mean and variance) or RMS norm (root mean square)
/// over the trailing dims, with PyTorch's checks (both report as layer_norm).
fn trailing_norm(
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    rms: bool,
) -> Result<Tensor> {
    float_only(if rms { "rms_norm" } else { "layer_norm" }, x)?;
    let k = normalized_shape.len();
    if k == 0 || x.ndim() < k || x.shape()[x.ndim() - k..] != *normalized_shape {
        return Err(TensorError::runtime(
            "layer_norm",
            format!(
                "Given normalized_shape={normalized_shape:?}, expected input with shape [*{}{}], but got input of size{:?}",
                // rms_norm's message drops the separator; layer_norm's has it.
                if rms { "" } else { ", " },
                list(normalized_shape),
                x.shape()
            ),
        ));
    }
    let row: usize = normalized_shape.iter().product();
    let check = |what: &str, t: &Tensor| {
        if t.shape() != normalized_shape {
            return Err(TensorError::runtime(
                "layer_norm",
                format!(
                    "Expected {what} to be of same shape as normalized_shape, but got {what} of shape {:?} and normalized_shape = {normalized_shape:?}",
                    t.shape()
                ),
            ));
        }
        Ok(())
    };
    let w = param(weight, row, |t| check("weight", t))?;
    let b = param(bias, row, |t| check("bias", t))?;
    let mut data: Vec<f64> = x.to_vec();
    let normalise = |r: &mut [f64]| {
        let (mean, var) = if rms {
            (0.0, r.iter().map(|v| v * v).sum::<f64>() / r.len() as f64)
        } else {
            moments(r)
        };
        let inv = 1.0 / (var + eps).sqrt();
        for (i, v) in r.iter_mut().enumerate() {
            *v = (*v - mean) * inv * w.as_ref().map_or(1.0, |w| w[i])
                + b.as_ref().map_or(0.0, |b| b[i]);
        }
    };
    if row > 0 {
        data.par_chunks_mut(row)
            .with_min_len(PARALLEL_MIN.div_ceil(row))
            .for_each(normalise);
    }
    Ok(Tensor::from_vec(data, x.shape()).to_dtype(x.dtype()))
}

/// `x / (k + alpha * mean(x²) over channels [c - size/2, c + (size-1)/2])^beta`,
/// the mean dividing by `size` whatever the window holds (zero padding).
pub fn local_response_norm(x: &Tensor, size: i64, alpha: f64, beta: f64, k: f64) -> Result<Tensor> {
    if x.ndim() < 3 {
        return Err(TensorError::value(
            "local_response_norm",
            // PyTorch's message carries a source line's indentation inside it.
            format!(
                "Expected 3D or higher dimensionality{}input (got {} dimensions)",
                " ".repeat(26),
                x.ndim()
            ),
        ));
    }
    if !x.dtype().is_float() {
        return Err(TensorError::not_implemented_for("avg_pool2d", x.dtype()));
    }
    if x.numel() == 0 {
        return Ok(x.clone());
    }
    let size = usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| TensorError::runtime("local_response_norm", "size must be positive"))?;
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let inner: usize = x.shape()[2..].iter().product();
    let data: Vec<f64> = x.contiguous().to_vec();
    let mut out = vec![0.0; data.len()];
    let (before, after) = (size / 2, (size - 1) / 2);
    for b in 0..n {
        let image = &data[b * c * inner..(b + 1) * c * inner];
        for ch in 0..c {
            let (lo, hi) = (ch.saturating_sub(before), (ch + after).min(c - 1));
            for i in 0..inner {
                let sum: f64 = (lo..=hi).map(|j| image[j * inner + i].powi(2)).sum();
                let v = image[ch * inner + i];
                out[(b * c + ch) * inner + i] = v / (sum / size as f64 * alpha + k).powf(beta);
            }
        }
    }
    Ok(Tensor::from_vec(out, x.shape()).to_dtype(x.dtype()))
}
