//! Creation ops: ranges, identity, and random tensors drawn from a generator.

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError};
use crate::ops::elementwise::{Arg, Binary, binary};
use crate::random::{Generator, fill};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    if dtype == Some(DType::Bool) {
        return Err(TensorError::not_implemented_for("arange_cpu", DType::Bool));
    }
    let (s, e, st) = (start.to_f64(), end.to_f64(), step.to_f64());
    if st == 0.0 {
        return Err(TensorError::runtime("arange", "step must be nonzero"));
    }
    if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
        return Err(TensorError::runtime(
            "arange",
            "upper bound and larger bound inconsistent with step sign",
        ));
    }
    let any_float = [start, end, step]
        .iter()
        .any(|x| matches!(x, Scalar::Float(_)));
    let dtype = dtype.unwrap_or(if any_float {
        crate::dtype::default_float()
    } else {
        DType::I64
    });
    let count = ((e - s) / st).ceil().max(0.0);
    if !count.is_finite() || count > i64::MAX as f64 {
        return Err(TensorError::runtime(
            "arange",
            "invalid size, possible overflow?",
        ));
    }
    let n = count as usize;
    crate::alloc::reserve(n, dtype)?;
    Ok(with_dtype!(dtype, T => {
        let data: Vec<T> = (0..n)
            .map(|i| if dtype.is_float() { T::from_f64(s + i as f64 * st) } else { T::from_i64(start.to_i64() + i as i64 * step.to_i64()) })
            .collect();
        Tensor::from_vec(data, &[n])
    }))
}

pub fn linspace(start: f64, end: f64, steps: i64, dtype: Option<DType>) -> Result<Tensor> {
    if steps < 0 {
        return Err(TensorError::runtime(
            "linspace",
            "linspace(): number of steps must be non-negative",
        ));
    }
    let dtype = dtype.unwrap_or(crate::dtype::default_float());
    if dtype == DType::Bool && steps > 0 {
        return Err(TensorError::not_implemented_for("linspace_cpu", dtype));
    }
    let (start, end) = bounds_in(start, end, dtype);
    let n = steps as usize;
    crate::alloc::reserve(n, DType::F64)?;
    Ok(match dtype {
        DType::F32 => Tensor::from_vec(spaced(start as f32, end as f32, n), &[n]),
        DType::F64 => Tensor::from_vec(spaced(start, end, n), &[n]),
        // Integers step in f64 (as PyTorch's), half types in f32.
        other if other.is_float() => {
            Tensor::from_vec(spaced(start as f32, end as f32, n), &[n]).to_dtype(other)
        }
        other => Tensor::from_vec(spaced(start, end, n), &[n]).to_dtype(other),
    })
}

/// `n` points from `start` to `end` as PyTorch's kernel computes them, in
/// the element type: the step rounded once, each point one fused
/// multiply-add from `start` (first half) or back from `end` (second half),
/// so both ends are exact and the values equal PyTorch's to the bit.
fn spaced<F: num_traits::Float>(start: F, end: F, n: usize) -> Vec<F> {
    let step = if n > 1 {
        (end - start) / F::from(n - 1).unwrap_or_else(F::one)
    } else {
        F::zero()
    };
    let at = |i: usize| F::from(i).unwrap_or_else(F::zero);
    (0..n)
        .map(|i| {
            if i < n / 2 || n == 1 {
                step.mul_add(at(i), start)
            } else {
                (-step).mul_add(at(n - 1 - i), end)
            }
        })
        .collect()
}

/// `linspace`'s (and `logspace`'s) bounds as PyTorch takes them: converted
/// to an integral dtype first, so `linspace(0, 1.5, 4, dtype=uint8)` runs
/// from 0 to 1.
pub fn bounds_in(start: f64, end: f64, dtype: DType) -> (f64, f64) {
    if dtype.is_float() {
        return (start, end);
    }
    let b = Tensor::from_vec(vec![start, end], &[2])
        .to_dtype(dtype)
        .to_vec::<f64>();
    (b[0], b[1])
}

pub fn eye(n: usize, m: usize, dtype: DType) -> Tensor {
    with_dtype!(dtype, T => {
        let mut data = vec![T::default(); crate::alloc::ensure_numel::<T>(&[n, m])];
        for i in 0..n.min(m) {
            data[i * m + i] = T::from_i64(1);
        }
        Tensor::from_vec(data, &[n, m])
    })
}

/// PyTorch's ValueError for a dropout probability outside [0, 1], raised
/// whether or not the layer is training.
pub fn check_dropout_probability(p: f64) -> Result<()> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(TensorError::value(
            "dropout",
            format!("dropout probability has to be between 0 and 1, but got {p}"),
        ))
    }
}

/// Which dropout: per element or per channel (`feature`, the `dropoutNd`
/// family), plain or self-normalising (`alpha`, for SELU networks).
#[derive(Clone, Copy, Debug)]
pub struct DropoutKind {
    pub feature: bool,
    pub alpha: bool,
}

/// Dropout in training, as PyTorch computes it: a `bernoulli_(1 - p)` mask
/// (one draw per element, or per (sample, channel) for feature dropout),
/// scaled by `1/(1-p)`; alpha dropout instead maps kept and dropped values
/// so that mean and variance are preserved.
pub fn dropout(t: &Tensor, p: f64, kind: DropoutKind, g: &Generator) -> Result<Tensor> {
    check_dropout_probability(p)?;
    if p == 0.0 || t.numel() == 0 {
        return Ok(t.clone());
    }
    if p == 1.0 {
        return binary(
            Binary::Mul,
            &Arg::Tensor(t.clone()),
            &Arg::Tensor(Tensor::zeros(&[], t.dtype())),
        );
    }
    let noise_shape: Vec<usize> = if kind.feature {
        t.shape()
            .iter()
            .enumerate()
            .map(|(d, &n)| if d < 2 { n } else { 1 })
            .collect()
    } else {
        t.shape().to_vec()
    };
    let noise = if kind.feature {
        Tensor::zeros(&noise_shape, t.dtype())
    } else {
        t.zeros_like(t.dtype())
    };
    fill::bernoulli_(&noise, 1.0 - p, g)?;
    let (mul, add) = (Binary::Mul, Binary::Add);
    if !kind.alpha {
        let noise = binary(
            Binary::Div,
            &Arg::Tensor(noise),
            &Arg::Scalar(Scalar::Float(1.0 - p)),
        )?;
        return binary(mul, &Arg::Tensor(t.clone()), &Arg::Tensor(noise));
    }
    let (scale, shift) = alpha_dropout_affine(&noise, p)?;
    let scaled = binary(mul, &Arg::Tensor(t.clone()), &Arg::Tensor(scale))?;
    binary(add, &Arg::Tensor(scaled), &Arg::Tensor(shift))
}

/// Alpha dropout as the affine map `x · scale + shift` its mask of kept
/// elements (1) and dropped ones (0) gives: dropped elements go to SELU's
/// negative saturation, and both parts are scaled so that mean and variance
/// are preserved. Kept elements of a ones input come out positive, dropped
/// ones negative (how a derivative recovers the mask of a drawn output).
pub fn alpha_dropout_affine(kept: &Tensor, p: f64) -> Result<(Tensor, Tensor)> {
    const ALPHA: f64 = 1.7580993408473766;
    let a = 1.0 / ((ALPHA * ALPHA * p + 1.0) * (1.0 - p)).sqrt();
    let (mul, add) = (Binary::Mul, Binary::Add);
    let f = |x: f64| Arg::Scalar(Scalar::Float(x));
    let shift = binary(add, &Arg::Tensor(kept.clone()), &f(-1.0))?;
    let shift = binary(
        add,
        &Arg::Tensor(binary(mul, &Arg::Tensor(shift), &f(ALPHA * a))?),
        &f(ALPHA * a * p),
    )?;
    let scale = binary(mul, &Arg::Tensor(kept.clone()), &f(a))?;
    Ok((scale, shift))
}
