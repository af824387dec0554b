//! `multinomial`: category indices drawn from rows of weights, as
//! PyTorch's CPU kernel draws them — without replacement (or for a single
//! draw) by the exponential race `argmax/topk(p / Exp(1))`, with
//! replacement by inverting each row's normalised running sum.

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::ops::elementwise::{self as ew, Arg, Binary};
use crate::ops::extremum::{self, Extremum};
use crate::ops::reduce;
use crate::ops::sort;
use crate::random::fill::{exponential_, unit_f64};
use crate::random::generator::Generator;
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

fn fail<T>(message: impl Into<String>) -> Result<T> {
    Err(TensorError::runtime("multinomial", message))
}

pub fn multinomial(
    probs: &Tensor,
    samples: i64,
    replacement: bool,
    g: &Generator,
) -> Result<Tensor> {
    if !probs.dtype().is_float() {
        return fail(format!(
            "multinomial only supports floating-point dtypes for input, got: {}",
            legacy_name(probs.dtype())
        ));
    }
    if samples <= 0 {
        return fail("cannot sample n_sample <= 0 samples");
    }
    if !(1..=2).contains(&probs.ndim()) {
        return fail("prob_dist must be 1 or 2 dim");
    }
    let categories = probs.shape()[probs.ndim() - 1];
    let n = samples as usize;
    if !replacement && n > categories {
        return fail("cannot sample n_sample > prob_dist.size(-1) samples without replacement");
    }
    if categories > 1 << 24 {
        return fail("number of categories cannot exceed 2^24");
    }
    if !replacement || n == 1 {
        race(probs, n, g)
    } else {
        with_dtype!(probs.dtype(), T => inverse_cdf::<T>(probs, n, g))
    }
}

/// The first `n` finishers when category `i` finishes at time `Exp(1) / p_i`.
fn race(probs: &Tensor, n: usize, g: &Generator) -> Result<Tensor> {
    let finite_nonnegative = with_dtype!(probs.dtype(), T => probs
        .to_vec::<T>()
        .iter()
        .all(|&p| p.to_f64() >= 0.0 && p.to_f64() < f64::INFINITY));
    if !finite_nonnegative {
        return fail("probability tensor contains either `inf`, `nan` or element < 0");
    }
    let sums = reduce::sum(probs, Some(&[-1]), false, None)?;
    if sums.to_dtype(DType::F64).to_vec::<f64>().contains(&0.0) {
        return fail("invalid multinomial distribution (sum of probabilities <= 0)");
    }
    let q = probs.zeros_like(probs.dtype());
    exponential_(&q, 1.0, g)?;
    let ratio = ew::binary(Binary::Div, &Arg::Tensor(probs.clone()), &Arg::Tensor(q))?;
    if n == 1 {
        extremum::arg_extremum_dim(&ratio, Some(-1), true, Extremum::Max)
    } else {
        Ok(sort::topk(&ratio, n as i64, -1, true, true)?.1)
    }
}

/// Per row: running sums normalised to end at 1, then for each draw the
/// first category whose running sum reaches a uniform double.
fn inverse_cdf<T: Element>(probs: &Tensor, n: usize, g: &Generator) -> Result<Tensor> {
    let categories = probs.shape()[probs.ndim() - 1];
    let data: Vec<T> = probs.to_vec();
    let rows = data.len() / categories.max(1);
    let mut out = Vec::with_capacity(rows * n);
    let mut cumulative = vec![0f64; categories];
    for row in data.chunks(categories.max(1)).take(rows) {
        // Sums in the element type, as the kernel accumulates.
        let mut sum = T::from_f64(0.0);
        for (c, &p) in cumulative.iter_mut().zip(row) {
            let v = p.to_f64();
            // NaN fails this test first, as in PyTorch.
            if v.is_nan() || v < 0.0 {
                return fail(
                    "invalid multinomial distribution (encountering probability entry < 0)",
                );
            }
            if !v.is_finite() {
                return fail(
                    "invalid multinomial distribution (encountering probability entry = infinity or NaN)",
                );
            }
            sum = T::from_f64(sum.to_f64() + v);
            *c = sum.to_f64();
        }
        if sum.to_f64() <= 0.0 {
            return fail("invalid multinomial distribution (sum of probabilities <= 0)");
        }
        for c in &mut cumulative {
            *c = T::from_f64(*c / sum.to_f64()).to_f64();
        }
        let mut s = g.lock();
        for _ in 0..n {
            let u = unit_f64(&mut s);
            let at = cumulative.partition_point(|&c| c < u);
            out.push(at as i64);
        }
    }
    let mut shape = probs.shape().to_vec();
    *shape.last_mut().expect("1 or 2 dims") = n;
    Ok(Tensor::from_vec(out, &shape))
}
