//! Orderings along a dim: sorting, top-k, order statistics.

use fxvm_tensor::ops::sort::{self, Median};
use fxvm_tensor::{Result, Tensor};

use crate::meta;
use crate::op::{Op, TM, op};
use crate::value::Value;

/// A `(values, indices)` pair as the named tuple `torch.return_types.<name>`.
fn named(name: &'static str, (values, indices): (Tensor, Tensor)) -> Value {
    Value::ReturnType(name, vec![Value::Tensor(values), Value::Tensor(indices)])
}

/// `median`/`nanmedian`: one value over everything, or per slice with indices.
fn median_row(decl: &'static str, which: Median, name: &'static str) -> Op {
    op(
        decl,
        TM,
        move |(x, dim, keepdim): (Tensor, Option<i64>, bool)| -> Result<Value> {
            Ok(match dim {
                None => Value::Tensor(sort::median(&x, which)?),
                Some(d) => named(name, sort::median_dim(&x, d, keepdim, which)?),
            })
        },
    )
    .grad(crate::derivatives::select::median(name))
    .kernel_dtypes("median_cpu", crate::kernels::NOT_BOOL)
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "sort(Tensor input, int dim=-1, bool descending=False, *, bool? stable=False)",
            TM,
            |(x, dim, descending, stable): (Tensor, i64, bool, Option<bool>)| {
                sort::sort(&x, dim, descending, stable.unwrap_or(false)).map(|r| named("sort", r))
            },
        )
        .grad(crate::derivatives::select::picked(
            "SortBackward0".into(),
            1,
            None,
        ))
        .meta(meta::like_first),
        op(
            "argsort(Tensor input, int dim=-1, bool descending=False, *, bool stable=False)",
            TM,
            |(x, dim, descending, stable): (Tensor, i64, bool, bool)| {
                sort::sort(&x, dim, descending, stable).map(|(_, i)| i)
            },
        )
        .meta(meta::like_first),
        op("msort(Tensor input)", TM, |(x,): (Tensor,)| {
            // Composite: `sort(x, 0)`'s values, with its history.
            match crate::autograd::ops::call_value(
                "sort",
                vec![Value::Tensor(x), Value::Int(0)],
                vec![],
            )? {
                Value::ReturnType(_, mut items) => Ok(items.swap_remove(0)),
                other => Ok(other),
            }
        })
        .composite(),
        op(
            "topk(Tensor input, int k, int dim=-1, bool largest=True, bool sorted=True)",
            TM,
            |(x, k, dim, largest, sorted): (Tensor, i64, i64, bool, bool)| {
                sort::topk(&x, k, dim, largest, sorted).map(|r| named("topk", r))
            },
        )
        .grad(crate::derivatives::select::picked(
            "TopkBackward0".into(),
            2,
            None,
        ))
        .meta(meta::topk),
        op(
            "kthvalue(Tensor input, int k, int dim=-1, bool keepdim=False)",
            TM,
            |(x, k, dim, keepdim): (Tensor, i64, i64, bool)| {
                sort::kthvalue(&x, k, dim, keepdim).map(|r| named("kthvalue", r))
            },
        )
        .kernel_dtypes("kthvalue_cpu", crate::kernels::NOT_BOOL)
        .grad(crate::derivatives::select::picked(
            "KthvalueBackward0".into(),
            2,
            Some(3),
        )),
        median_row(
            "median(Tensor input, int? dim=None, bool keepdim=False)",
            Median::Median,
            "median",
        )
        .refuses(&["keepdim"], &["dim"]),
        median_row(
            "nanmedian(Tensor input, int? dim=None, bool keepdim=False)",
            Median::NanMedian,
            "nanmedian",
        )
        .refuses(&["keepdim"], &["dim"]),
    ]
}
