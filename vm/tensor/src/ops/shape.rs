//! Views (`view permute transpose narrow select …`), which only rewrite the
//! layout, and joins (`cat stack`), which copy.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::layout::Layout;
use std::sync::Arc;

use super::elementwise::build_rows;
use super::rows_per_task;
use crate::storage::{Element, with_dtype};
use crate::tensor::{Tensor, wrap_dim};

/// Resolves a requested shape with at most one `-1` against `numel`.
pub fn infer_shape(shape: &[i64], numel: usize) -> Result<Vec<usize>> {
    let invalid = || TensorError::InvalidShape {
        shape: shape.to_vec(),
        numel,
    };
    let mut infer = None;
    let mut known = 1usize;
    for (i, &d) in shape.iter().enumerate() {
        match d {
            -1 if infer.is_none() => infer = Some(i),
            -1 => {
                return Err(TensorError::runtime(
                    "view",
                    "only one dimension can be inferred",
                ));
            }
            d if d < 0 => {
                return Err(TensorError::runtime(
                    "view",
                    format!("invalid shape dimension {d}"),
                ));
            }
            d => known *= d as usize,
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
    match infer {
        Some(i) if known != 0 && numel.is_multiple_of(known) => out[i] = numel / known,
        Some(_) => return Err(invalid()),
        None if known != numel => return Err(invalid()),
        None => {}
    }
    Ok(out)
}

pub fn view(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let shape = infer_shape(shape, t.numel())?;
    let layout = t.layout().view(&shape).ok_or(TensorError::ViewStride)?;
    Ok(t.with_layout(layout))
}

/// A view when the strides allow it, a copy otherwise.
pub fn reshape(t: &Tensor, shape: &[i64]) -> Result<Tensor> {
    let shape = infer_shape(shape, t.numel())?;
    Ok(match t.layout().view(&shape) {
        Some(layout) => t.with_layout(layout),
        None => {
            let dense = t.copy();
            dense.with_layout(Layout::contiguous(&shape))
        }
    })
}

pub fn flatten(t: &Tensor, start: i64, end: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        return reshape(t, &[1]);
    }
    let (s, e) = (t.dim(start)?, t.dim(end)?);
    if s > e {
        return Err(TensorError::runtime(
            "flatten",
            "flatten() has invalid args: start_dim cannot come after end_dim",
        ));
    }
    let mut shape: Vec<i64> = t.shape()[..s].iter().map(|&d| d as i64).collect();
    shape.push(t.shape()[s..=e].iter().product::<usize>() as i64);
    shape.extend(t.shape()[e + 1..].iter().map(|&d| d as i64));
    reshape(t, &shape)
}

pub fn unflatten(t: &Tensor, dim: i64, sizes: &[i64]) -> Result<Tensor> {
    if sizes.is_empty() {
        return Err(TensorError::runtime(
            "unflatten",
            "unflatten: sizes must be non-empty",
        ));
    }
    t.dim(dim)?;
    let d = t
        .dim_strict(dim)
        .map_err(|e| TensorError::runtime("unflatten", e.to_string()))?;
    let inner = infer_shape(sizes, t.shape()[d]).map_err(|_| {
        TensorError::runtime(
            "unflatten",
            format!(
                "unflatten: Provided sizes {sizes:?} don't multiply up to the size of dim {dim} ({}) in the input tensor",
                t.shape()[d]
            ),
        )
    })?;
    let mut shape: Vec<i64> = t.shape()[..d].iter().map(|&x| x as i64).collect();
    shape.extend(inner.iter().map(|&x| x as i64));
    shape.extend(t.shape()[d + 1..].iter().map(|&x| x as i64));
    view(t, &shape).or_else(|_| reshape(t, &shape))
}

pub fn squeeze(t: &Tensor, dims: Option<&[i64]>) -> Result<Tensor> {
    let ndim = t.ndim();
    let mut drop = vec![false; ndim];
    match dims {
        None => (0..ndim).for_each(|d| drop[d] = t.shape()[d] == 1),
        Some(ds) => {
            for &d in ds {
                let d = wrap_dim(d, ndim)?;
                if ndim > 0 {
                    drop[d] = t.shape()[d] == 1;
                }
            }
        }
    }
    let l = t.layout();
    let keep = (0..ndim).filter(|&d| !drop[d]);
    let (shape, strides) = keep.map(|d| (l.shape[d], l.strides[d])).unzip();
    Ok(t.with_layout(Layout {
        shape,
        strides,
        offset: l.offset,
    }))
}

pub fn unsqueeze(t: &Tensor, dim: i64) -> Result<Tensor> {
    let d = wrap_dim(dim, t.ndim() + 1)?;
    Ok(t.with_layout(t.layout().unsqueeze(d)))
}

pub fn permute(t: &Tensor, dims: &[i64]) -> Result<Tensor> {
    if dims.len() != t.ndim() {
        return Err(TensorError::runtime(
            "permute",
            format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                t.ndim(),
                dims.len()
            ),
        ));
    }
    let mut seen = vec![false; t.ndim()];
    let mut order = Vec::with_capacity(dims.len());
    for &d in dims {
        let d = t.dim(d)?;
        if std::mem::replace(&mut seen[d], true) {
            return Err(TensorError::runtime(
                "permute",
                "permute(): duplicate dims are not allowed.",
            ));
        }
        order.push(d);
    }
    Ok(t.with_layout(t.layout().permute(&order)))
}

pub fn transpose(t: &Tensor, a: i64, b: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        t.dim(a)?;
        t.dim(b)?;
        return Ok(t.clone());
    }
    Ok(t.with_layout(t.layout().transpose(t.dim(a)?, t.dim(b)?)))
}

/// `t()`: transpose of a matrix; vectors and scalars come back unchanged.
pub fn matrix_t(t: &Tensor) -> Result<Tensor> {
    if t.ndim() > 2 {
        return Err(TensorError::runtime(
            "t",
            format!(
                "t() expects a tensor with <= 2 dimensions, but self is {}D",
                t.ndim()
            ),
        ));
    }
    if t.ndim() < 2 {
        Ok(t.clone())
    } else {
        transpose(t, 0, 1)
    }
}

/// `expand(*sizes)`: `-1` keeps a size; new leading dims are allowed.
pub fn expand(t: &Tensor, sizes: &[i64]) -> Result<Tensor> {
    if sizes.len() < t.ndim() {
        return Err(TensorError::runtime(
            "expand",
            format!(
                "expand(torch.FloatTensor{{{:?}}}, size={:?}): the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                t.shape(),
                sizes,
                sizes.len(),
                t.ndim()
            ),
        ));
    }
    let extra = sizes.len() - t.ndim();
    let mut shape = Vec::with_capacity(sizes.len());
    for (i, &s) in sizes.iter().enumerate() {
        let have = i.checked_sub(extra).map(|k| t.shape()[k]);
        shape.push(match (s, have) {
            (0.., _) => s as usize,
            (-1, Some(have)) => have,
            (-1, None) => {
                return Err(TensorError::runtime(
                    "expand",
                    format!("The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"),
                ));
            }
            // PyTorch lets other negative sizes through to a size-1 or new
            // dim, where its element count then overflows.
            (_, None | Some(1)) => return Err(TensorError::NumelOverflow),
            (_, Some(have)) => {
                return Err(TensorError::runtime(
                    "expand",
                    format!(
                        "The expanded size of the tensor ({s}) must match the existing size ({have}) at non-singleton dimension {i}.  Target sizes: {sizes:?}.  Tensor sizes: {:?}",
                        t.shape()
                    ),
                ));
            }
        });
    }
    t.broadcast_to(&shape)
}

pub fn narrow(t: &Tensor, dim: i64, start: i64, length: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        return Err(TensorError::runtime(
            "narrow",
            "narrow() cannot be applied to a 0-dim tensor.",
        ));
    }
    // PyTorch checks the length before the dim.
    if length < 0 {
        return Err(TensorError::runtime(
            "narrow",
            "narrow(): length must be non-negative.",
        ));
    }
    let d = t.dim(dim)?;
    let size = t.shape()[d] as i64;
    if !(-size..=size).contains(&start) {
        return Err(TensorError::index_error(format!(
            "start out of range (expected to be in range of [{}, {size}], but got {start})",
            -size
        )));
    }
    let start = if start < 0 { start + size } else { start };
    if start + length > size {
        return Err(TensorError::runtime(
            "narrow",
            format!("start ({start}) + length ({length}) exceeds dimension size ({size})."),
        ));
    }
    Ok(t.with_layout(t.layout().slice(d, start as usize, length as usize, 1)))
}

pub fn select(t: &Tensor, dim: i64, index: i64) -> Result<Tensor> {
    if t.ndim() == 0 {
        return Err(TensorError::index_error(
            "select() cannot be applied to a 0-dim tensor.",
        ));
    }
    let d = t.dim(dim)?;
    let size = t.shape()[d] as i64;
    if index < -size || index >= size {
        return Err(TensorError::index_error(format!(
            "select(): index {index} out of range for tensor of size {:?} at dimension {d}",
            t.shape()
        )));
    }
    let i = if index < 0 { index + size } else { index };
    Ok(t.with_layout(t.layout().select(d, i as usize)))
}

/// Python slice semantics along `dim` with a positive `step`.
pub fn slice(
    t: &Tensor,
    dim: usize,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
) -> Result<Tensor> {
    if step <= 0 {
        return Err(TensorError::value(
            "slice",
            "step must be greater than zero",
        ));
    }
    let size = t.shape()[dim] as i64;
    let clamp = |i: i64| {
        if i < 0 {
            (i + size).max(0)
        } else {
            i.min(size)
        }
    };
    let start = clamp(start.unwrap_or(0));
    let stop = clamp(stop.unwrap_or(size)).max(start);
    let len = (stop - start + step - 1) / step;
    Ok(t.with_layout(
        t.layout()
            .slice(dim, start as usize, len as usize, step as usize),
    ))
}

/// `diagonal(offset, dim1, dim2)`: a view of the diagonal of the `dim1`×`dim2`
/// planes (above it for a positive offset) as the last dim.
pub fn diagonal(t: &Tensor, offset: i64, dim1: i64, dim2: i64) -> Result<Tensor> {
    let (a, b) = (t.dim_strict(dim1)?, t.dim_strict(dim2)?);
    if a == b {
        return Err(TensorError::runtime(
            "diagonal",
            format!("diagonal dimensions cannot be identical {dim1}, {dim2}"),
        ));
    }
    let l = t.layout();
    let (sa, sb) = (l.shape[a] as i64, l.shape[b] as i64);
    let len = if offset >= 0 {
        sa.min(sb - offset)
    } else {
        (sa + offset).min(sb)
    }
    .max(0) as usize;
    let start = match (len, offset >= 0) {
        (0, _) => 0,
        (_, true) => offset as usize * l.strides[b],
        (_, false) => (-offset) as usize * l.strides[a],
    };
    let kept = (0..t.ndim()).filter(|&d| d != a && d != b);
    let mut layout = Layout {
        shape: kept.clone().map(|d| l.shape[d]).collect(),
        strides: kept.map(|d| l.strides[d]).collect(),
        offset: l.offset + start,
    };
    layout.shape.push(len);
    layout.strides.push(l.strides[a] + l.strides[b]);
    Ok(t.with_layout(layout))
}

/// `split(split_size)` or `split([sizes])` along `dim`.
pub fn split(t: &Tensor, sizes: Split, dim: i64) -> Result<Vec<Tensor>> {
    if t.ndim() == 0 {
        return Err(TensorError::runtime(
            "split",
            "split expects at least a 1-dimensional tensor",
        ));
    }
    let d = t.dim(dim)?;
    let total = t.shape()[d];
    let lengths: Vec<usize> = match sizes {
        Split::Every(n) if n == 0 && total > 0 => {
            return Err(TensorError::runtime(
                "split",
                "split_size can only be 0 if dimension size is 0, but got dimension size of "
                    .to_owned()
                    + &total.to_string(),
            ));
        }
        // An empty dim splits into one empty piece, whatever the size.
        Split::Every(_) if total == 0 => vec![0],
        Split::Every(n) => (0..total.div_ceil(n))
            .map(|i| n.min(total - i * n))
            .collect(),
        Split::Sizes(v) => {
            if v.iter().sum::<usize>() != total {
                return Err(TensorError::runtime(
                    "split_with_sizes",
                    format!(
                        "split_with_sizes expects split_sizes to sum exactly to {total} (input tensor's size at dimension {d}), but got split_sizes={v:?}"
                    ),
                ));
            }
            v
        }
    };
    let mut start = 0;
    Ok(lengths
        .into_iter()
        .map(|len| {
            let part = t.with_layout(t.layout().slice(d, start, len, 1));
            start += len;
            part
        })
        .collect())
}

/// How `split` cuts: every `n` elements, or into the given sizes.
pub enum Split {
    Every(usize),
    Sizes(Vec<usize>),
}

pub fn chunk(t: &Tensor, chunks: usize, dim: i64) -> Result<Vec<Tensor>> {
    if chunks == 0 {
        return Err(TensorError::runtime(
            "chunk",
            "chunk expects `chunks` to be greater than 0, got: 0",
        ));
    }
    if t.ndim() == 0 {
        return Err(TensorError::runtime(
            "chunk",
            "chunk expects at least a 1-dimensional tensor",
        ));
    }
    let d = t.dim(dim)?;
    if t.shape()[d] == 0 {
        // PyTorch gives `chunks` empty pieces of an empty dimension.
        return split(t, Split::Sizes(vec![0; chunks]), dim);
    }
    split(t, Split::Every(t.shape()[d].div_ceil(chunks)), dim)
}

pub fn unbind(t: &Tensor, dim: i64) -> Result<Vec<Tensor>> {
    let d = t.dim_strict(dim)?;
    (0..t.shape()[d])
        .map(|i| select(t, d as i64, i as i64))
        .collect()
}

/// `cat(tensors, dim)`: all shapes equal except along `dim`; dtypes promote.
pub fn cat(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    // PyTorch skips legacy empty 1-d tensors of shape [0].
    let parts: Vec<&Tensor> = tensors
        .iter()
        .filter(|t| !(t.ndim() == 1 && t.numel() == 0))
        .collect();
    let Some(first) = parts.first() else {
        return match tensors.first() {
            Some(t) => Ok(t.copy()),
            None => Err(TensorError::runtime(
                "cat",
                "torch.cat(): expected a non-empty list of Tensors",
            )),
        };
    };
    if first.ndim() == 0 {
        return Err(TensorError::runtime(
            "cat",
            "zero-dimensional tensor (at position 0) cannot be concatenated",
        ));
    }
    let d = first.dim(dim)?;
    // Every tensor takes part in the promotion, the skipped empty ones too.
    let dtype = tensors
        .iter()
        .map(|t| t.dtype())
        .reduce(DType::promote)
        .expect("non-empty");
    let mut shape = first.shape().to_vec();
    shape[d] = 0;
    for (i, t) in parts.iter().enumerate() {
        let same = t.ndim() == first.ndim()
            && (0..t.ndim()).all(|k| k == d || t.shape()[k] == first.shape()[k]);
        if !same {
            let k = (0..t.ndim().min(first.ndim()))
                .find(|&k| k != d && t.shape()[k] != first.shape()[k])
                .unwrap_or(0);
            return Err(TensorError::runtime(
                "cat",
                format!(
                    "Sizes of tensors must match except in dimension {d}. Expected size {} but got size {} for tensor number {i} in the list.",
                    first.shape().get(k).copied().unwrap_or(0),
                    t.shape().get(k).copied().unwrap_or(0)
                ),
            ));
        }
        shape[d] += t.shape()[d];
    }
    crate::alloc::new_numel(&shape, dtype)?;
    Ok(cat_dense(&parts, d, &shape, dtype))
}

/// The dense result of concatenating `parts` (agreeing off `d`) along `d`
/// into `shape` of `dtype`: each output row (everything before `d`) is the
/// parts' blocks one after another, copied straight from each part's
/// storage (a part whose blocks are not dense, or of another dtype, is
/// copied first), runs of rows split across threads when large.
fn cat_dense(parts: &[&Tensor], d: usize, shape: &[usize], dtype: DType) -> Tensor {
    // Blocks dense from `d` on (the dims before it may stride anyhow).
    let block_dims: Vec<usize> = (d..shape.len()).collect();
    let blocked: Vec<Tensor> = parts
        .iter()
        .map(|t| {
            let t = t.to_dtype(dtype);
            if t.layout().is_dense_in_order(&block_dims) {
                t
            } else {
                t.contiguous()
            }
        })
        .collect();
    with_dtype!(dtype, T => Tensor::from_vec(cat_rows::<T>(&blocked, d, shape), shape))
}

/// [`cat_dense`] on `T` elements, from parts whose blocks are dense.
fn cat_rows<T: Element>(parts: &[Tensor], d: usize, shape: &[usize]) -> Vec<T> {
    let inner: usize = shape[d + 1..].iter().product();
    let (n, row) = (shape.iter().product(), shape[d] * inner);
    // One read guard per storage (a tensor may be passed twice).
    let mut storages: Vec<&Tensor> = Vec::new();
    for t in parts {
        if !storages
            .iter()
            .any(|s| Arc::ptr_eq(s.storage(), t.storage()))
        {
            storages.push(t);
        }
    }
    storages.sort_by_key(|t| Arc::as_ptr(t.storage()));
    let guards: Vec<_> = storages.iter().map(|t| t.read()).collect();
    // Parts empty along `d` add nothing (and may have no storage to read).
    let blocks: Vec<(&[T], &Layout, usize)> = parts
        .iter()
        .filter(|t| t.shape()[d] > 0)
        .map(|t| {
            let at = storages
                .iter()
                .position(|s| Arc::ptr_eq(s.storage(), t.storage()))
                .expect("each storage kept above");
            let data = T::slice(&guards[at]).expect("converted to T above");
            (data, t.layout(), t.shape()[d] * inner)
        })
        .collect();
    let outer = &shape[..d];
    let per_task = rows_per_task(row);
    build_rows(n, per_task * row, |task, dst: &mut [T]| {
        let first = task * per_task;
        let mut index = vec![0; d];
        for (r, out) in dst.chunks_exact_mut(row).enumerate() {
            let mut rest = first + r;
            for k in (0..d).rev() {
                index[k] = rest % outer[k];
                rest /= outer[k];
            }
            let mut at = 0;
            for &(data, layout, width) in &blocks {
                let start = layout.offset
                    + index
                        .iter()
                        .zip(&layout.strides)
                        .map(|(i, s)| i * s)
                        .sum::<usize>();
                out[at..at + width].copy_from_slice(&data[start..start + width]);
                at += width;
            }
        }
    })
}

pub fn stack(tensors: &[Tensor], dim: i64) -> Result<Tensor> {
    let Some(first) = tensors.first() else {
        return Err(TensorError::runtime(
            "stack",
            "stack expects a non-empty TensorList",
        ));
    };
    for (i, t) in tensors.iter().enumerate() {
        if t.shape() != first.shape() {
            return Err(TensorError::runtime(
                "stack",
                format!(
                    "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {i}",
                    first.shape(),
                    t.shape()
                ),
            ));
        }
    }
    let d = wrap_dim(dim, first.ndim() + 1)?;
    let parts: Vec<Tensor> = tensors
        .iter()
        .map(|t| t.with_layout(t.layout().unsqueeze(d)))
        .collect();
    cat(&parts, d as i64)
}

/// `repeat(*sizes)`: tiles the tensor.
pub fn repeat(t: &Tensor, repeats: &[i64]) -> Result<Tensor> {
    if repeats.len() < t.ndim() {
        return Err(TensorError::runtime(
            "repeat",
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor",
        ));
    }
    let extra = repeats.len() - t.ndim();
    if repeats.iter().any(|&r| r < 0) {
        // PyTorch reports the output sizes, which a negative repeat makes negative.
        let out: Vec<i64> = repeats
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                r.saturating_mul(if i < extra {
                    1
                } else {
                    t.shape()[i - extra] as i64
                })
            })
            .collect();
        let bad = out.iter().find(|&&d| d < 0).copied().unwrap_or(-1);
        return Err(TensorError::runtime(
            "repeat",
            format!("Trying to create tensor with negative dimension {bad}: {out:?}"),
        ));
    }
    let sizes: Vec<usize> = repeats.iter().map(|&r| r as usize).collect();
    let sizes = &sizes[..];
    // View as [1.., d0, 1, d1, …] expanded to [r0, d0, r1, d1, …], then copy.
    let mut shape = Vec::new();
    let mut target = Vec::new();
    let mut out_shape = Vec::new();
    for (i, &r) in sizes.iter().enumerate() {
        let d = if i < extra { 1 } else { t.shape()[i - extra] };
        shape.extend([1, d]);
        target.extend([r, d]);
        out_shape.push(r.checked_mul(d).ok_or_else(|| TensorError::SizeOverflow {
            sizes: sizes.to_vec(),
        })?);
    }
    crate::alloc::new_numel(&out_shape, t.dtype())?;
    let base = t.contiguous();
    let viewed = base
        .with_layout(Layout::contiguous(&shape))
        .broadcast_to(&target)?;
    Ok(with_dtype!(t.dtype(), T => Tensor::from_vec(viewed.to_vec::<T>(), &out_shape)))
}

/// `pixel_shuffle`: `(*, C·r², H, W)` to `(*, C, H·r, W·r)`, each group of r²
/// channels spread over an r×r block of pixels.
pub fn pixel_shuffle(t: &Tensor, r: i64) -> Result<Tensor> {
    shuffle_pixels(t, r, true)
}

/// `pixel_unshuffle`: the inverse of [`pixel_shuffle`].
pub fn pixel_unshuffle(t: &Tensor, r: i64) -> Result<Tensor> {
    shuffle_pixels(t, r, false)
}

fn shuffle_pixels(t: &Tensor, r: i64, up: bool) -> Result<Tensor> {
    let op = if up {
        "pixel_shuffle"
    } else {
        "pixel_unshuffle"
    };
    let what = if up {
        "upscale_factor"
    } else {
        "downscale_factor"
    };
    let fail = |m: String| Err(TensorError::runtime(op, m));
    if t.ndim() < 3 {
        return fail(format!(
            "{op} expects input to have at least 3 dimensions, but got input with {} dimension(s)",
            t.ndim()
        ));
    }
    if r <= 0 {
        return fail(format!("{op} expects a positive {what}, but got {r}"));
    }
    let n = t.ndim();
    let batch: Vec<i64> = t.shape()[..n - 3].iter().map(|&d| d as i64).collect();
    let [c, h, w] = [t.shape()[n - 3], t.shape()[n - 2], t.shape()[n - 1]].map(|d| d as i64);
    let b = batch.len() as i64;
    // Batch dims stay in front; the rest is a 5-d (or 6-d) regrouping.
    let with = |tail: &[i64]| -> Vec<i64> { batch.iter().chain(tail).copied().collect() };
    let lead: Vec<i64> = (0..b).collect();
    let order =
        |tail: [i64; 5]| -> Vec<i64> { lead.iter().copied().chain(tail.map(|d| d + b)).collect() };
    if up {
        if c % (r * r) != 0 {
            return fail(format!(
                "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={c} is not divisible by {}",
                r * r
            ));
        }
        let oc = c / (r * r);
        let split = reshape(t, &with(&[oc, r, r, h, w]))?;
        let moved = permute(&split, &order([0, 3, 1, 4, 2]))?;
        reshape(&moved.contiguous(), &with(&[oc, h * r, w * r]))
    } else {
        if h % r != 0 || w % r != 0 {
            let (dim, size) = if h % r != 0 {
                ("height", h)
            } else {
                ("width", w)
            };
            return fail(format!(
                "pixel_unshuffle expects {dim} to be divisible by downscale_factor, but input.size({})={size} is not divisible by {r}",
                if h % r != 0 { -2 } else { -1 }
            ));
        }
        let split = reshape(t, &with(&[c, h / r, r, w / r, r]))?;
        let moved = permute(&split, &order([0, 2, 4, 1, 3]))?;
        reshape(&moved.contiguous(), &with(&[c * r * r, h / r, w / r]))
    }
}

/// `channel_shuffle`: `(N, g·k, *)` with the channels regrouped k-major, as
/// ShuffleNet mixes its grouped convolutions.
pub fn channel_shuffle(t: &Tensor, groups: i64) -> Result<Tensor> {
    let fail = |m: String| Err(TensorError::runtime("channel_shuffle", m));
    if t.ndim() < 3 {
        return fail(format!(
            "channel_shuffle expects input to have at least 3 dimensions, but got input with {} dimension(s)",
            t.ndim()
        ));
    }
    if groups <= 0 {
        return fail(format!(
            "Number of groups to divide channels in must be positive. Value of groups:{groups}"
        ));
    }
    let c = t.shape()[1] as i64;
    if c % groups != 0 {
        return fail(format!(
            "Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        ));
    }
    let mut split: Vec<i64> = vec![t.shape()[0] as i64, groups, c / groups];
    split.extend(t.shape()[2..].iter().map(|&d| d as i64));
    let grouped = reshape(t, &split)?;
    let swapped = transpose(&grouped, 1, 2)?.contiguous();
    let sizes: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    reshape(&swapped, &sizes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arange(shape: &[usize]) -> Tensor {
        let n = shape.iter().product::<usize>();
        Tensor::from_vec((0..n as i64).collect::<Vec<_>>(), shape)
    }

    #[test]
    fn pixel_shuffle_spreads_channels_over_blocks_and_unshuffle_undoes_it() {
        // Four channels of one pixel become one 2x2 block.
        let x = arange(&[1, 4, 1, 1]);
        let y = pixel_shuffle(&x, 2).unwrap();
        assert_eq!(y.shape(), [1, 1, 2, 2]);
        assert_eq!(y.to_vec::<i64>(), [0, 1, 2, 3]);
        let z = arange(&[2, 8, 3, 2]);
        let round_trip = pixel_unshuffle(&pixel_shuffle(&z, 2).unwrap(), 2).unwrap();
        assert_eq!(round_trip.to_vec::<i64>(), z.to_vec::<i64>());
        assert!(pixel_shuffle(&arange(&[1, 3, 2, 2]), 2).is_err());
        assert!(pixel_unshuffle(&arange(&[1, 1, 3, 2]), 2).is_err());
        assert!(pixel_shuffle(&arange(&[4, 4]), 2).is_err());
    }

    #[test]
    fn diagonal_views_the_offset_diagonal() {
        let x = arange(&[3, 4]);
        assert_eq!(diagonal(&x, 0, 0, 1).unwrap().to_vec::<i64>(), [0, 5, 10]);
        assert_eq!(diagonal(&x, 1, 0, 1).unwrap().to_vec::<i64>(), [1, 6, 11]);
        assert_eq!(diagonal(&x, -1, 0, 1).unwrap().to_vec::<i64>(), [4, 9]);
        assert_eq!(diagonal(&x, 5, 0, 1).unwrap().numel(), 0);
        assert_eq!(diagonal(&x, 2, 1, 0).unwrap().to_vec::<i64>(), [8]);
        assert!(diagonal(&x, 0, 0, 0).is_err());
    }

    #[test]
    fn channel_shuffle_interleaves_groups() {
        let x = arange(&[1, 6, 1]);
        let y = channel_shuffle(&x, 2).unwrap();
        assert_eq!(y.to_vec::<i64>(), [0, 3, 1, 4, 2, 5]);
        assert!(channel_shuffle(&x, 4).is_err());
    }

    /// cat against its definition: along each dim, parts of other dtypes
    /// (promoted), a transposed view, the same tensor twice, an empty part
    /// and a large enough result to split across threads.
    #[test]
    fn cat_places_each_part_block_by_block() {
        let x = arange(&[2, 3, 4]);
        let wide = Tensor::from_vec(
            (0..24).map(|v| v as f64 + 0.5).collect::<Vec<_>>(),
            &[2, 3, 4],
        );
        for dim in 0..3 {
            let y = cat(&[x.clone(), wide.clone(), x.clone()], dim as i64).unwrap();
            assert_eq!(y.dtype(), DType::F64);
            let mut shape = x.shape().to_vec();
            shape[dim] *= 3;
            assert_eq!(y.shape(), shape);
            let (xs, ws, ys) = (x.to_vec::<f64>(), wide.to_vec::<f64>(), y.to_vec::<f64>());
            for (k, &v) in ys.iter().enumerate() {
                let mut at = [
                    k / (shape[1] * shape[2]),
                    k / shape[2] % shape[1],
                    k % shape[2],
                ];
                let part = at[dim] / x.shape()[dim];
                at[dim] %= x.shape()[dim];
                let flat = (at[0] * 3 + at[1]) * 4 + at[2];
                assert_eq!(v, if part == 1 { ws[flat] } else { xs[flat] });
            }
        }
        let t = x.with_layout(x.layout().transpose(1, 2));
        let y = cat(&[t.clone(), t.contiguous()], 1).unwrap();
        assert_eq!(
            y.to_vec::<i64>()[..12],
            t.contiguous().to_vec::<i64>()[..12]
        );
        // Column slices (dense blocks, strided rows) read in place.
        let (left, right) = (
            x.with_layout(x.layout().slice(2, 0, 1, 1)),
            x.with_layout(x.layout().slice(2, 1, 3, 1)),
        );
        let joined = cat(&[left, right], 2).unwrap();
        assert_eq!(joined.to_vec::<i64>(), x.to_vec::<i64>());
        let empty = Tensor::zeros(&[2, 0, 4], DType::I64);
        assert_eq!(
            cat(&[empty, x.clone()], 1).unwrap().to_vec::<i64>(),
            x.to_vec::<i64>()
        );
        let big = arange(&[300, 128]);
        let y = cat(&[big.clone(), big.clone()], 1).unwrap();
        let ys = y.to_vec::<i64>();
        assert_eq!(
            ys[256 * 299 + 128..256 * 300],
            big.to_vec::<i64>()[128 * 299..]
        );
    }
}
