//! Creation ops: ranges, identity, and random tensors from one seeded generator.

use std::sync::Mutex;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

/// The default generator; `torch.manual_seed` reseeds it.
static RNG: Mutex<Option<SmallRng>> = Mutex::new(None);

fn with_rng<R>(f: impl FnOnce(&mut SmallRng) -> R) -> R {
    let mut guard = RNG.lock().unwrap_or_else(|e| e.into_inner());
    f(guard.get_or_insert_with(|| SmallRng::seed_from_u64(0x5eed)))
}

pub fn manual_seed(seed: u64) {
    *RNG.lock().unwrap_or_else(|e| e.into_inner()) = Some(SmallRng::seed_from_u64(seed));
}

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

/// Uniform on [0, 1).
pub fn rand(shape: &[usize], dtype: DType) -> Tensor {
    let n = shape.iter().product();
    let data: Vec<f64> = with_rng(|r| (0..n).map(|_| r.random::<f64>()).collect());
    Tensor::from_vec(data, shape).to_dtype(dtype)
}

/// Standard normal.
pub fn randn(shape: &[usize], dtype: DType) -> Tensor {
    let n = shape.iter().product();
    let data: Vec<f64> = with_rng(|r| (0..n).map(|_| StandardNormal.sample(r)).collect());
    Tensor::from_vec(data, shape).to_dtype(dtype)
}

/// Integers uniform on [low, high).
pub fn randint(low: i64, high: i64, shape: &[usize], dtype: DType) -> Result<Tensor> {
    if high <= low {
        return Err(TensorError::runtime(
            "randint",
            format!("random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"),
        ));
    }
    let n = shape.iter().product();
    let data: Vec<i64> = with_rng(|r| (0..n).map(|_| r.random_range(low..high)).collect());
    Ok(Tensor::from_vec(data, shape).to_dtype(dtype))
}

pub fn randperm(n: usize, dtype: DType) -> Tensor {
    let mut v: Vec<i64> = (0..n as i64).collect();
    with_rng(|r| {
        for i in (1..n).rev() {
            v.swap(i, r.random_range(0..=i));
        }
    });
    Tensor::from_vec(v, &[n]).to_dtype(dtype)
}

/// Zeroes each element with probability `p` and scales the rest by `1/(1-p)`.
pub fn dropout(t: &Tensor, p: f64) -> Result<Tensor> {
    if !(0.0..=1.0).contains(&p) {
        return Err(TensorError::value(
            "dropout",
            format!("dropout probability has to be between 0 and 1, but got {p}"),
        ));
    }
    let keep: Vec<bool> = with_rng(|r| (0..t.numel()).map(|_| r.random::<f64>() >= p).collect());
    let scale = if p < 1.0 { 1.0 / (1.0 - p) } else { 0.0 };
    let dtype = t.dtype();
    Ok(with_dtype!(dtype, T => {
        let data: Vec<T> = t.to_vec::<T>().into_iter().zip(keep).map(|(x, k)| if k { T::from_f64(x.to_f64() * scale) } else { T::default() }).collect();
        Tensor::from_vec(data, t.shape())
    }))
}
