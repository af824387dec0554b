//! Batch normalization in evaluation folded into the convolution before it:
//! `bn(conv(x, w, b))` is `conv(x, w', b')` with
//! `w'[o] = w[o] · s[o]`, `b'[o] = (b[o] − mean[o]) · s[o] + β[o]` and
//! `s[o] = γ[o] / √(var[o] + eps)`, one pass fewer over the output.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// A batch normalization's parameters in evaluation; `None` for an absent
/// affine weight (`γ = 1`) or bias (`β = 0`).
pub struct BatchNorm<'a> {
    pub running_mean: &'a Tensor,
    pub running_var: &'a Tensor,
    pub weight: Option<&'a Tensor>,
    pub bias: Option<&'a Tensor>,
    pub eps: f64,
}

/// The weight and bias of the convolution that computes `bn(conv(x, w, b))`
/// (a float `w` of `[O, …]`, each parameter `[O]`), in `w`'s dtype. The
/// scale is computed in f64.
pub fn fold_batch_norm(w: &Tensor, b: Option<&Tensor>, bn: &BatchNorm) -> Result<(Tensor, Tensor)> {
    const OP: &str = "fold_batch_norm";
    let channels = *w
        .shape()
        .first()
        .ok_or_else(|| TensorError::runtime(OP, "the convolution weight has no output channels"))?;
    if !matches!(w.dtype(), DType::F32 | DType::F64) {
        return Err(TensorError::not_implemented_for(OP, w.dtype()));
    }
    let per_channel = |t: Option<&Tensor>, default: f64| -> Result<Vec<f64>> {
        match t {
            None => Ok(vec![default; channels]),
            Some(t) if t.numel() == channels => Ok(t.to_vec()),
            Some(t) => Err(TensorError::runtime(
                OP,
                format!(
                    "expected {channels} values per output channel, got a tensor of {} elements",
                    t.numel()
                ),
            )),
        }
    };
    let mean = per_channel(Some(bn.running_mean), 0.0)?;
    let var = per_channel(Some(bn.running_var), 1.0)?;
    let gamma = per_channel(bn.weight, 1.0)?;
    let beta = per_channel(bn.bias, 0.0)?;
    let bias = per_channel(b, 0.0)?;
    let scale: Vec<f64> = (0..channels)
        .map(|o| gamma[o] / (var[o] + bn.eps).sqrt())
        .collect();
    let taps = w.numel() / channels;
    let weight: Vec<f64> = w
        .to_vec::<f64>()
        .chunks(taps.max(1))
        .zip(&scale)
        .flat_map(|(row, s)| row.iter().map(move |v| v * s))
        .collect();
    let bias: Vec<f64> = (0..channels)
        .map(|o| (bias[o] - mean[o]) * scale[o] + beta[o])
        .collect();
    Ok((
        Tensor::from_vec(weight, w.shape()).to_dtype(w.dtype()),
        Tensor::from_vec(bias, &[channels]).to_dtype(w.dtype()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::conv::{Padding, conv};
    use crate::ops::lanes::testing;

    fn values(shape: &[usize], seed: u64) -> Tensor {
        Tensor::from_vec(testing::values(shape.iter().product(), seed), shape)
    }

    /// `(y[o] − mean[o]) / √(var[o] + eps) · γ[o] + β[o]`, channel by channel.
    fn normalized(y: &Tensor, bn: &BatchNorm) -> Vec<f64> {
        let [n, o, h, w] = y.shape() else {
            panic!("4-d")
        };
        let plane = h * w;
        let (mean, var) = (
            bn.running_mean.to_vec::<f64>(),
            bn.running_var.to_vec::<f64>(),
        );
        let gamma = bn.weight.map_or(vec![1.0; *o], |t| t.to_vec());
        let beta = bn.bias.map_or(vec![0.0; *o], |t| t.to_vec());
        y.to_vec::<f64>()
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let c = i / plane % o;
                (v - mean[c]) / (var[c] + bn.eps).sqrt() * gamma[c] + beta[c]
            })
            .take(n * o * plane)
            .collect()
    }

    #[test]
    fn the_folded_convolution_equals_the_convolution_then_the_normalization() {
        let x = values(&[2, 3, 5, 5], 1);
        let w = values(&[4, 3, 3, 3], 2);
        let b = values(&[4], 3);
        let var = Tensor::from_vec(vec![0.5f64, 1.0, 2.0, 0.25], &[4]);
        let (mean, gamma, beta) = (values(&[4], 4), values(&[4], 5), values(&[4], 6));
        let pad = Padding::Explicit(vec![1]);
        for (bias, affine) in [(Some(&b), true), (None, true), (Some(&b), false)] {
            let bn = BatchNorm {
                running_mean: &mean,
                running_var: &var,
                weight: affine.then_some(&gamma),
                bias: affine.then_some(&beta),
                eps: 1e-5,
            };
            let want = normalized(&conv(&x, &w, bias, &[1], &pad, &[1], 1, 2).unwrap(), &bn);
            let (fw, fb) = fold_batch_norm(&w, bias, &bn).unwrap();
            let got = conv(&x, &fw, Some(&fb), &[1], &pad, &[1], 1, 2).unwrap();
            for (g, e) in got.to_vec::<f64>().iter().zip(&want) {
                assert!(
                    (g - e).abs() < 1e-9,
                    "bias {bias:?} affine {affine}: {g} vs {e}"
                );
            }
        }
    }

    #[test]
    fn parameters_of_the_wrong_size_are_refused() {
        let w = values(&[4, 3, 3, 3], 2);
        let short = values(&[3], 1);
        let ones = Tensor::from_vec(vec![1.0f64; 4], &[4]);
        let bn = BatchNorm {
            running_mean: &short,
            running_var: &ones,
            weight: None,
            bias: None,
            eps: 1e-5,
        };
        assert!(fold_batch_norm(&w, None, &bn).is_err());
    }
}
