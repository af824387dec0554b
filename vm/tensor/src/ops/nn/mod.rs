//! Neural-network ops: normalisation (`batch_norm`, `instance_norm`,
//! `group_norm`; layer and RMS norm are in `ops::norm`), `embedding`, the
//! losses and `scaled_dot_product_attention`, one concept per file.
//! Statistics accumulate in f64.

mod batch_norm;
mod embedding;
mod group_norm;
mod loss;
mod sdpa;
#[cfg(test)]
mod tests;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

pub use batch_norm::{BatchNorm, batch_norm, instance_norm};
pub use embedding::embedding;
pub use group_norm::group_norm;
pub use loss::{CrossEntropy, Reduction, cross_entropy, l1_loss, mse_loss, nll_loss};
pub use sdpa::{Attention, scaled_dot_product_attention};

pub(in crate::ops) fn float_only(op: &'static str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(op, t.dtype()));
    }
    Ok(())
}

/// Mean and biased variance of a slice.
pub(in crate::ops) fn moments(x: &[f64]) -> (f64, f64) {
    let n = x.len().max(1) as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var)
}

/// An optional per-feature parameter as f64s, checked to have `len` elements.
pub(in crate::ops) fn param(
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

pub(in crate::ops) fn list(s: &[usize]) -> String {
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
