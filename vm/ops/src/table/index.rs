//! Selection, masking, scatter/gather and in-place fills.

use fxvm_tensor::ops::index::{self, ScatterReduce, ScatterSrc};
use fxvm_tensor::ops::index_dim;
use fxvm_tensor::ops::subscript::{self, Index};
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::{fill_in_place, written_back};
use crate::meta;
use crate::op::{M, Op, TM, op};
use crate::value::{Or, Value};

/// `index_fill`'s value: a number or a 0-d tensor holding one.
fn fill_value(value: Or<Tensor, Scalar>) -> Result<Scalar> {
    match value {
        Or::B(v) => Ok(v),
        Or::A(t) if t.ndim() == 0 => t.item(),
        Or::A(t) => Err(TensorError::runtime(
            "index_fill",
            format!(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                t.ndim()
            ),
        )),
    }
}

fn scatter_src(src: Or<Tensor, Scalar>) -> ScatterSrc {
    match src {
        Or::A(t) => ScatterSrc::Tensor(t),
        Or::B(s) => ScatterSrc::Scalar(s),
    }
}

/// `index_put`: a copy of `x` with `x[indices] = values` (or `+=`).
fn index_put(
    x: &Tensor,
    indices: Vec<Tensor>,
    values: &Tensor,
    accumulate: bool,
) -> Result<Tensor> {
    let out = x.copy();
    let items: Vec<Index> = indices.into_iter().map(Index::Tensor).collect();
    subscript::put(&out, &items, values, accumulate)?;
    Ok(out)
}

/// `nonzero(as_tuple=True)`: one coordinate vector per dim (a 0-d input
/// counts as one element).
fn nonzero_tuple(x: &Tensor) -> Result<Value> {
    let x = if x.ndim() == 0 {
        x.with_layout(fxvm_tensor::layout::Layout::contiguous(&[1]))
    } else {
        x.clone()
    };
    let coords = index::nonzero(&x);
    (0..x.ndim() as i64)
        .map(|d| {
            Ok(Value::Tensor(
                fxvm_tensor::ops::shape::select(&coords, 1, d)?.contiguous(),
            ))
        })
        .collect::<Result<Vec<_>>>()
        .map(Value::Tuple)
}

type ScatterReduceArgs = (Tensor, i64, Tensor, Tensor, String, bool);

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "index_add(Tensor input, int dim, Tensor index, Tensor source, *, Scalar alpha=1)",
            TM,
            |(x, dim, i, src, alpha): (Tensor, i64, Tensor, Tensor, Scalar)| {
                index_dim::index_add(&x, dim, &i, &src, alpha)
            },
        )
        .grad(crate::derivatives::index::index_add()),
        op(
            "index_add_(Tensor(a!) input, int dim, Tensor index, Tensor source, *, Scalar alpha=1)",
            M,
            |(x, dim, i, src, alpha): (Tensor, i64, Tensor, Tensor, Scalar)| {
                written_back(&x, index_dim::index_add(&x, dim, &i, &src, alpha))
            },
        )
        .grad(crate::derivatives::index::index_add()),
        op(
            "index_copy(Tensor input, int dim, Tensor index, Tensor source)",
            TM,
            |(x, dim, i, src): (Tensor, i64, Tensor, Tensor)| {
                index_dim::index_copy(&x, dim, &i, &src)
            },
        )
        .grad(crate::derivatives::index::index_copy()),
        op(
            "index_copy_(Tensor(a!) input, int dim, Tensor index, Tensor source)",
            M,
            |(x, dim, i, src): (Tensor, i64, Tensor, Tensor)| {
                written_back(&x, index_dim::index_copy(&x, dim, &i, &src))
            },
        )
        .grad(crate::derivatives::index::index_copy()),
        op(
            "index_fill(Tensor input, int dim, Tensor index, Tensor|Scalar value)",
            TM,
            |(x, dim, i, v): (Tensor, i64, Tensor, Or<Tensor, Scalar>)| {
                index_dim::index_fill(&x, dim, &i, fill_value(v)?)
            },
        )
        .grad(crate::derivatives::index::index_fill()),
        op(
            "index_fill_(Tensor(a!) input, int dim, Tensor index, Tensor|Scalar value)",
            M,
            |(x, dim, i, v): (Tensor, i64, Tensor, Or<Tensor, Scalar>)| {
                let value = fill_value(v)?;
                fill_in_place(&x, index_dim::index_fill(&x, dim, &i, value))
            },
        )
        .grad(crate::derivatives::index::index_fill()),
        op(
            "index_put(Tensor input, Tensor[] indices, Tensor values, bool accumulate=False)",
            TM,
            |(x, indices, v, acc): (Tensor, Vec<Tensor>, Tensor, bool)| {
                index_put(&x, indices, &v, acc)
            },
        )
        .grad(crate::derivatives::index::index_put()),
        op(
            "index_put_(Tensor(a!) input, Tensor[] indices, Tensor values, bool accumulate=False)",
            TM,
            |(x, indices, v, acc): (Tensor, Vec<Tensor>, Tensor, bool)| -> Result<Value> {
                let items: Vec<Index> = indices.into_iter().map(Index::Tensor).collect();
                subscript::put(&x, &items, &v, acc)?;
                Ok(Value::Input(0))
            },
        )
        .grad(crate::derivatives::index::index_put()),
        op(
            "scatter_(Tensor(a!) input, int dim, Tensor index, Tensor|Scalar src, *, str? reduce=None)",
            M,
            |(x, dim, i, src, reduce): (
                Tensor,
                i64,
                Tensor,
                Or<Tensor, Scalar>,
                Option<String>,
            )| {
                written_back(
                    &x,
                    index::scatter(&x, dim, &i, scatter_src(src), reduce.as_deref()),
                )
            },
        )
        .grad(crate::derivatives::index::scatter()),
        op(
            "scatter_add(Tensor input, int dim, Tensor index, Tensor src)",
            TM,
            |(x, dim, i, src): (Tensor, i64, Tensor, Tensor)| {
                index::scatter_reduce(&x, dim, &i, &src, ScatterReduce::Sum, true)
            },
        )
        .grad(crate::derivatives::index::scatter_add()),
        op(
            "scatter_add_(Tensor(a!) input, int dim, Tensor index, Tensor src)",
            M,
            |(x, dim, i, src): (Tensor, i64, Tensor, Tensor)| {
                written_back(
                    &x,
                    index::scatter_reduce(&x, dim, &i, &src, ScatterReduce::Sum, true),
                )
            },
        )
        .grad(crate::derivatives::index::scatter_add()),
        op(
            "scatter_reduce(Tensor input, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True)",
            TM,
            |(x, dim, i, src, reduce, include_self): ScatterReduceArgs| {
                index::scatter_reduce(
                    &x,
                    dim,
                    &i,
                    &src,
                    ScatterReduce::parse(&reduce)?,
                    include_self,
                )
            },
        )
        .grad(crate::derivatives::index::scatter_reduce()),
        op(
            "scatter_reduce_(Tensor(a!) input, int dim, Tensor index, Tensor src, str reduce, *, bool include_self=True)",
            M,
            |(x, dim, i, src, reduce, include_self): ScatterReduceArgs| {
                let reduce = ScatterReduce::parse(&reduce)?;
                written_back(
                    &x,
                    index::scatter_reduce(&x, dim, &i, &src, reduce, include_self),
                )
            },
        )
        .grad(crate::derivatives::index::scatter_reduce()),
        op(
            "nonzero(Tensor input, *, bool as_tuple=False)",
            TM,
            |(x, as_tuple): (Tensor, bool)| {
                if as_tuple {
                    nonzero_tuple(&x)
                } else {
                    Ok(Value::Tensor(index::nonzero(&x)))
                }
            },
        ),
        op("argwhere(Tensor input)", TM, |(x,): (Tensor,)| {
            Ok(index::nonzero(&x))
        }),
        op(
            "count_nonzero(Tensor input, int[]? dim=None)",
            TM,
            |(x, dim): (Tensor, Option<Vec<i64>>)| {
                let flags = x.to_dtype(DType::Bool).to_dtype(DType::I64);
                fxvm_tensor::ops::reduce::sum(
                    &flags,
                    Some(dim.as_deref().unwrap_or(&[])),
                    false,
                    None,
                )
            },
        ),
        op(
            "take(Tensor input, Tensor index)",
            TM,
            |(x, i): (Tensor, Tensor)| index::take(&x, &i),
        )
        .grad(crate::derivatives::index::take()),
        op(
            "put(Tensor input, Tensor index, Tensor source, bool accumulate=False)",
            TM,
            |(x, i, src, acc): (Tensor, Tensor, Tensor, bool)| index::put(&x, &i, &src, acc),
        )
        .grad(crate::derivatives::index::put()),
        op(
            "put_(Tensor(a!) input, Tensor index, Tensor source, bool accumulate=False)",
            M,
            |(x, i, src, acc): (Tensor, Tensor, Tensor, bool)| {
                written_back(&x, index::put(&x, &i, &src, acc))
            },
        )
        .grad(crate::derivatives::index::put()),
        op(
            "masked_scatter(Tensor input, Tensor mask, Tensor source)",
            TM,
            |(x, mask, src): (Tensor, Tensor, Tensor)| index::masked_scatter(&x, &mask, &src),
        )
        .grad(crate::derivatives::index::masked_scatter()),
        op(
            "masked_scatter_(Tensor(a!) input, Tensor mask, Tensor source)",
            M,
            |(x, mask, src): (Tensor, Tensor, Tensor)| {
                written_back(&x, index::masked_scatter(&x, &mask, &src))
            },
        )
        .grad(crate::derivatives::index::masked_scatter()),
        op(
            "masked_fill(Tensor input, Tensor mask, Scalar value)",
            TM,
            |(x, mask, v): (Tensor, Tensor, Scalar)| index::masked_fill(&x, &mask, v),
        )
        .grad(crate::derivatives::index::masked_fill())
        .meta(meta::pointwise),
        op(
            "masked_fill_(Tensor(a!) input, Tensor mask, Scalar value)",
            M,
            |(x, mask, v): (Tensor, Tensor, Scalar)| fill_in_place(&x, index::masked_fill(&x, &mask, v)),
        )
        .grad(crate::derivatives::index::masked_fill())
        .meta(meta::pointwise),
        op(
            "tril(Tensor input, int diagonal=0)",
            TM,
            |(x, d): (Tensor, i64)| index::triangle(&x, d, true),
        )
        .grad(crate::derivatives::index::triangle("TrilBackward0", "tril"))
        .meta(meta::same),
        op(
            "triu(Tensor input, int diagonal=0)",
            TM,
            |(x, d): (Tensor, i64)| index::triangle(&x, d, false),
        )
        .grad(crate::derivatives::index::triangle("TriuBackward0", "triu"))
        .meta(meta::same),
        op(
            "tril_(Tensor(a!) input, int diagonal=0)",
            M,
            |(x, d): (Tensor, i64)| fill_in_place(&x, index::triangle(&x, d, true)),
        )
        .grad(crate::derivatives::index::triangle("TrilBackward0", "tril"))
        .meta(meta::same),
        op(
            "triu_(Tensor(a!) input, int diagonal=0)",
            M,
            |(x, d): (Tensor, i64)| fill_in_place(&x, index::triangle(&x, d, false)),
        )
        .grad(crate::derivatives::index::triangle("TriuBackward0", "triu"))
        .meta(meta::same),
        op(
            "equal(Tensor input, Tensor other)",
            TM,
            |(x, y): (Tensor, Tensor)| -> Result<bool> {
                Ok(x.shape() == y.shape() && x.to_vec::<f64>() == y.to_vec::<f64>())
            },
        ),
        op(
            "masked_select(Tensor input, Tensor mask)",
            TM,
            |(x, mask): (Tensor, Tensor)| index::masked_select(&x, &mask),
        )
        .grad(crate::derivatives::index::masked_select()),
        op(
            "gather(Tensor input, int dim, Tensor index)",
            TM,
            |(x, dim, i): (Tensor, i64, Tensor)| index::gather(&x, dim, &i),
        )
        .grad(crate::derivatives::index::put_back(
            "GatherBackward0",
            "scatter_add",
        ))
        .meta(meta::gather),
        op(
            "scatter(Tensor input, int dim, Tensor index, Tensor|Scalar src, *, str? reduce=None)",
            TM,
            |(x, dim, i, src, reduce): (
                Tensor,
                i64,
                Tensor,
                Or<Tensor, Scalar>,
                Option<String>,
            )| { index::scatter(&x, dim, &i, scatter_src(src), reduce.as_deref()) },
        )
        .grad(crate::derivatives::index::scatter()),
        op(
            "index_select(Tensor input, int dim, Tensor index)",
            TM,
            |(x, dim, i): (Tensor, i64, Tensor)| index::index_select(&x, dim, &i),
        )
        .grad(crate::derivatives::index::put_back(
            "IndexSelectBackward0",
            "index_add",
        ))
        .meta(meta::index_select),
        op(
            // PyTorch's parser names the source `other` (its docs say `src`).
            "copy_(Tensor(a!) input, Tensor other)",
            M,
            |(x, src): (Tensor, Tensor)| -> Result<Value> {
                x.copy_from(&src)?;
                Ok(Value::Input(0))
            },
        )
        .grad(crate::derivatives::index::overwrite("CopyBackwards")),
        op(
            "fill_(Tensor(a!) input, Scalar value)",
            M,
            |(x, v): (Tensor, Scalar)| -> Result<Value> {
                x.fill(Tensor::fill_value(v, x.dtype())?);
                Ok(Value::Input(0))
            },
        )
        .grad(crate::derivatives::index::overwrite("FillBackward2"))
        .meta(meta::pointwise),
        op(
            "zero_(Tensor(a!) input)",
            M,
            |(x,): (Tensor,)| -> Result<Value> {
                x.fill(Scalar::Int(0));
                Ok(Value::Input(0))
            },
        )
        .grad(crate::derivatives::index::overwrite("ZeroBackward0"))
        .meta(meta::pointwise),
    ]
}
