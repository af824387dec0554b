//! Normalisation over features: layer norm and RMS norm over trailing
//! dims, local response norm across channels.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::elementwise::build_rows;
use super::nn::{float_only, list, param};
use super::norm_rows::{self, Float};
use super::rows_per_task;

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
    let (w, b) = (
        w.unwrap_or_else(|| vec![1.0; row]),
        b.unwrap_or_else(|| vec![0.0; row]),
    );
    let typed = |x: &Tensor| match x.dtype() {
        DType::F32 => normalise_typed::<f32>(x, &w, &b, eps, rms),
        _ => normalise_typed::<f64>(x, &w, &b, eps, rms),
    };
    Ok(match x.dtype() {
        DType::F32 | DType::F64 => typed(x),
        // Half types through f64, rounded once at the end.
        other => typed(&x.to_dtype(DType::F64)).to_dtype(other),
    })
}

/// Per-feature parameters in the element type.
fn narrow<F: Float>(v: &[f64]) -> Vec<F> {
    v.iter().map(|&x| F::from_f64(x)).collect()
}

/// [`trailing_norm`] on `F` elements: rows of `w.len()` normalised in
/// parallel runs.
fn normalise_typed<F: Float>(x: &Tensor, w: &[f64], b: &[f64], eps: f64, rms: bool) -> Tensor {
    let row = w.len();
    let (w, b) = (narrow::<F>(w), narrow::<F>(b));
    let task = rows_per_task(row) * row;
    let eps = F::from_f64(eps);
    let out = x.with_slice(|xs: &[F]| {
        build_rows(xs.len(), task, |i, out: &mut [F]| {
            norm_rows::normalise(&xs[i * task..][..out.len()], out, &w, &b, eps, rms)
        })
    });
    Tensor::from_vec(out, x.shape())
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
/// forward computes them).
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
        DType::F32 => Ok(layer_norm_grads::<f32>(g, x, shape, w.as_deref(), eps)),
        DType::F64 => Ok(layer_norm_grads::<f64>(g, x, shape, w.as_deref(), eps)),
        _ => {
            let wide = |t: &Tensor| t.to_dtype(DType::F32);
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

/// [`layer_norm_backward`] on `T` elements; the per-feature sums of each
/// run of rows added in order (the same result on every call).
fn layer_norm_grads<T: Float>(
    g: &Tensor,
    x: &Tensor,
    normalized_shape: &[usize],
    w: Option<&[f64]>,
    eps: f64,
) -> LayerNormGrads {
    let row: usize = normalized_shape.iter().product();
    let w: Vec<T> = w.map_or_else(|| vec![T::one(); row], narrow);
    let (task, eps) = (rows_per_task(row) * row, T::from_f64(eps));
    let mut dx = vec![T::default(); x.numel()];
    let sums: Vec<(Vec<T>, Vec<T>)> = x.with_slice(|xs: &[T]| {
        g.with_slice(|gs: &[T]| {
            dx.par_chunks_mut(task)
                .zip(xs.par_chunks(task).zip(gs.par_chunks(task)))
                .map(|(dx, (x, g))| {
                    let (mut dw, mut db) = (vec![T::zero(); row], vec![T::zero(); row]);
                    norm_rows::backward(x, g, dx, &w, eps, (&mut dw, &mut db));
                    (dw, db)
                })
                .collect()
        })
    });
    let (mut dw, mut db) = (vec![T::zero(); row], vec![T::zero(); row]);
    for (w, b) in sums {
        dw.iter_mut().zip(w).for_each(|(x, y)| *x = *x + y);
        db.iter_mut().zip(b).for_each(|(x, y)| *x = *x + y);
    }
    LayerNormGrads {
        input: Tensor::from_vec(dx, x.shape()),
        weight: Tensor::from_vec(dw, normalized_shape),
        bias: Tensor::from_vec(db, normalized_shape),
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
