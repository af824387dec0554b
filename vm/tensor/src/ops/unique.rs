//! Distinct values and counting: `unique` (sorted, of elements or of
//! slices along a dim), `unique_consecutive`, `bincount`, `histc`.

use std::cmp::Ordering;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::ops::shape::{permute, reshape};
use crate::storage::with_dtype;
use crate::tensor::Tensor;

/// What `unique` returns: the values, and when asked for, each input
/// element's (or slice's) position among them and each value's count.
pub struct Unique {
    pub values: Tensor,
    pub inverse: Tensor,
    pub counts: Tensor,
}

/// Total order on doubles with NaN last (NaNs stay distinct: NaN != NaN).
fn order(a: f64, b: f64) -> Ordering {
    a.partial_cmp(&b)
        .unwrap_or_else(|| a.is_nan().cmp(&b.is_nan()))
}

/// The input as rows to deduplicate: every element (one-value rows) or
/// every slice along `dim`, and how to shape the distinct rows back.
struct Rows {
    keys: Vec<Vec<f64>>,
    /// `[rows, rest…]` in the dim-first order, for reassembly.
    moved_shape: Vec<usize>,
    dim: Option<usize>,
}

fn rows_of(t: &Tensor, dim: Option<i64>) -> Result<Rows> {
    let Some(dim) = dim else {
        let values: Vec<f64> = t.to_vec();
        return Ok(Rows {
            keys: values.into_iter().map(|v| vec![v]).collect(),
            moved_shape: vec![t.numel()],
            dim: None,
        });
    };
    let d = t.dim(dim)?;
    let mut perm: Vec<i64> = vec![d as i64];
    perm.extend((0..t.ndim()).filter(|&k| k != d).map(|k| k as i64));
    let moved = permute(t, &perm)?;
    let n = t.shape()[d];
    let width = t.numel().checked_div(n).unwrap_or(0);
    let values: Vec<f64> = moved.to_vec();
    let keys = (0..n)
        .map(|r| values[r * width..(r + 1) * width].to_vec())
        .collect();
    Ok(Rows {
        keys,
        moved_shape: moved.shape().to_vec(),
        dim: Some(d),
    })
}

fn row_order(a: &[f64], b: &[f64]) -> Ordering {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| order(x, y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn same(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Builds the result from the rows in output order and each input row's group.
fn assemble(
    t: &Tensor,
    rows: &Rows,
    distinct: Vec<Vec<f64>>,
    groups: Vec<usize>,
) -> Result<Unique> {
    let count = distinct.len();
    let mut counts = vec![0i64; count];
    for &g in &groups {
        counts[g] += 1;
    }
    let mut shape = rows.moved_shape.clone();
    shape[0] = count;
    let flat: Vec<f64> = distinct.into_iter().flatten().collect();
    let values = with_dtype!(t.dtype(), T => {
        Tensor::from_vec(flat.iter().map(|&v| <T as crate::storage::Element>::from_f64(v)).collect::<Vec<T>>(), &shape)
    });
    let values = match rows.dim {
        None => values,
        Some(d) => {
            // Back from dim-first to the input's order.
            let mut inverse_perm = vec![0i64; t.ndim()];
            let order: Vec<usize> = std::iter::once(d)
                .chain((0..t.ndim()).filter(|&k| k != d))
                .collect();
            for (i, &o) in order.iter().enumerate() {
                inverse_perm[o] = i as i64;
            }
            permute(&values, &inverse_perm)?.contiguous()
        }
    };
    let inverse_shape: Vec<i64> = match rows.dim {
        None => t.shape().iter().map(|&s| s as i64).collect(),
        Some(_) => vec![groups.len() as i64],
    };
    let n = groups.len();
    let inverse = reshape(
        &Tensor::from_vec(
            groups.into_iter().map(|g| g as i64).collect::<Vec<_>>(),
            &[n],
        ),
        &inverse_shape,
    )?;
    Ok(Unique {
        values,
        inverse,
        counts: Tensor::from_vec(counts, &[count]),
    })
}

/// `torch.unique(input, sorted, return_inverse, return_counts, dim)`:
/// always sorted, as PyTorch's CPU kernel returns it.
pub fn unique(t: &Tensor, dim: Option<i64>) -> Result<Unique> {
    let rows = rows_of(t, dim)?;
    let mut sorted: Vec<usize> = (0..rows.keys.len()).collect();
    sorted.sort_by(|&a, &b| row_order(&rows.keys[a], &rows.keys[b]));
    let mut distinct: Vec<Vec<f64>> = Vec::new();
    let mut groups = vec![0usize; rows.keys.len()];
    for &i in &sorted {
        let key = &rows.keys[i];
        if distinct.last().is_none_or(|last| !same(last, key)) {
            distinct.push(key.clone());
        }
        groups[i] = distinct.len() - 1;
    }
    assemble(t, &rows, distinct, groups)
}

/// `torch.unique_consecutive`: runs of equal neighbours collapse, in order.
pub fn unique_consecutive(t: &Tensor, dim: Option<i64>) -> Result<Unique> {
    let rows = rows_of(t, dim)?;
    let mut distinct: Vec<Vec<f64>> = Vec::new();
    let mut groups = Vec::with_capacity(rows.keys.len());
    for key in &rows.keys {
        if distinct.last().is_none_or(|last| !same(last, key)) {
            distinct.push(key.clone());
        }
        groups.push(distinct.len() - 1);
    }
    assemble(t, &rows, distinct, groups)
}

/// `bincount(input, weights, minlength)`: occurrences (or summed weights)
/// of each non-negative integer.
pub fn bincount(t: &Tensor, weights: Option<&Tensor>, minlength: i64) -> Result<Tensor> {
    let fail = |m: &str| Err(TensorError::runtime("bincount", m));
    if t.ndim() != 1 || t.dtype().is_float() || t.dtype() == DType::Bool {
        return fail("bincount only supports 1-d non-negative integral inputs.");
    }
    if minlength < 0 {
        return fail("minlength should be >= 0");
    }
    let values: Vec<i64> = t.to_vec();
    if values.iter().any(|&v| v < 0) {
        return fail("bincount only supports 1-d non-negative integral inputs.");
    }
    if let Some(w) = weights
        && (w.ndim() != 1 || w.numel() != t.numel())
    {
        return fail("weights should be 1-d and have the same length as input");
    }
    let len = values
        .iter()
        .map(|&v| v as usize + 1)
        .max()
        .unwrap_or(0)
        .max(minlength as usize);
    crate::alloc::reserve(len, DType::F64)?;
    Ok(match weights {
        None => {
            let mut out = vec![0i64; len];
            for &v in &values {
                out[v as usize] += 1;
            }
            Tensor::from_vec(out, &[len])
        }
        Some(w) => {
            let mut out = vec![0.0f64; len];
            for (&v, x) in values.iter().zip(w.to_vec::<f64>()) {
                out[v as usize] += x;
            }
            let dtype = if w.dtype() == DType::F32 {
                DType::F32
            } else {
                DType::F64
            };
            Tensor::from_vec(out, &[len]).to_dtype(dtype)
        }
    })
}

/// `histc(input, bins, min, max)`: counts in `bins` equal-width bins over
/// `[min, max]` (the data's range when both are equal); the last bin
/// includes `max`, values outside are ignored.
pub fn histc(t: &Tensor, bins: i64, min: f64, max: f64) -> Result<Tensor> {
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for("histogram_cpu", t.dtype()));
    }
    if bins <= 0 {
        return Err(TensorError::runtime("histc", "bins must be > 0"));
    }
    let values: Vec<f64> = t.to_vec();
    let (mut lo, mut hi) = (min, max);
    if lo == hi && !values.is_empty() {
        lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    }
    if lo == hi {
        lo -= 1.0;
        hi += 1.0;
    }
    if lo > hi {
        return Err(TensorError::runtime("histc", "max must be larger than min"));
    }
    let bins = bins as usize;
    let mut out = vec![0.0f64; bins];
    for v in values {
        if v < lo || v > hi || v.is_nan() {
            continue;
        }
        let k = (((v - lo) * bins as f64 / (hi - lo)) as usize).min(bins - 1);
        out[k] += 1.0;
    }
    Ok(Tensor::from_vec(out, &[bins]).to_dtype(t.dtype()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unique_sorts_counts_and_inverts() {
        let t = Tensor::from_vec(vec![3i64, 1, 2, 1, 5, 3, 3], &[7]);
        let u = unique(&t, None).unwrap();
        assert_eq!(u.values.to_vec::<i64>(), [1, 2, 3, 5]);
        assert_eq!(u.inverse.to_vec::<i64>(), [2, 0, 1, 0, 3, 2, 2]);
        assert_eq!(u.counts.to_vec::<i64>(), [2, 1, 3, 1]);
    }

    #[test]
    fn unique_rows_and_runs() {
        let t = Tensor::from_vec(vec![1i64, 2, 1, 2, 0, 5], &[3, 2]);
        let u = unique(&t, Some(0)).unwrap();
        assert_eq!(u.values.to_vec::<i64>(), [0, 5, 1, 2]);
        assert_eq!(u.inverse.to_vec::<i64>(), [1, 1, 0]);
        let runs = Tensor::from_vec(vec![1i64, 1, 2, 2, 3, 1, 1], &[7]);
        let c = unique_consecutive(&runs, None).unwrap();
        assert_eq!(c.values.to_vec::<i64>(), [1, 2, 3, 1]);
        assert_eq!(c.counts.to_vec::<i64>(), [2, 2, 1, 2]);
    }

    #[test]
    fn bincount_and_histc_count_into_bins() {
        let t = Tensor::from_vec(vec![0i64, 1, 1, 3], &[4]);
        assert_eq!(bincount(&t, None, 0).unwrap().to_vec::<i64>(), [1, 2, 0, 1]);
        let h = Tensor::from_vec(vec![1.0f32, 2.0, 1.0, 2.5, 4.0], &[5]);
        assert_eq!(
            histc(&h, 4, 0.0, 3.0).unwrap().to_vec::<f32>(),
            [0.0, 2.0, 1.0, 1.0]
        );
    }
}
