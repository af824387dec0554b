//! Reductions, scans and softmax.

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::ops::extremum::{self, Extremum};
use fxvm_tensor::ops::reduce::{self, SoftmaxKind};
use fxvm_tensor::{DType, Scalar, Tensor};

use crate::meta;
use crate::op::{Op, TM, op};
use crate::value::{Or, Value};

/// `max`/`min`: the whole tensor, along `dim` as a named tuple, or
/// elementwise against another tensor.
fn extremum(
    x: Tensor,
    dim: Option<Or<i64, Tensor>>,
    keepdim: bool,
    which: Extremum,
) -> fxvm_tensor::Result<Value> {
    Ok(match dim {
        None => Value::Tensor(extremum::extremum(&x, None, false, which)?),
        Some(Or::B(other)) => {
            let op = if which == Extremum::Max {
                Binary::Maximum
            } else {
                Binary::Minimum
            };
            Value::Tensor(ew::binary(op, &Arg::Tensor(x), &Arg::Tensor(other))?)
        }
        Some(Or::A(d)) => {
            let (v, i) = extremum::extremum_dim(&x, d, keepdim, which)?;
            let name = if which == Extremum::Max { "max" } else { "min" };
            Value::ReturnType(name, vec![Value::Tensor(v), Value::Tensor(i)])
        }
    })
}

/// `var`/`std`: `unbiased` may arrive positionally in the `dim` slot
/// (`x.var(False)`); `correction` overrides both.
pub(super) fn variance(
    x: Tensor,
    dim: Option<Or<Vec<i64>, bool>>,
    unbiased: Option<bool>,
    keepdim: bool,
    correction: Option<Scalar>,
    sqrt: bool,
) -> fxvm_tensor::Result<Tensor> {
    let (dims, unbiased) = match dim {
        Some(Or::B(u)) => (None, Some(u)),
        Some(Or::A(d)) => (Some(d), unbiased),
        None => (None, unbiased),
    };
    let correction = match (correction, unbiased) {
        (Some(c), _) => c.to_f64(),
        (None, Some(false)) => 0.0,
        _ => 1.0,
    };
    reduce::var(&x, dims.as_deref(), correction, keepdim, sqrt)
}

/// `var` (`sqrt` false) or `std`.
fn variance_row(decl: &'static str, sqrt: bool) -> Op {
    op(
        decl,
        TM,
        move |(x, dim, unbiased, keepdim, correction): (
            Tensor,
            Option<Or<Vec<i64>, bool>>,
            Option<bool>,
            bool,
            Option<Scalar>,
        )| { variance(x, dim, unbiased, keepdim, correction, sqrt) },
    )
    .grad(crate::derivatives::reduce::variance(sqrt, false))
}

pub(crate) fn rows() -> Vec<Op> {
    use Extremum::{Max, Min};
    vec![
        op(
            "sum(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, keepdim, dtype): (Tensor, Option<Vec<i64>>, bool, Option<DType>)| {
                reduce::sum(&x, dim.as_deref(), keepdim, dtype)
            },
        )
        .refuses(&["keepdim"], &["dim"])
        .grad(crate::derivatives::reduce::sum())
        .meta(meta::reduce),
        op(
            "mean(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, keepdim, dtype): (Tensor, Option<Vec<i64>>, bool, Option<DType>)| {
                reduce::mean(&x, dim.as_deref(), keepdim, dtype)
            },
        )
        .refuses(&["keepdim"], &["dim"])
        .grad(crate::derivatives::reduce::mean())
        .meta(meta::reduce),
        op(
            "prod(Tensor input, int? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, keepdim, dtype): (Tensor, Option<i64>, bool, Option<DType>)| {
                reduce::prod(&x, dim.map(|d| vec![d]).as_deref(), keepdim, dtype)
            },
        )
        .refuses(&["keepdim"], &["dim"])
        .grad(crate::derivatives::select::prod())
        .meta(meta::reduce),
        op(
            "max(Tensor input, int|Tensor? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<Or<i64, Tensor>>, bool)| {
                extremum(x, dim, keepdim, Max)
            },
        )
        .refuses(&["keepdim"], &["dim"])
        .grad(crate::derivatives::select::max_min(true)).meta(meta::reduce),
        op(
            "min(Tensor input, int|Tensor? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<Or<i64, Tensor>>, bool)| {
                extremum(x, dim, keepdim, Min)
            },
        )
        .refuses(&["keepdim"], &["dim"])
        .grad(crate::derivatives::select::max_min(false)).meta(meta::reduce),
        op(
            "amax(Tensor input, int[] dim=[], bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Vec<i64>, bool)| {
                extremum::extremum(&x, Some(&dim), keepdim, Max)
            },
        )
        .grad(crate::derivatives::select::amax_amin("AmaxBackward0"))
        .meta(meta::reduce),
        op(
            "amin(Tensor input, int[] dim=[], bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Vec<i64>, bool)| {
                extremum::extremum(&x, Some(&dim), keepdim, Min)
            },
        )
        .grad(crate::derivatives::select::amax_amin("AminBackward0"))
        .meta(meta::reduce),
        op(
            "argmax(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<i64>, bool)| {
                extremum::arg_extremum_dim(&x, dim, keepdim, Max)
            },
        ).meta(meta::reduce),
        op(
            "argmin(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<i64>, bool)| {
                extremum::arg_extremum_dim(&x, dim, keepdim, Min)
            },
        ).meta(meta::reduce),
        variance_row(
            "var(Tensor input, int[]|bool? dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            false,
        )
        .refuses(&["unbiased", "correction"], &[])
        .refuses(&["unbiased", "keepdim"], &["dim"])
        .meta(meta::reduce),
        variance_row(
            "std(Tensor input, int[]|bool? dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            true,
        )
        .refuses(&["unbiased", "correction"], &[])
        .refuses(&["unbiased", "keepdim"], &["dim"])
        .meta(meta::reduce),
        op(
            "norm(Tensor input, Scalar|str? p=None, int[]? dim=None, bool keepdim=False)",
            TM,
            |(x, p, dim, keepdim): (Tensor, Option<Or<Scalar, String>>, Option<Vec<i64>>, bool)| {
                let p = match p {
                    Some(Or::A(p)) => p.to_f64(),
                    Some(Or::B(s)) if s == "fro" => 2.0,
                    Some(Or::B(s)) => {
                        return Err(fxvm_tensor::TensorError::runtime(
                            "norm",
                            format!("norm(): unsupported norm type '{s}'"),
                        ));
                    }
                    None => 2.0,
                };
                reduce::norm(&x, p, dim.as_deref(), keepdim)
            },
        )
        .grad(crate::derivatives::select::vector_norm()).meta(meta::reduce),
        op(
            "all(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<i64>, bool)| {
                reduce::all(&x, dim.map(|d| vec![d]).as_deref(), keepdim)
            },
        )
        // Truth tests only: uint8 stays uint8, to be answered in it.
        .dtype_generic()
        .meta(meta::reduce),
        op(
            "any(Tensor input, int? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<i64>, bool)| {
                reduce::any(&x, dim.map(|d| vec![d]).as_deref(), keepdim)
            },
        )
        // Truth tests only: uint8 stays uint8, to be answered in it.
        .dtype_generic()
        .meta(meta::reduce),
        op(
            "cumsum(Tensor input, int dim, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| reduce::cumsum(&x, dim, dtype),
        )
        .grad(crate::derivatives::index::cumsum())
        .meta(meta::pointwise),
        op(
            "softmax(Tensor input, int dim, ScalarType? dtype=None)",
            TM,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| {
                reduce::softmax(&x, dim, dtype, SoftmaxKind::Softmax)
            },
        ).grad(crate::derivatives::reduce::softmax(false))
        .meta(meta::pointwise),
        op(
            "log_softmax(Tensor input, int dim, ScalarType? dtype=None)",
            TM,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| {
                reduce::softmax(&x, dim, dtype, SoftmaxKind::LogSoftmax)
            },
        ).grad(crate::derivatives::reduce::softmax(true))
        .meta(meta::pointwise),
        op(
            "logsumexp(Tensor input, int[] dim, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Vec<i64>, bool)| reduce::logsumexp(&x, &dim, keepdim),
        )
        .grad(crate::derivatives::select::logsumexp()).meta(meta::reduce),
    ]
}
