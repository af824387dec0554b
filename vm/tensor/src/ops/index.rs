//! Indexing by tensors: `index_select`, `gather`, `scatter(_reduce)`,
//! `masked_fill`/`masked_scatter`, `take`/`put`, `nonzero`.

use crate::dtype::{DType, Scalar};
use crate::error::{Result, TensorError, legacy_name};
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
    // A 0-d index reads as one element; a view keeps its offset and strides.
    let flat = super::shape::reshape(index, &[-1])?
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

/// What a scatter reads from `src`: the window `index`'s shape covers.
fn check_source_shape(t: &Tensor, d: usize, index: &Tensor, src: &Tensor) -> Result<()> {
    let fits =
        src.ndim() == index.ndim() && index.shape().iter().zip(src.shape()).all(|(i, s)| i <= s);
    if fits {
        return Ok(());
    }
    Err(TensorError::runtime(
        "scatter",
        format!(
            "Expected index {:?} to be no larger than self {:?} apart from dimension {d} and to be no larger size than src {:?}",
            index.shape(),
            t.shape(),
            src.shape()
        ),
    ))
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
    if let ScatterSrc::Tensor(s) = &src {
        if s.dtype() != t.dtype() {
            return Err(TensorError::runtime(
                "scatter",
                "scatter(): Expected self.dtype to be equal to src.dtype",
            ));
        }
        check_source_shape(t, d, index, s)?;
    }
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

/// How `scatter_reduce` combines the values landing on one element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    Sum,
    Prod,
    Mean,
    Amax,
    Amin,
}

impl ScatterReduce {
    pub fn parse(name: &str) -> Result<ScatterReduce> {
        Ok(match name {
            "sum" => ScatterReduce::Sum,
            "prod" => ScatterReduce::Prod,
            "mean" => ScatterReduce::Mean,
            "amax" | "max" => ScatterReduce::Amax,
            "amin" | "min" => ScatterReduce::Amin,
            _ => {
                return Err(TensorError::runtime(
                    "scatter_reduce",
                    format!(
                        "reduce argument must be either sum, prod, mean, amax or amin, got {name}"
                    ),
                ));
            }
        })
    }
}

/// `scatter_reduce(dim, index, src, reduce, include_self)`: every element
/// addressed combines its own value (unless `include_self` is false) with
/// all the values scattered to it; untouched elements keep theirs. Integer
/// means divide with truncation, as PyTorch does.
pub fn scatter_reduce(
    t: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: ScatterReduce,
    include_self: bool,
) -> Result<Tensor> {
    let d = t.dim(dim)?;
    check_index_shape("scatter_reduce", t, d, index)?;
    check_source_shape(t, d, index, src)?;
    if src.dtype() != t.dtype() {
        return Err(TensorError::runtime(
            "scatter_reduce",
            "scatter(): Expected self.dtype to be equal to src.dtype",
        ));
    }
    let out = t.contiguous().copy();
    let offsets = addressed("scatter_reduce", &out, d, index)?;
    let window = src.with_layout(Layout {
        shape: index.shape().to_vec(),
        strides: src.strides().to_vec(),
        offset: src.layout().offset,
    });
    // `scatter_add`: each value added where it goes, in order, in the
    // element type (PyTorch's accumulation).
    if reduce == ScatterReduce::Sum && include_self {
        fn add_into<T: Copy + std::ops::Add<Output = T>>(
            dst: &mut [T],
            offsets: &[usize],
            values: &[T],
        ) {
            for (&o, &v) in offsets.iter().zip(values) {
                dst[o] = dst[o] + v;
            }
        }
        let added = match t.dtype() {
            DType::F32 => {
                let values: Vec<f32> = window.to_vec();
                let mut storage = out.write();
                add_into(
                    f32::slice_mut(&mut storage).expect("dtype matches"),
                    &offsets,
                    &values,
                );
                true
            }
            DType::F64 => {
                let values: Vec<f64> = window.to_vec();
                let mut storage = out.write();
                add_into(
                    f64::slice_mut(&mut storage).expect("dtype matches"),
                    &offsets,
                    &values,
                );
                true
            }
            _ => false,
        };
        if added {
            return Ok(out);
        }
    }
    // Each destination's running value (float or integer) and count.
    let is_float = t.dtype().is_float();
    let mut acc: std::collections::HashMap<usize, (f64, i64, usize)> =
        std::collections::HashMap::new();
    with_dtype!(t.dtype(), T => {
        let values: Vec<T> = window.to_vec();
        let mut storage = out.write();
        let dst = T::slice_mut(&mut storage).expect("dtype matches");
        for (&o, v) in offsets.iter().zip(values) {
            let entry = acc.entry(o).or_insert_with(|| {
                let own = dst[o];
                match (include_self, reduce) {
                    (true, _) => (own.to_f64(), own.to_i64(), 1),
                    (false, ScatterReduce::Prod) => (1.0, 1, 0),
                    (false, ScatterReduce::Amax) => (f64::NEG_INFINITY, i64::MIN, 0),
                    (false, ScatterReduce::Amin) => (f64::INFINITY, i64::MAX, 0),
                    (false, _) => (0.0, 0, 0),
                }
            });
            let (x, i) = (v.to_f64(), v.to_i64());
            // Rounded to the element type at each step, as PyTorch accumulates.
            let round = |y: f64| T::from_f64(y).to_f64();
            match reduce {
                ScatterReduce::Sum | ScatterReduce::Mean => {
                    entry.0 = round(entry.0 + x);
                    entry.1 = entry.1.wrapping_add(i);
                }
                ScatterReduce::Prod => {
                    entry.0 = round(entry.0 * x);
                    entry.1 = entry.1.wrapping_mul(i);
                }
                // NaN propagates, as PyTorch's maximum does.
                ScatterReduce::Amax => {
                    entry.0 = if x.is_nan() || entry.0.is_nan() { f64::NAN } else { entry.0.max(x) };
                    entry.1 = entry.1.max(i);
                }
                ScatterReduce::Amin => {
                    entry.0 = if x.is_nan() || entry.0.is_nan() { f64::NAN } else { entry.0.min(x) };
                    entry.1 = entry.1.min(i);
                }
            }
            entry.2 += 1;
        }
        for (o, (x, i, n)) in acc {
            dst[o] = match (reduce, is_float) {
                (ScatterReduce::Mean, true) => T::from_f64(x / n.max(1) as f64),
                (ScatterReduce::Mean, false) => T::from_i64(i / n.max(1) as i64),
                (_, true) => T::from_f64(x),
                (_, false) => T::from_i64(i),
            };
        }
    });
    Ok(out)
}

/// `nonzero(t)`: the coordinates of every non-zero element, `[n, ndim]`
/// int64 in row-major order (a 0-d tensor has `ndim` 0 coordinates).
pub fn nonzero(t: &Tensor) -> Tensor {
    let flags: Vec<bool> = t.to_dtype(DType::Bool).to_vec();
    let shape = t.shape();
    let mut coords = Vec::new();
    let mut count = 0;
    for (n, _) in flags.iter().enumerate().filter(|&(_, &f)| f) {
        let mut rest = n;
        let start = coords.len();
        coords.resize(start + shape.len(), 0i64);
        for (k, &size) in shape.iter().enumerate().rev() {
            coords[start + k] = (rest % size) as i64;
            rest /= size;
        }
        count += 1;
    }
    Tensor::from_vec(coords, &[count, shape.len()])
}

/// `take(index)`: elements of `t` read as a flat row-major vector, in
/// `index`'s shape; negative positions count from the end.
pub fn take(t: &Tensor, index: &Tensor) -> Result<Tensor> {
    let flat = t.contiguous();
    let positions = flat_positions("take", t.numel(), index)?;
    Ok(with_dtype!(t.dtype(), T => {
        let src: Vec<T> = flat.to_vec();
        Tensor::from_vec(positions.iter().map(|&p| src[p]).collect::<Vec<T>>(), index.shape())
    }))
}

/// `put(index, source, accumulate)`: `take`'s inverse, out of place.
pub fn put(t: &Tensor, index: &Tensor, source: &Tensor, accumulate: bool) -> Result<Tensor> {
    if source.dtype() != t.dtype() {
        return Err(TensorError::runtime(
            "put",
            format!(
                "put_(): self and source expected to have the same dtype, but got self.dtype = {} and source.dtype = {}",
                legacy_name(t.dtype()),
                legacy_name(source.dtype())
            ),
        ));
    }
    if index.numel() != source.numel() {
        return Err(TensorError::index_error(format!(
            "put_(): Expected source and index to have the same number of elements, but got source.numel() = {}, index.numel() = {}",
            source.numel(),
            index.numel()
        )));
    }
    let positions = flat_positions("put_", t.numel(), index)?;
    let out = t.contiguous().copy();
    with_dtype!(t.dtype(), T => {
        let values: Vec<T> = source.contiguous().to_vec();
        let mut storage = out.write();
        let dst = T::slice_mut(&mut storage).expect("dtype matches");
        for (&p, v) in positions.iter().zip(values) {
            dst[p] = if accumulate { dst[p].accumulate(v) } else { v };
        }
    });
    Ok(out)
}

fn flat_positions(op: &str, numel: usize, index: &Tensor) -> Result<Vec<usize>> {
    if index.dtype() != DType::I64 {
        return Err(TensorError::runtime(
            "take",
            format!(
                "{op}(): Expected a long tensor for index, but got {}",
                legacy_name(index.dtype())
            ),
        ));
    }
    let n = numel as i64;
    index
        .contiguous()
        .to_vec::<i64>()
        .into_iter()
        .map(|i| {
            if (-n..n).contains(&i) {
                Ok(if i < 0 { i + n } else { i } as usize)
            } else {
                Err(TensorError::index_error(format!(
                    "out of range: tried to access index {i} on a tensor of {numel} elements."
                )))
            }
        })
        .collect()
}

/// `masked_scatter(mask, source)`: where the (broadcast) mask holds, the
/// next element of `source` in row-major order.
pub fn masked_scatter(t: &Tensor, mask: &Tensor, source: &Tensor) -> Result<Tensor> {
    if mask.dtype() != DType::Bool {
        return Err(TensorError::runtime(
            "masked_scatter",
            format!(
                "masked_scatter_ only supports boolean masks, but got mask with dtype {}",
                mask.dtype().name()
            ),
        ));
    }
    if source.dtype() != t.dtype() {
        return Err(TensorError::runtime(
            "masked_scatter",
            format!(
                "masked_scatter_: expected self and source to have same dtypes but got {} and {}",
                legacy_name(t.dtype()),
                legacy_name(source.dtype())
            ),
        ));
    }
    let (base, flags) = broadcast_with_mask(t, mask)?;
    if flags.iter().filter(|&&f| f).count() > source.numel() {
        return Err(TensorError::runtime(
            "masked_scatter",
            "Number of elements of source < number of ones in mask",
        ));
    }
    Ok(with_dtype!(t.dtype(), T => {
        let values: Vec<T> = source.contiguous().to_vec();
        let mut next = values.into_iter();
        let data: Vec<T> = base
            .to_vec::<T>()
            .into_iter()
            .zip(flags)
            .map(|(x, f)| if f { next.next().unwrap_or(x) } else { x })
            .collect();
        Tensor::from_vec(data, base.shape())
    }))
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
