//! Scans along a dim besides `cumsum`: the running product, the running
//! maximum/minimum with the index where it was reached, `logcumsumexp`.
//! Accumulators are double (or int64) as PyTorch's CPU scans keep them.

use super::reduce::{along_dim, sum_dtype};
use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

/// `cumprod(dim, dtype)`: integers (and bools) multiply in int64.
pub fn cumprod(t: &Tensor, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
    let d = sum_dtype(t, dtype);
    if t.ndim() == 0 {
        t.dim(dim)?;
        return Ok(t.to_dtype(d));
    }
    let dim = t.dim(dim)?;
    let t = t.to_dtype(d);
    Ok(
        with_dtype!(d, T => along_dim(&t, dim, |i: &[T], o: &mut [T]| {
            if T::DTYPE.is_float() {
                let mut acc = 1.0f64;
                for (x, y) in i.iter().zip(o.iter_mut()) {
                    acc *= x.to_f64();
                    *y = T::from_f64(acc);
                }
            } else {
                let mut acc = 1i64;
                for (x, y) in i.iter().zip(o.iter_mut()) {
                    acc = acc.wrapping_mul(x.to_i64());
                    *y = T::from_i64(acc);
                }
            }
        })),
    )
}

/// `logcumsumexp(dim)`: `log(Σ exp)` of each prefix, stably.
pub fn logcumsumexp(t: &Tensor, dim: i64) -> Result<Tensor> {
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(
            "logcumsumexp_out_cpu",
            t.dtype(),
        ));
    }
    if t.ndim() == 0 {
        t.dim(dim)?;
        return Ok(t.copy());
    }
    let dim = t.dim(dim)?;
    Ok(
        with_dtype!(t.dtype(), T => along_dim(t, dim, |i: &[T], o: &mut [T]| {
            let mut acc = f64::NEG_INFINITY;
            for (x, y) in i.iter().zip(o.iter_mut()) {
                let x = x.to_f64();
                let (lo, hi) = if x < acc { (x, acc) } else { (acc, x) };
                acc = if lo == f64::NEG_INFINITY || hi.is_nan() || lo.is_nan() {
                    if hi.is_nan() || lo.is_nan() { f64::NAN } else { hi }
                } else {
                    hi + (lo - hi).exp().ln_1p()
                };
                *y = T::from_f64(acc);
            }
        })),
    )
}

/// `cummax(dim)` (`max`) or `cummin(dim)`: the running extreme and the
/// index where it was last reached (ties move the index on, NaN sticks).
pub fn cumextremum(t: &Tensor, dim: i64, max: bool) -> Result<(Tensor, Tensor)> {
    if t.ndim() == 0 {
        t.dim(dim)?;
        return Ok((t.copy(), Tensor::zeros(&[], DType::I64)));
    }
    let dim = t.dim(dim)?;
    let better = |x: f64, best: f64| {
        x.is_nan() || (!best.is_nan() && if max { x >= best } else { x <= best })
    };
    // The index where the held extreme was last reached; the values are
    // the input gathered there.
    let positions = along_dim(&t.to_dtype(DType::F64), dim, |i: &[f64], o: &mut [f64]| {
        let (mut best, mut at) = (i.first().copied().unwrap_or(0.0), 0usize);
        for (k, (&x, y)) in i.iter().zip(o.iter_mut()).enumerate() {
            if better(x, best) {
                best = x;
                at = k;
            }
            *y = at as f64;
        }
    })
    .to_dtype(DType::I64);
    let values = super::index::gather(t, dim as i64, &positions)?;
    Ok((values, positions))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_products_and_extremes() {
        let t = Tensor::from_vec(vec![2.0f32, 3.0, 1.0, 3.0, f32::NAN, 5.0], &[6]);
        assert_eq!(
            cumprod(&t, 0, None).unwrap().to_vec::<f32>()[..4],
            [2.0, 6.0, 6.0, 18.0]
        );
        let (v, i) = cumextremum(&t, 0, true).unwrap();
        assert_eq!(v.to_vec::<f32>()[..4], [2.0, 3.0, 3.0, 3.0]);
        assert!(v.to_vec::<f32>()[4].is_nan() && v.to_vec::<f32>()[5].is_nan());
        assert_eq!(i.to_vec::<i64>(), [0, 1, 1, 3, 4, 4]);
        let ints = Tensor::from_vec(vec![3i64, 1, 2, 1], &[2, 2]);
        let (v, i) = cumextremum(&ints, 1, false).unwrap();
        assert_eq!(v.to_vec::<i64>(), [3, 1, 2, 1]);
        assert_eq!(i.to_vec::<i64>(), [0, 1, 0, 1]);
    }

    #[test]
    fn logcumsumexp_matches_the_direct_sum() {
        let t = Tensor::from_vec(vec![0.0f64, 1.0, -2.0, f64::NEG_INFINITY], &[4]);
        let out = logcumsumexp(&t, 0).unwrap().to_vec::<f64>();
        let mut acc = 0.0f64;
        for (k, x) in [0.0f64, 1.0, -2.0].iter().enumerate() {
            acc += x.exp();
            assert!((out[k] - acc.ln()).abs() < 1e-12);
        }
        assert_eq!(out[3], out[2]);
    }
}
