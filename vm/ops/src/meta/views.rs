//! Shape rules of views and joins: `view`/`reshape` (a `-1` is the
//! remaining element count divided out symbolically), `flatten`,
//! `squeeze`/`unsqueeze`, `permute`/`transpose`, `expand`, `narrow`/
//! `select`, `split`/`chunk`, `cat`/`stack`, `repeat`, and subscripts.

use fxvm_symbolic::Expr;
use fxvm_tensor::{DType, Result, TensorError};

use super::{Ctx, MetaOut, TensorMeta, numel};
use crate::value::Value;

fn tensor_out(x: &TensorMeta, sizes: Vec<Expr>) -> Result<MetaOut> {
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

fn first(cx: &Ctx<'_>) -> Result<TensorMeta> {
    cx.tensor(cx.op.schema.params[0].name)
}

/// Sizes for `view`/`reshape` of `x`: one `-1` becomes what is left of
/// the element count; the counts must agree.
fn infer_sizes(cx: &mut Ctx<'_>, x: &TensorMeta, sizes: &[Expr]) -> Result<Vec<Expr>> {
    let total = cx.sym(numel(&x.sizes))?;
    let minus_one = Expr::int(-1);
    let holes: Vec<usize> = (0..sizes.len())
        .filter(|&i| sizes[i] == minus_one)
        .collect();
    let known: Vec<Expr> = sizes.iter().filter(|s| **s != minus_one).cloned().collect();
    let known_count = cx.sym(numel(&known))?;
    let invalid = |cx: &mut Ctx<'_>| TensorError::InvalidShape {
        shape: sizes.iter().map(|s| cx.hint(s).unwrap_or(-1)).collect(),
        numel: cx.hint(&total).unwrap_or(0).max(0) as usize,
    };
    match holes.as_slice() {
        [] => {
            if !cx.equal(&total, &known_count)? {
                return Err(invalid(cx));
            }
            Ok(sizes.to_vec())
        }
        [hole] => {
            let rest = cx.sym(total.modulo(&known_count))?;
            if !cx.equal(&rest, &Expr::int(0))? {
                return Err(invalid(cx));
            }
            let mut out = sizes.to_vec();
            out[*hole] = cx.sym(total.floor_div(&known_count))?;
            Ok(out)
        }
        _ => Err(TensorError::Runtime {
            op: cx.name(),
            message: "only one dimension can be inferred".into(),
        }),
    }
}

/// `view`/`reshape(input, size)`.
pub(crate) fn view(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let size_param = cx.op.schema.params[1].name;
    let sizes = cx.ints(size_param)?;
    let sizes = infer_sizes(cx, &x, &sizes)?;
    tensor_out(&x, sizes)
}

/// `view_as`/`reshape_as`/`expand_as(input, other)`: the other's sizes.
pub(crate) fn as_other(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let other = cx.tensor("other")?;
    tensor_out(&x, other.sizes)
}

pub(crate) fn flatten(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    if x.ndim() == 0 {
        return tensor_out(&x, vec![Expr::int(1)]);
    }
    let start = cx.wrap_dim(cx.const_int("start_dim")?, x.ndim())?;
    let end = cx.wrap_dim(cx.const_int("end_dim")?, x.ndim())?;
    if start > end {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: "flatten() has invalid args: start_dim cannot come after end_dim".into(),
        });
    }
    let mut sizes = x.sizes[..start].to_vec();
    sizes.push(cx.sym(numel(&x.sizes[start..=end]))?);
    sizes.extend_from_slice(&x.sizes[end + 1..]);
    tensor_out(&x, sizes)
}

pub(crate) fn unflatten(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let part = TensorMeta::new(vec![x.sizes[dim].clone()], x.dtype);
    let inner = cx.ints("sizes")?;
    let inner = infer_sizes(cx, &part, &inner)?;
    let mut sizes = x.sizes[..dim].to_vec();
    sizes.extend(inner);
    sizes.extend_from_slice(&x.sizes[dim + 1..]);
    tensor_out(&x, sizes)
}

pub(crate) fn squeeze(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let one = Expr::int(1);
    let dims: Vec<usize> = match cx.opt_ints("dim")? {
        None => (0..x.ndim()).collect(),
        Some(d) => d
            .iter()
            .map(|e| {
                let d = e.as_int().ok_or_else(|| cx.bad("dim"))? as i64;
                cx.wrap_dim(d, x.ndim())
            })
            .collect::<Result<_>>()?,
    };
    let mut sizes = Vec::new();
    for (i, s) in x.sizes.iter().enumerate() {
        if !(dims.contains(&i) && cx.equal(s, &one)?) {
            sizes.push(s.clone());
        }
    }
    tensor_out(&x, sizes)
}

pub(crate) fn unsqueeze(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim() + 1)?;
    let mut sizes = x.sizes.clone();
    sizes.insert(dim, Expr::int(1));
    tensor_out(&x, sizes)
}

pub(crate) fn permute(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dims = cx.const_ints("dims")?;
    if dims.len() != x.ndim() {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: format!(
                "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
                x.ndim(),
                dims.len()
            ),
        });
    }
    let sizes = dims
        .iter()
        .map(|&d| Ok(x.sizes[cx.wrap_dim(d, x.ndim())?].clone()))
        .collect::<Result<_>>()?;
    tensor_out(&x, sizes)
}

pub(crate) fn transpose(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let mut sizes = x.sizes.clone();
    if x.ndim() > 0 {
        let a = cx.wrap_dim(cx.const_int("dim0")?, x.ndim())?;
        let b = cx.wrap_dim(cx.const_int("dim1")?, x.ndim())?;
        sizes.swap(a, b);
    }
    tensor_out(&x, sizes)
}

/// `t()`: a matrix transposed (fewer than 2 dims stay).
pub(crate) fn matrix_t(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    if x.ndim() > 2 {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: format!(
                "t() expects a tensor with <= 2 dimensions, but self is {}D",
                x.ndim()
            ),
        });
    }
    tensor_out(&x, x.sizes.iter().rev().cloned().collect())
}

pub(crate) fn expand(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let target = cx.ints("size")?;
    if target.len() < x.ndim() {
        return Err(cx.bad("size"));
    }
    let lead = target.len() - x.ndim();
    let minus_one = Expr::int(-1);
    let one = Expr::int(1);
    let mut sizes = Vec::with_capacity(target.len());
    for (i, t) in target.iter().enumerate() {
        if i < lead {
            sizes.push(t.clone());
            continue;
        }
        let s = &x.sizes[i - lead];
        if *t == minus_one || s == t || !cx.equal(s, &one)? && cx.equal(s, t)? {
            sizes.push(s.clone());
        } else if cx.equal(s, &one)? {
            sizes.push(t.clone());
        } else {
            return Err(cx.bad("an expansion of a non-singleton dimension"));
        }
    }
    tensor_out(&x, sizes)
}

pub(crate) fn narrow(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let mut sizes = x.sizes.clone();
    sizes[dim] = cx.int("length")?;
    tensor_out(&x, sizes)
}

pub(crate) fn select(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let mut sizes = x.sizes.clone();
    sizes.remove(dim);
    tensor_out(&x, sizes)
}

/// Pieces of `size` of `step` each, the last one shorter: their count is
/// decided from the example (a guard), since a graph cannot return a
/// varying number of values.
fn pieces(cx: &mut Ctx<'_>, size: &Expr, step: &Expr) -> Result<Vec<Expr>> {
    let count = cx.sym(
        size.add(step)
            .and_then(|e| e.sub(&Expr::int(1))?.floor_div(step)),
    )?;
    let n = match count.as_int() {
        Some(n) => n as i64,
        None => {
            let n = cx.hint(&count).ok_or_else(|| cx.bad("a split count"))?;
            cx.equal(&count, &Expr::int(n as i128))?;
            n
        }
    };
    let mut out = Vec::with_capacity(n.max(0) as usize);
    for i in 0..n {
        let start = cx.sym(step.mul(&Expr::int(i as i128)))?;
        let left = cx.sym(size.sub(&start))?;
        out.push(if i + 1 < n { step.clone() } else { left });
    }
    Ok(out)
}

fn pieces_out(x: &TensorMeta, dim: usize, lengths: Vec<Expr>) -> MetaOut {
    MetaOut::Tuple(
        lengths
            .into_iter()
            .map(|l| {
                let mut sizes = x.sizes.clone();
                sizes[dim] = l;
                TensorMeta::new(sizes, x.dtype)
            })
            .collect(),
    )
}

pub(crate) fn split(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    // torch.split's name for the sizes, or the method's.
    let sizes = match cx.op.schema.position("split_size") {
        Some(_) => "split_size",
        None => "split_size_or_sections",
    };
    let lengths = match cx.arg(sizes) {
        super::Meta::Ints(v) => v.clone(),
        super::Meta::Value(Value::Ints(v)) => v.iter().map(|&i| Expr::int(i as i128)).collect(),
        _ => {
            let step = cx.int(sizes)?;
            let size = x.sizes[dim].clone();
            pieces(cx, &size, &step)?
        }
    };
    Ok(pieces_out(&x, dim, lengths))
}

pub(crate) fn chunk(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let chunks = cx.int("chunks")?;
    let size = x.sizes[dim].clone();
    // ceil(size / chunks) per piece
    let step = cx.sym(
        size.add(&chunks)
            .and_then(|e| e.sub(&Expr::int(1))?.floor_div(&chunks)),
    )?;
    let lengths = pieces(cx, &size, &step)?;
    Ok(pieces_out(&x, dim, lengths))
}

pub(crate) fn cat(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let ts: Vec<TensorMeta> = cx
        .tensors("tensors")?
        .into_iter()
        .filter(|t| !(t.ndim() == 1 && t.sizes[0] == Expr::int(0)))
        .collect();
    let Some(head) = ts.first().cloned() else {
        return Ok(MetaOut::Tensor(TensorMeta::of(&[0], DType::F32)));
    };
    let dim = cx.wrap_dim(cx.const_int("dim")?, head.ndim())?;
    let mut sizes = head.sizes.clone();
    let mut dtype = head.dtype;
    for t in &ts[1..] {
        if t.ndim() != head.ndim() {
            return Err(cx.bad("tensors of different ranks"));
        }
        for (d, (a, b)) in sizes.iter().zip(&t.sizes).enumerate() {
            if d != dim && !cx.equal(a, b)? {
                let (a, b) = (cx.hint(a).unwrap_or(0), cx.hint(b).unwrap_or(0));
                return Err(TensorError::Runtime {
                    op: cx.name(),
                    message: format!(
                        "Sizes of tensors must match except in dimension {dim}. Expected size {a} but got size {b} for tensor number 1 in the list."
                    ),
                });
            }
        }
        sizes[dim] = cx.sym(sizes[dim].add(&t.sizes[dim]))?;
        dtype = DType::promote(dtype, t.dtype);
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, dtype)))
}

pub(crate) fn stack(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let ts = cx.tensors("tensors")?;
    let Some(head) = ts.first().cloned() else {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: "stack expects a non-empty TensorList".into(),
        });
    };
    let dim = cx.wrap_dim(cx.const_int("dim")?, head.ndim() + 1)?;
    let mut dtype = head.dtype;
    for t in &ts[1..] {
        for (a, b) in head.sizes.iter().zip(&t.sizes) {
            if t.ndim() != head.ndim() || !cx.equal(a, b)? {
                return Err(cx.bad("tensors of different sizes"));
            }
        }
        dtype = DType::promote(dtype, t.dtype);
    }
    let mut sizes = head.sizes.clone();
    sizes.insert(dim, Expr::int(ts.len() as i128));
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, dtype)))
}

pub(crate) fn repeat(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let reps = cx.ints("repeats")?;
    if reps.len() < x.ndim() {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message: "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor".into(),
        });
    }
    let lead = reps.len() - x.ndim();
    let sizes = reps
        .iter()
        .enumerate()
        .map(|(i, r)| match i.checked_sub(lead) {
            Some(j) => cx.sym(x.sizes[j].mul(r)),
            None => Ok(r.clone()),
        })
        .collect::<Result<_>>()?;
    tensor_out(&x, sizes)
}

/// `unbind(input, dim)`: one `select` per index along `dim`, a count the
/// example decides (a guard when symbolic).
pub(crate) fn unbind(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = first(cx)?;
    let dim = cx.wrap_dim(cx.const_int("dim")?, x.ndim())?;
    let size = x.sizes[dim].clone();
    let n = match size.as_int() {
        Some(n) => n as i64,
        None => {
            let n = cx.hint(&size).ok_or_else(|| cx.bad("dim"))?;
            cx.equal(&size, &Expr::int(n as i128))?;
            n
        }
    };
    let mut sizes = x.sizes.clone();
    sizes.remove(dim);
    Ok(MetaOut::Tuple(vec![
        TensorMeta::new(sizes, x.dtype);
        n.max(0) as usize
    ]))
}
