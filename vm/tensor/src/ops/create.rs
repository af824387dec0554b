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
    let dtype = dtype.unwrap_or(if any_float { DType::F32 } else { DType::I64 });
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
    let n = steps as usize;
    crate::alloc::reserve(n, DType::F64)?;
    let step = if n > 1 {
        (end - start) / (n - 1) as f64
    } else {
        0.0
    };
    // PyTorch fills the second half backwards from `end`, so both ends are exact.
    let data: Vec<f64> = (0..n)
        .map(|i| {
            if i < n / 2 || n == 1 {
                start + step * i as f64
            } else {
                end - step * (n - 1 - i) as f64
            }
        })
        .collect();
    Ok(Tensor::from_vec(data, &[n]).to_dtype(dtype.unwrap_or(DType::F32)))
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

/// Uniform on [0, 1), from `g`.
pub fn rand(shape: &[usize], dtype: DType, g: &Generator) -> Result<Tensor> {
    let t = Tensor::zeros(shape, dtype);
    fill::uniform_(&t, 0.0, 1.0, g)?;
    Ok(t)
}

/// Standard normal, from `g`.
pub fn randn(shape: &[usize], dtype: DType, g: &Generator) -> Result<Tensor> {
    let t = Tensor::zeros(shape, dtype);
    fill::normal_(&t, 0.0, 1.0, g)?;
    Ok(t)
}

/// Integers uniform on [low, high), from `g`.
pub fn randint(
    low: i64,
    high: i64,
    shape: &[usize],
    dtype: DType,
    g: &Generator,
) -> Result<Tensor> {
    let t = Tensor::zeros(shape, dtype);
    fill::random_(&t, low, Some(high), g)?;
    Ok(t)
}

/// Zeroes each element with probability `p` and scales the rest by
/// `1/(1-p)`: PyTorch's mask, `bernoulli_(1 - p)` divided by `1 - p`.
pub fn dropout(t: &Tensor, p: f64, g: &Generator) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(TensorError::value(
            "dropout",
            format!("dropout probability has to be between 0 and 1, but got {p}"),
        ));
    }
    let noise = Tensor::zeros(t.shape(), t.dtype());
    fill::bernoulli_(&noise, 1.0 - p, g)?;
    let noise = binary(
        Binary::Div,
        &Arg::Tensor(noise),
        &Arg::Scalar(Scalar::Float(1.0 - p)),
    )?;
    binary(Binary::Mul, &Arg::Tensor(t.clone()), &Arg::Tensor(noise))
}
