//! Copies that move elements around: `flip`, `roll`, `rot90`, and
//! `meshgrid`'s expanded views.

use crate::error::{Result, TensorError};
use crate::layout::contiguous_strides;
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::shape::{cat, expand, narrow, reshape, transpose};

/// Which dims of `t` a list names, refusing repeats as PyTorch does.
fn dim_mask(t: &Tensor, dims: &[i64]) -> Result<Vec<bool>> {
    let mut mask = vec![false; t.ndim().max(1)];
    for &d in dims {
        let k = t.dim(d)?;
        if mask[k] {
            return Err(TensorError::runtime(
                "flip",
                format!("dim {k} appears multiple times in the list of dims"),
            ));
        }
        mask[k] = true;
    }
    Ok(mask)
}

/// `flip(dims)`: a copy with the order reversed along each of `dims`.
pub fn flip(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let mask = dim_mask(t, dims)?;
    if t.ndim() == 0 || t.numel() == 0 {
        return Ok(t.copy());
    }
    let src = t.contiguous();
    Ok(with_dtype!(t.dtype(), T => src.with_slice(|data: &[T]| flipped(data, t.shape(), &mask))))
}

/// Copies dense `data` of `shape` reversed along the dims `mask` marks,
/// a row of the last dim at a time.
fn flipped<T: Element>(data: &[T], shape: &[usize], mask: &[bool]) -> Tensor {
    let n = shape.len();
    let strides = contiguous_strides(shape);
    let row = shape[n - 1];
    let mut out = Vec::with_capacity(data.len());
    let mut index = vec![0usize; n - 1];
    for _ in 0..data.len() / row {
        let start: usize = (0..n - 1)
            .map(|d| {
                let i = if mask[d] {
                    shape[d] - 1 - index[d]
                } else {
                    index[d]
                };
                i * strides[d]
            })
            .sum();
        let src = &data[start..start + row];
        if mask[n - 1] {
            out.extend(src.iter().rev());
        } else {
            out.extend_from_slice(src);
        }
        for d in (0..n - 1).rev() {
            index[d] += 1;
            if index[d] < shape[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Tensor::from_vec(out, shape)
}

/// `fliplr` (dim 1, at least 2-d) and `flipud` (dim 0, at least 1-d).
pub fn flip_dim(t: &Tensor, dim: usize) -> Result<Tensor> {
    if t.ndim() <= dim {
        let op = if dim == 0 { "flipud" } else { "fliplr" };
        return Err(TensorError::runtime(
            op,
            format!("Input must be >= {}-d.", dim + 1),
        ));
    }
    flip(t, &[dim as i64])
}

/// `roll(shifts, dims)`: elements shifted circularly along each dim; with no
/// dims, along the flattened tensor, keeping the shape.
pub fn roll(t: &Tensor, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
    if shifts.is_empty() {
        return Err(TensorError::runtime("roll", "`shifts` required"));
    }
    if dims.is_empty() && shifts.len() == 1 {
        let sizes: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
        let flat = reshape(t, &[-1])?;
        return reshape(&roll(&flat, shifts, &[0])?, &sizes);
    }
    if shifts.len() != dims.len() {
        return Err(TensorError::runtime(
            "roll",
            format!(
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            ),
        ));
    }
    let mut out = t.clone();
    for (&shift, &dim) in shifts.iter().zip(dims) {
        let d = t.dim(dim)?;
        let size = t.shape().get(d).copied().unwrap_or(1) as i64;
        if size == 0 {
            continue;
        }
        let s = shift.rem_euclid(size);
        out = cat(
            &[
                narrow(&out, d as i64, size - s, s)?,
                narrow(&out, d as i64, 0, size - s)?,
            ],
            d as i64,
        )?;
    }
    // Every rolled dim went through `cat`, a fresh tensor; an empty dim
    // means no elements, so nothing can be shared.
    Ok(out)
}

/// `rot90(k, dims)`: `k` quarter turns from the first of `dims` towards the second.
pub fn rot90(t: &Tensor, k: i64, dims: &[i64]) -> Result<Tensor> {
    let fail = |m: String| Err(TensorError::runtime("rot90", m));
    if dims.len() != 2 {
        return fail(format!(
            "expected total rotation dims == 2, but got dims = {}",
            dims.len()
        ));
    }
    if t.ndim() < 2 {
        return fail(format!(
            "expected total dims >= 2, but got total dims = {}",
            t.ndim()
        ));
    }
    let (a, b) = (t.dim(dims[0])?, t.dim(dims[1])?);
    if a == b {
        return fail(format!(
            "expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}"
        ));
    }
    let (a, b) = (a as i64, b as i64);
    match k.rem_euclid(4) {
        1 => Ok(transpose(&flip(t, &[b])?, a, b)?.contiguous()),
        2 => flip(t, &[a, b]),
        3 => Ok(flip(&transpose(t, a, b)?, &[b])?),
        _ => Ok(t.copy()),
    }
}

/// `diag(diagonal)`: a 1-d tensor's values on a square matrix's diagonal,
/// or a copy of a matrix's diagonal.
pub fn diag(t: &Tensor, diagonal: i64) -> Result<Tensor> {
    match t.ndim() {
        1 => {
            let n = t.shape()[0];
            let size = n + diagonal.unsigned_abs() as usize;
            let out = Tensor::zeros(&[size, size], t.dtype());
            super::shape::diagonal(&out, diagonal, 0, 1)?.copy_from(t)?;
            Ok(out)
        }
        2 => Ok(super::shape::diagonal(t, diagonal, 0, 1)?.copy()),
        d => Err(TensorError::runtime(
            "diag",
            format!("diag(): Supports 1D or 2D tensors. Got {d}D"),
        )),
    }
}

/// `meshgrid(tensors, indexing)`: each 0-d or 1-d tensor expanded over the
/// grid of all their lengths; `"xy"` swaps the first two grid dims.
pub fn meshgrid(tensors: &[Tensor], indexing: &str) -> Result<Vec<Tensor>> {
    let (views, grid) = meshgrid_plan(tensors, indexing)?;
    tensors
        .iter()
        .zip(&views)
        .map(|(t, view)| expand(&reshape(t, view)?, &grid))
        .collect()
}

/// What `meshgrid` does, checked: the shape each tensor is viewed as (its
/// length on its grid dim, 1 elsewhere) and the grid it is expanded to.
pub fn meshgrid_plan(tensors: &[Tensor], indexing: &str) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let fail = |m: String| Err(TensorError::runtime("meshgrid", m));
    let xy = match indexing {
        "ij" => false,
        "xy" => true,
        other => {
            return fail(format!(
                "torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {other}"
            ));
        }
    };
    let Some(first) = tensors.first() else {
        return fail("meshgrid expects a non-empty TensorList".into());
    };
    if let Some(t) = tensors.iter().find(|t| t.ndim() > 1) {
        return fail(format!(
            "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got a {}-d tensor",
            t.ndim()
        ));
    }
    if tensors.iter().any(|t| t.dtype() != first.dtype()) {
        return fail("meshgrid expects all tensors to have the same dtype".into());
    }
    let mut order: Vec<usize> = (0..tensors.len()).collect();
    if xy && order.len() >= 2 {
        order.swap(0, 1);
    }
    let grid: Vec<i64> = order.iter().map(|&i| tensors[i].numel() as i64).collect();
    let mut views = vec![Vec::new(); tensors.len()];
    for (axis, &i) in order.iter().enumerate() {
        let mut shape = vec![1i64; grid.len()];
        shape[axis] = -1;
        views[i] = shape;
    }
    Ok((views, grid))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(shape: &[usize]) -> Tensor {
        let n = shape.iter().product::<usize>();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape)
    }

    #[test]
    fn flip_reverses_the_named_dims_of_any_layout() {
        let x = arange(&[2, 3]);
        assert_eq!(flip(&x, &[1]).unwrap().to_vec::<i64>(), [2, 1, 0, 5, 4, 3]);
        assert_eq!(flip(&x, &[0]).unwrap().to_vec::<i64>(), [3, 4, 5, 0, 1, 2]);
        assert_eq!(
            flip(&x, &[0, -1]).unwrap().to_vec::<i64>(),
            [5, 4, 3, 2, 1, 0]
        );
        let t = transpose(&x, 0, 1).unwrap();
        assert_eq!(flip(&t, &[0]).unwrap().to_vec::<i64>(), [2, 5, 1, 4, 0, 3]);
        assert!(flip(&x, &[1, -1]).is_err());
    }

    #[test]
    fn roll_shifts_circularly_flat_or_per_dim() {
        let x = arange(&[2, 3]);
        assert_eq!(
            roll(&x, &[1], &[]).unwrap().to_vec::<i64>(),
            [5, 0, 1, 2, 3, 4]
        );
        assert_eq!(
            roll(&x, &[-1], &[1]).unwrap().to_vec::<i64>(),
            [1, 2, 0, 4, 5, 3]
        );
        assert_eq!(
            roll(&x, &[1, 4], &[0, 1]).unwrap().to_vec::<i64>(),
            [5, 3, 4, 2, 0, 1]
        );
        assert!(roll(&x, &[1, 2], &[0]).is_err());
    }

    #[test]
    fn rot90_turns_counterclockwise() {
        let x = arange(&[2, 2]);
        assert_eq!(rot90(&x, 1, &[0, 1]).unwrap().to_vec::<i64>(), [1, 3, 0, 2]);
        assert_eq!(
            rot90(&x, -1, &[0, 1]).unwrap().to_vec::<i64>(),
            [2, 0, 3, 1]
        );
        assert_eq!(rot90(&x, 2, &[0, 1]).unwrap().to_vec::<i64>(), [3, 2, 1, 0]);
    }

    #[test]
    fn meshgrid_expands_each_axis() {
        let a = arange(&[2]);
        let b = arange(&[3]);
        let ij = meshgrid(&[a.clone(), b.clone()], "ij").unwrap();
        assert_eq!(ij[0].shape(), [2, 3]);
        assert_eq!(ij[1].to_vec::<i64>(), [0, 1, 2, 0, 1, 2]);
        let xy = meshgrid(&[a, b], "xy").unwrap();
        assert_eq!(xy[0].shape(), [3, 2]);
        assert_eq!(xy[0].to_vec::<i64>(), [0, 1, 0, 1, 0, 1]);
    }
}
