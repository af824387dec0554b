//! Indexing by tensors: `index_select`, `gather`, `scatter`, `masked_fill`.

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError};
use crate::layout::Layout;
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

pub fn index_select(t: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    if index.ndim() > 1 {
        return Err(TensorError::index_error(
            "index_select(): Index is supposed to be a vector",
        ));
    }
    if index.dtype().is_float() || index.dtype() == DType::Bool {
        return Err(TensorError::runtime(
            "index_select",
            "index_select(): Expected dtype int32/int64 for index",
        ));
    }
    let d = t.dim(dim)?;
    let flat = index
        .with_layout(Layout::contiguous(&[index.numel()]))
        .contiguous()
        .to_dtype(DType::I64);
    // Unlike `t[index]`, `index_select` does not count negative indices from
    // the end. PyTorch's dim-1 kernel reports a bad index differently.
    let size = t.shape().get(d).copied().unwrap_or(1) as i64;
    if let Some(&i) = flat
        .to_vec::<i64>()
        .iter()
        .find(|&&i| !(0..size).contains(&i))
    {
        return Err(if d == 1 {
            TensorError::runtime(
                "index_select",
                format!("INDICES element is out of DATA bounds, id={i} axis_dim={size}"),
            )
        } else {
            TensorError::index_error("index out of range in self")
        });
    }
    super::subscript::take_along(t, d, &flat)
}

fn check_index_shape(op: &'static str, t: &Tensor, d: usize, index: &Tensor) -> Result<()> {
    if index.ndim() != t.ndim() {
        return Err(TensorError::runtime(
            op,
            format!(
                "Index tensor must have the same number of dimensions as {} tensor",
                if op == "gather" { "input" } else { "self" }
            ),
        ));
    }
    for k in 0..t.ndim() {
        if k != d && index.shape()[k] > t.shape()[k] {
            return Err(TensorError::runtime(
                op,
                format!(
                    "Size does not match at dimension {k} expected index {:?} to be no larger than self {:?} apart from dimension {d}",
                    index.shape(),
                    t.shape()
                ),
            ));
        }
    }
    if index.dtype() != DType::I64 {
        return Err(TensorError::runtime(
            op,
            format!("{op}(): Expected dtype int64 for index"),
        ));
    }
    Ok(())
}

/// For each position of `index`, the storage offset in `t` it addresses along `d`.
/// Negative indices are out of bounds here, as in PyTorch's `gather`/`scatter`.
fn addressed(op: &'static str, t: &Tensor, d: usize, index: &Tensor) -> Result<Vec<usize>> {
    let idx = index.to_vec::<i64>();
    let l = t.layout();
    let mut out = Vec::with_capacity(idx.len());
    let mut pos = vec![0usize; index.ndim()];
    let size = t.shape()[d];
    for &i in &idx {
        let Some(j) = usize::try_from(i).ok().filter(|&j| j < size) else {
            return Err(TensorError::runtime(
                op,
                format!("index {i} is out of bounds for dimension {d} with size {size}"),
            ));
        };
        let mut off = l.offset;
        for (k, (&p, &stride)) in pos.iter().zip(&l.strides).enumerate() {
            off += if k == d { j } else { p } * stride;
        }
        out.push(off);
        for k in (0..pos.len()).rev() {
            pos[k] += 1;
            if pos[k] < index.shape()[k] {
                break;
            }
            pos[k] = 0;
        }
    }
    Ok(out)
}

pub fn gather(t: &Tensor, dim: i64, index: &Tensor) -> Result<Tensor> {
    let d = t.dim(dim)?;
    check_index_shape("gather", t, d, index)?;
    let offsets = addressed("gather", t, d, index)?;
    let storage = t.read();
    Ok(with_dtype!(t.dtype(), T => {
        let src = T::slice(&storage).expect("dtype matches");
        Tensor::from_vec(offsets.iter().map(|&o| src[o]).collect::<Vec<T>>(), index.shape())
    }))
}

/// `scatter(dim, index, src)` out of place; `reduce` is `None`, `"add"` or `"multiply"`.
pub fn scatter(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: ScatterSrc,
    reduce: Option<&str>,
) -> Result<Tensor> {
    let d = t.dim(dim)?;
    check_index_shape("scatter", t, d, index)?;
    let out = t.copy();
    let offsets = addressed("scatter", &out, d, index)?;
    with_dtype!(t.dtype(), T => {
        let values: Vec<T> = match &src {
            ScatterSrc::Tensor(s) => {
                let window = s.with_layout(Layout { shape: index.shape().to_vec(), strides: s.strides().to_vec(), offset: s.layout().offset });
                window.to_vec::<T>()
            }
            ScatterSrc::Scalar(v) => vec![T::from_scalar(*v); offsets.len()],
        };
        let mut storage = out.write();
        let dst = T::slice_mut(&mut storage).expect("dtype matches");
        for (&o, v) in offsets.iter().zip(values) {
            dst[o] = match reduce {
                Some("add") => T::from_f64(dst[o].to_f64() + v.to_f64()),
                Some("multiply") => T::from_f64(dst[o].to_f64() * v.to_f64()),
                _ => v,
            };
        }
    });
    Ok(out)
}

/// What `scatter` writes: another tensor's elements or one value.
pub enum ScatterSrc {
    Tensor(Tensor),
    Scalar(Scalar),
}

pub fn masked_fill(t: &Tensor, mask: &Tensor, value: Scalar) -> Result<Tensor> {
    if mask.dtype() != DType::Bool {
        return Err(TensorError::runtime(
            "masked_fill",
            "masked_fill_ only supports boolean masks, but got mask with dtype ".to_owned()
                + mask.dtype().name(),
        ));
    }
    let value = Tensor::fill_value(value, t.dtype())?;
    let (base, m) = broadcast_with_mask(t, mask)?;
    Ok(with_dtype!(t.dtype(), T => {
        let v = T::from_scalar(value);
        let data: Vec<T> = base.to_vec::<T>().into_iter().zip(m).map(|(x, m)| if m { v } else { x }).collect();
        Tensor::from_vec(data, base.shape())
    }))
}

/// `t` and `mask` broadcast together: `t` as a view, the mask as values.
fn broadcast_with_mask(t: &Tensor, mask: &Tensor) -> Result<(Tensor, Vec<bool>)> {
    let shape = crate::layout::broadcast_shapes(t.shape(), mask.shape())
        .ok_or_else(|| TensorError::broadcast(t.shape(), mask.shape()))?;
    Ok((
        t.broadcast_to(&shape)?,
        mask.broadcast_to(&shape)?.to_vec::<bool>(),
    ))
}

/// Elements where `mask` holds, as a 1-d tensor.
pub fn masked_select(t: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let (base, m) = broadcast_with_mask(t, mask)?;
    Ok(with_dtype!(t.dtype(), T => {
        let data: Vec<T> = base.to_vec::<T>().into_iter().zip(m).filter(|(_, m)| *m).map(|(x, _)| x).collect();
        let n = data.len();
        Tensor::from_vec(data, &[n])
    }))
}

/// `tril` (`lower`) or `triu` of the last two dims: elements off the kept
/// triangle (relative to `diagonal`) become zero.
pub fn triangle(t: &Tensor, diagonal: i64, lower: bool) -> Result<Tensor> {
    let op = if lower { "tril" } else { "triu" };
    if t.ndim() < 2 {
        return Err(TensorError::runtime(
            op,
            format!("{op}: input tensor must have at least 2 dimensions"),
        ));
    }
    let (rows, cols) = (t.shape()[t.ndim() - 2], t.shape()[t.ndim() - 1]);
    let dropped: Vec<bool> = (0..rows * cols)
        .map(|i| {
            let offset = (i % cols) as i64 - (i / cols) as i64;
            if lower {
                offset > diagonal
            } else {
                offset < diagonal
            }
        })
        .collect();
    masked_fill(t, &Tensor::from_vec(dropped, &[rows, cols]), Scalar::Int(0))
}
