//! Normalisation over features: layer norm and RMS norm over trailing
//! dims, local response norm across channels.

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::storage::Element;
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
    super::nn::check_norm_params(x, &[weight, bias])?;
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

/// What a layer norm's backward pass computes: the input's gradient and
/// the per-feature sums the weight's and bias's gradients are.
pub struct LayerNormGrads {
    pub input: Tensor,
    /// `Σ g·x̂` over the rows, shaped like the normalized dims.
    pub weight: Tensor,
    /// `Σ g` over the rows.
    pub bias: Tensor,
}

/// The gradients through `layer_norm(x, normalized_shape, weight, _, eps)`
/// for output gradient `g`, in one pass over the rows: with
/// `x̂ = (x - mean)·rstd` and `ĝ = g·weight`, the input's is
/// `rstd·(ĝ - mean(ĝ) - x̂·mean(ĝ·x̂))` (statistics recomputed as the
/// forward computes them, in double precision).
pub fn layer_norm_backward(
    g: &Tensor,
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: f64,
) -> Result<LayerNormGrads> {
    float_only("layer_norm_backward", x)?;
    let row: usize = normalized_shape.iter().product();
    if g.shape() != x.shape() || row == 0 || !x.numel().is_multiple_of(row) {
        return Err(TensorError::runtime(
            "layer_norm_backward",
            format!(
                "expected grad_out of the input's size {:?}, rows of {row}, got {:?}",
                x.shape(),
                g.shape()
            ),
        ));
    }
    let w = param(weight, row, |_| Ok(()))?;
    let shape = normalized_shape;
    match x.dtype() {
        crate::DType::F32 => Ok(layer_norm_grads::<f32>(g, x, shape, w.as_deref(), eps)),
        crate::DType::F64 => Ok(layer_norm_grads::<f64>(g, x, shape, w.as_deref(), eps)),
        _ => {
            let wide = |t: &Tensor| t.to_dtype(crate::DType::F32);
            let grads = layer_norm_grads::<f32>(&wide(g), &wide(x), shape, w.as_deref(), eps);
            let narrow = |t: Tensor| t.to_dtype(x.dtype());
            Ok(LayerNormGrads {
                input: narrow(grads.input),
                weight: narrow(grads.weight),
                bias: narrow(grads.bias),
            })
        }
    }
}

/// [`layer_norm_backward`] on `T` elements, each row's sums in f64.
fn layer_norm_grads<T: Element>(
    g: &Tensor,
    x: &Tensor,
    normalized_shape: &[usize],
    w: Option<&[f64]>,
    eps: f64,
) -> LayerNormGrads {
    let row: usize = normalized_shape.iter().product();
    let scale = |i: usize| w.map_or(1.0, |w| w[i]);
    let rows = |(dx, (x, g)): (&mut [T], (&[T], &[T])), sums: &mut (Vec<f64>, Vec<f64>)| {
        let n = row as f64;
        let mean = x.iter().map(|v| v.to_f64()).sum::<f64>() / n;
        let var = x.iter().map(|v| (v.to_f64() - mean).powi(2)).sum::<f64>() / n;
        let rstd = 1.0 / (var + eps).sqrt();
        let (mut a, mut b) = (0.0, 0.0);
        for (i, (&x, &g)) in x.iter().zip(g).enumerate() {
            let (xhat, g) = ((x.to_f64() - mean) * rstd, g.to_f64());
            let gw = g * scale(i);
            a += gw;
            b += gw * xhat;
            sums.0[i] += g * xhat;
            sums.1[i] += g;
        }
        let (a, b) = (a / n, b / n);
        for (i, (d, (&x, &g))) in dx.iter_mut().zip(x.iter().zip(g)).enumerate() {
            let xhat = (x.to_f64() - mean) * rstd;
            *d = T::from_f64(rstd * (g.to_f64() * scale(i) - a - xhat * b));
        }
    };
    let zero = || (vec![0.0; row], vec![0.0; row]);
    let mut dx = vec![T::default(); x.numel()];
    let (dw, db) = x.with_slice(|xs: &[T]| {
        g.with_slice(|gs: &[T]| {
            dx.par_chunks_mut(row)
                .zip(xs.par_chunks(row).zip(gs.par_chunks(row)))
                .with_min_len(PARALLEL_MIN.div_ceil(row))
                .fold(zero, |mut sums, item| {
                    rows(item, &mut sums);
                    sums
                })
                .reduce(zero, |mut a, b| {
                    a.0.iter_mut().zip(b.0).for_each(|(x, y)| *x += y);
                    a.1.iter_mut().zip(b.1).for_each(|(x, y)| *x += y);
                    a
                })
        })
    });
    let cast = |v: Vec<f64>| -> Vec<T> { v.into_iter().map(T::from_f64).collect() };
    LayerNormGrads {
        input: Tensor::from_vec(dx, x.shape()),
        weight: Tensor::from_vec(cast(dw), normalized_shape),
        bias: Tensor::from_vec(cast(db), normalized_shape),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layer_norm_backward_matches_finite_differences() {
        let xs: Vec<f64> = (0..12)
            .map(|i| ((i * 7 % 5) as f64 - 2.0) * 0.3 + i as f64 * 0.01)
            .collect();
        let gs: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
        let w = Tensor::from_vec(vec![0.5, -1.0, 2.0, 1.5], &[4]);
        let (x, g) = (
            Tensor::from_vec(xs.clone(), &[3, 4]),
            Tensor::from_vec(gs.clone(), &[3, 4]),
        );
        let grads = layer_norm_backward(&g, &x, &[4], Some(&w), 1e-5).unwrap();
        // loss = Σ g · layer_norm(x): its derivative in each input element.
        let loss = |xs: &[f64]| -> f64 {
            let y = layer_norm(
                &Tensor::from_vec(xs.to_vec(), &[3, 4]),
                &[4],
                Some(&w),
                None,
                1e-5,
            )
            .unwrap();
            y.to_vec::<f64>().iter().zip(&gs).map(|(a, b)| a * b).sum()
        };
        let dx = grads.input.to_vec::<f64>();
        for i in 0..12 {
            let (mut up, mut down) = (xs.clone(), xs.clone());
            up[i] += 1e-6;
            down[i] -= 1e-6;
            let numeric = (loss(&up) - loss(&down)) / 2e-6;
            assert!(
                (dx[i] - numeric).abs() < 1e-6,
                "{i}: {} vs {numeric}",
                dx[i]
            );
        }
        let db: Vec<f64> = (0..4)
            .map(|j| (0..3).map(|r| gs[r * 4 + j]).sum())
            .collect();
        assert_eq!(grads.bias.to_vec::<f64>(), db);
        assert_eq!(grads.weight.shape(), &[4]);
    }
}
