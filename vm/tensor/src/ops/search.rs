//! Searching sorted sequences: `searchsorted`/`bucketize` (insertion
//! points) and `isin` (membership).

use crate::dtype::{Category, DType};
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

/// The insertion point of `v` in sorted `seq`: before equal elements
/// (`right` false, like `lower_bound`) or after them.
fn insertion_point(seq: &[f64], v: f64, right: bool) -> usize {
    seq.partition_point(|&s| if right { s <= v } else { s < v })
}

/// `searchsorted(sorted_sequence, values, right, sorter)`: for a 1-d
/// sequence, every value's point; for an N-d one, each row of values
/// against the matching row of the sequence.
pub fn searchsorted(
    seq: &Tensor,
    values: &Tensor,
    right: bool,
    sorter: Option<&Tensor>,
    out_int32: bool,
) -> Result<Tensor> {
    let fail = |m: String| Err(TensorError::runtime("searchsorted", m));
    if seq.ndim() == 0 {
        return fail("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension is 1, but we got boundaries tensor dim(0) and input value's dim(0) numel(1)".into());
    }
    let width = *seq.shape().last().unwrap_or(&0);
    let rows = seq.numel().checked_div(width).unwrap_or(0);
    if seq.ndim() > 1
        && (values.ndim() != seq.ndim()
            || values.shape()[..values.ndim() - 1] != seq.shape()[..seq.ndim() - 1])
    {
        return fail(format!(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value tensor must match, but we got boundaries tensor {:?} and input value tensor {:?}",
            seq.shape(),
            values.shape()
        ));
    }
    let mut keys: Vec<f64> = seq.to_vec();
    if let Some(order) = sorter {
        let order: Vec<i64> = order.to_dtype(DType::I64).to_vec();
        if order.len() != keys.len() || order.iter().any(|&i| i < 0 || i as usize >= width) {
            return fail("torch.searchsorted(): sorter index out of range".into());
        }
        keys = order
            .chunks(width.max(1))
            .enumerate()
            .flat_map(|(r, row)| row.iter().map(move |&i| (r, i)))
            .map(|(r, i)| keys[r * width + i as usize])
            .collect();
    }
    let vals: Vec<f64> = values.to_vec();
    let per_row = if seq.ndim() == 1 {
        vals.len()
    } else {
        vals.len().checked_div(rows).unwrap_or(0)
    };
    let points: Vec<i64> = vals
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let r = if seq.ndim() == 1 {
                0
            } else {
                k / per_row.max(1)
            };
            insertion_point(&keys[r * width..(r + 1) * width], v, right) as i64
        })
        .collect();
    let out = Tensor::from_vec(points, values.shape());
    Ok(if out_int32 {
        out.to_dtype(DType::I32)
    } else {
        out
    })
}

/// `bucketize(input, boundaries, right)`: `searchsorted` with the roles swapped.
pub fn bucketize(
    input: &Tensor,
    boundaries: &Tensor,
    right: bool,
    out_int32: bool,
) -> Result<Tensor> {
    if boundaries.ndim() != 1 {
        return Err(TensorError::runtime(
            "bucketize",
            format!(
                "boundaries tensor must be 1 dimension, but got dim({})",
                boundaries.ndim()
            ),
        ));
    }
    searchsorted(boundaries, input, right, None, out_int32)
}

/// `isin(elements, test_elements, invert)`: whether each element occurs
/// among the test elements, compared in their promoted dtype.
pub fn isin(elements: &Tensor, tests: &Tensor, invert: bool) -> Result<Tensor> {
    let dtype = DType::promote(elements.dtype(), tests.dtype());
    let found: Vec<bool> = if dtype.category() == Category::Float {
        let mut pool: Vec<f64> = tests.to_vec();
        pool.sort_by(|a, b| a.total_cmp(b));
        elements
            .to_vec::<f64>()
            .into_iter()
            .map(|v| pool.binary_search_by(|p| p.total_cmp(&v)).is_ok() && !v.is_nan())
            .collect()
    } else {
        let mut pool: Vec<i64> = tests.to_vec();
        pool.sort_unstable();
        elements
            .to_vec::<i64>()
            .into_iter()
            .map(|v| pool.binary_search(&v).is_ok())
            .collect()
    };
    let found: Vec<bool> = found.into_iter().map(|f| f != invert).collect();
    Ok(Tensor::from_vec(found, elements.shape()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insertion_points_on_either_side_of_ties() {
        let b = Tensor::from_vec(vec![1i64, 3, 5, 7, 9], &[5]);
        let v = Tensor::from_vec(vec![3i64, 6, 9], &[3]);
        assert_eq!(
            bucketize(&v, &b, false, false).unwrap().to_vec::<i64>(),
            [1, 3, 4]
        );
        assert_eq!(
            bucketize(&v, &b, true, false).unwrap().to_vec::<i64>(),
            [2, 3, 5]
        );
        let rows = Tensor::from_vec(vec![1i64, 3, 5, 2, 4, 6], &[2, 3]);
        let q = Tensor::from_vec(vec![2i64, 5], &[2, 1]);
        assert_eq!(
            searchsorted(&rows, &q, false, None, false)
                .unwrap()
                .to_vec::<i64>(),
            [1, 2]
        );
    }

    #[test]
    fn membership_in_the_promoted_dtype() {
        let e = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2]);
        let t = Tensor::from_vec(vec![2.0f32, 3.5], &[2]);
        assert_eq!(
            isin(&e, &t, false).unwrap().to_vec::<bool>(),
            [false, true, false, false]
        );
        assert_eq!(
            isin(&e, &t, true).unwrap().to_vec::<bool>(),
            [true, false, true, true]
        );
    }
}
