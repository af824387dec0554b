//! Writes addressed along one dim by a vector of indices: `index_add`,
//! `index_copy`, `index_fill` (slice `i` of the source, or the value, goes
//! to slice `index[i]` of the result).

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError, legacy_name};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

/// What an index write does with each addressed element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    /// `dst += alpha · src`.
    Add,
    /// `dst = src`.
    Copy,
}

/// The index as a vector (a 0-d index is one entry).
fn entries(index: &Tensor) -> Vec<i64> {
    index.to_dtype(DType::I64).contiguous().to_vec()
}

/// For each element of `source` (contiguous order), the offset in a
/// contiguous tensor of `shape` where slice `i` of `dim` lands as slice
/// `index[i]`.
fn destinations(shape: &[usize], dim: usize, index: &[i64]) -> Vec<usize> {
    let inner: usize = shape[dim + 1..].iter().product();
    let outer: usize = shape[..dim].iter().product();
    let size = shape[dim];
    let mut out = Vec::with_capacity(outer * index.len() * inner);
    for o in 0..outer {
        for &i in index {
            let base = (o * size + i as usize) * inner;
            out.extend(base..base + inner);
        }
    }
    out
}

/// How many slices `source` gives along `dim` (a 0-d source gives one).
fn source_len(source: &Tensor, dim: usize) -> usize {
    if source.ndim() == 0 {
        1
    } else {
        source.shape().get(dim).copied().unwrap_or(0)
    }
}

fn check_source(
    op: &'static str,
    t: &Tensor,
    dim: usize,
    index: &[i64],
    source: &Tensor,
) -> Result<()> {
    let (ts, ss) = (t.shape(), source.shape());
    let along = source_len(source, dim);
    if index.len() != along {
        return Err(TensorError::runtime(
            op,
            format!(
                "{op}(): Number of indices ({}) should be equal to source.size(dim): ({along}), for dim: {dim}",
                index.len()
            ),
        ));
    }
    let matches = ts.len() == ss.len().max(1)
        && ts
            .iter()
            .enumerate()
            .all(|(d, &n)| d == dim || ss.get(d).copied().unwrap_or(1) == n);
    if !matches {
        return Err(TensorError::runtime(
            op,
            format!(
                "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {ts:?} source.shape = {ss:?}"
            ),
        ));
    }
    Ok(())
}

fn write(
    op: &'static str,
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    source: &Tensor,
    how: Write,
    alpha: Scalar,
) -> Result<Tensor> {
    let d = t.dim(dim)?;
    let d = if t.ndim() == 0 { 0 } else { d };
    if index.ndim() > 1 {
        return Err(TensorError::index_error(format!(
            "{op}(): Index is supposed to be a vector"
        )));
    }
    let idx = entries(index);
    check_source(op, t, d, &idx, source)?;
    if source.dtype() != t.dtype() {
        return Err(TensorError::runtime(
            op,
            format!(
                "{op}(): self ({}) and source ({}) must have the same scalar type",
                legacy_name(t.dtype()),
                legacy_name(source.dtype())
            ),
        ));
    }
    let size = t.shape().get(d).copied().unwrap_or(1);
    if let Some(&bad) = idx.iter().find(|&&i| !(0..size as i64).contains(&i)) {
        let message = format!("index {bad} is out of bounds for dimension {d} with size {size}");
        return Err(match how {
            Write::Add => TensorError::runtime(op, message),
            Write::Copy => TensorError::index_error(format!("{op}(): {message}")),
        });
    }
    let dests = if t.ndim() == 0 {
        vec![0; idx.len()]
    } else {
        destinations(t.shape(), d, &idx)
    };
    let out = t.contiguous().copy();
    with_dtype!(t.dtype(), T => {
        let values: Vec<T> = source.contiguous().to_vec();
        let alpha = T::from_scalar(alpha);
        let mut storage = out.write();
        let dst = T::slice_mut(&mut storage).expect("dtype matches");
        for (&o, v) in dests.iter().zip(values) {
            dst[o] = match how {
                Write::Add if alpha.to_f64() == 1.0 => dst[o].accumulate(v),
                Write::Add => dst[o].accumulate(T::from_f64(v.to_f64() * alpha.to_f64())),
                Write::Copy => v,
            };
        }
    });
    Ok(out)
}

/// `index_add(dim, index, source, alpha)`: int32 or int64 indices, each in range.
pub fn index_add(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    source: &Tensor,
    alpha: Scalar,
) -> Result<Tensor> {
    if !matches!(index.dtype(), DType::I32 | DType::I64) {
        return Err(TensorError::runtime(
            "index_add",
            format!(
                "index_add_(): Expected dtype int32/int64 for index but got: {}",
                legacy_name(index.dtype())
            ),
        ));
    }
    write("index_add_", t, dim, index, source, Write::Add, alpha)
}

/// `index_copy(dim, index, source)`: int64 indices only.
pub fn index_copy(t: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<Tensor> {
    if index.dtype() != DType::I64 {
        return Err(TensorError::runtime(
            "index_copy",
            format!(
                "index_copy_(): Expected a long tensor for index, but got {}",
                legacy_name(index.dtype())
            ),
        ));
    }
    check_copy_source(t, dim, index, source)?;
    write(
        "index_copy_",
        t,
        dim,
        index,
        source,
        Write::Copy,
        Scalar::Int(1),
    )
}

/// index_copy's own order of checks: the dim, the dtypes, the ranks, then the
/// count — the last two IndexErrors (index_add reports them otherwise).
fn check_copy_source(t: &Tensor, dim: i64, index: &Tensor, source: &Tensor) -> Result<()> {
    let d = if t.ndim() == 0 { 0 } else { t.dim(dim)? };
    if source.dtype() != t.dtype() {
        return Err(TensorError::runtime(
            "index_copy_",
            format!(
                "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
                legacy_name(t.dtype()),
                legacy_name(source.dtype())
            ),
        ));
    }
    if t.ndim() > 0 && source.ndim() > 0 && t.ndim() != source.ndim() {
        return Err(TensorError::index_error(format!(
            "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source dimensionality ({}), destination dimensionality ({})",
            source.ndim(),
            t.ndim()
        )));
    }
    let along = source_len(source, d);
    if index.numel() != along {
        return Err(TensorError::index_error(format!(
            "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({along})",
            index.numel()
        )));
    }
    Ok(())
}

/// `index_fill(dim, index, value)`: every slice `index[i]` (negative counts
/// from the end) set to `value`.
pub fn index_fill(t: &Tensor, dim: i64, index: &Tensor, value: Scalar) -> Result<Tensor> {
    if index.dtype() != DType::I64 {
        return Err(TensorError::index_error(
            "index_fill_(): Expected dtype int64 for index.",
        ));
    }
    let d = t.dim(dim)?;
    let size = t.shape().get(d).copied().unwrap_or(1) as i64;
    let mut idx = entries(index);
    for i in idx.iter_mut() {
        if !(-size..size).contains(i) {
            return Err(TensorError::index_error(format!(
                "index {i} is out of bounds for dimension {d} with size {size}"
            )));
        }
        if *i < 0 {
            *i += size;
        }
    }
    let value = Tensor::fill_value(value, t.dtype())?;
    let mut source_shape = t.shape().to_vec();
    if t.ndim() == 0 {
        return Ok(if idx.is_empty() {
            t.copy()
        } else {
            Tensor::scalar(value, t.dtype())
        });
    }
    source_shape[d] = idx.len();
    let source = Tensor::full(&source_shape, value, t.dtype());
    let positions = Tensor::from_vec(idx, &[source_shape[d]]);
    write(
        "index_fill_",
        t,
        dim,
        &positions,
        &source,
        Write::Copy,
        Scalar::Int(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zeros() -> Tensor {
        Tensor::zeros(&[3, 4], DType::F32)
    }

    #[test]
    fn index_add_sums_repeated_slices() {
        let index = Tensor::from_vec(vec![0i64, 2, 0], &[3]);
        let source = Tensor::from_vec((0..12).map(|v| v as f32).collect(), &[3, 4]);
        let out = index_add(&zeros(), 0, &index, &source, Scalar::Int(2)).unwrap();
        let want: Vec<f32> = [0, 2, 4, 6]
            .iter()
            .zip([16, 18, 20, 22])
            .map(|(&a, b)| (a + b) as f32)
            .collect();
        assert_eq!(&out.to_vec::<f32>()[..4], want.as_slice());
        assert_eq!(&out.to_vec::<f32>()[8..], [8., 10., 12., 14.]);
    }

    #[test]
    fn index_copy_along_an_inner_dim() {
        let index = Tensor::from_vec(vec![3i64, 1], &[2]);
        let source = Tensor::from_vec(vec![1f32, 2., 3., 4., 5., 6.], &[3, 2]);
        let out = index_copy(&zeros(), 1, &index, &source).unwrap();
        assert_eq!(
            out.to_vec::<f32>(),
            [0., 2., 0., 1., 0., 4., 0., 3., 0., 6., 0., 5.]
        );
    }

    #[test]
    fn index_fill_counts_negative_indices_from_the_end() {
        let index = Tensor::from_vec(vec![-1i64], &[1]);
        let out = index_fill(&zeros(), 1, &index, Scalar::Float(5.0)).unwrap();
        assert_eq!(&out.to_vec::<f32>()[..4], [0., 0., 0., 5.]);
        let bad = Tensor::from_vec(vec![4i64], &[1]);
        assert!(index_fill(&zeros(), 1, &bad, Scalar::Int(1)).is_err());
    }

    #[test]
    fn mismatched_sources_are_refused() {
        let index = Tensor::from_vec(vec![0i64, 1], &[2]);
        let source = Tensor::zeros(&[2, 3], DType::F32);
        let err = index_add(&zeros(), 0, &index, &source, Scalar::Int(1)).unwrap_err();
        assert!(
            err.to_string().contains("source tensor shape must match"),
            "{err}"
        );
    }
}
