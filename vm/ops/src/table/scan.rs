//! Scans and the reductions PyTorch composes from others: `cumprod`,
//! `cummax`/`cummin`, `logcumsumexp`, `diff`, `aminmax`, `var_mean`/
//! `std_mean`, `nansum`/`nanmean`.

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::ops::extremum::{self, Extremum};
use fxvm_tensor::ops::reduce;
use fxvm_tensor::ops::scan;
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::reduce::variance;
use super::{bin, in_place};
use crate::op::{M, Op, TM, op};
use crate::value::{Or, Value};

/// An in-place scan computes in its tensor's dtype: `dtype=` may only name
/// it (checked after the dim, as PyTorch does).
fn same_dtype_in_place(x: &Tensor, dim: i64, dtype: Option<DType>) -> Result<()> {
    x.dim(dim)?;
    match dtype {
        Some(d) if d != x.dtype() => Err(TensorError::runtime(
            "cumsum_",
            format!(
                "Bad in-place call: input tensor dtype {} and output tensor dtype {} should match",
                x.dtype().type_meta_name(),
                d.type_meta_name()
            ),
        )),
        _ => Ok(()),
    }
}

/// `diff`: `n` rounds of neighbour differences along `dim` (logical xor for
/// bools), after `prepend`/`append` are joined on; composite (written in rows).
fn diff(
    x: &Tensor,
    n: i64,
    dim: i64,
    prepend: Option<Tensor>,
    append: Option<Tensor>,
) -> Result<Tensor> {
    if x.ndim() == 0 {
        return Err(TensorError::runtime(
            "diff",
            "diff expects input to be at least one-dimensional",
        ));
    }
    if n < 0 {
        return Err(TensorError::runtime(
            "diff",
            format!("order must be non-negative but got {n}"),
        ));
    }
    let d = x.dim(dim)?;
    let mut parts = Vec::new();
    parts.extend(prepend);
    parts.push(x.clone());
    parts.extend(append);
    let mut out = if parts.len() > 1 {
        crate::autograd::ops::cat(&parts, d as i64)?
    } else {
        x.clone()
    };
    let op = if out.dtype() == DType::Bool {
        Binary::LogicalXor
    } else {
        Binary::Sub
    };
    for _ in 0..n {
        let len = out.shape()[d] as i64;
        if len == 0 {
            break;
        }
        let hi = crate::autograd::ops::shape::narrow(&out, d as i64, 1, len - 1)?;
        let lo = crate::autograd::ops::shape::narrow(&out, d as i64, 0, len - 1)?;
        out = crate::autograd::ops::ew::binary(op, &hi.into(), &lo.into())?;
    }
    Ok(out)
}

fn nansum(
    x: &Tensor,
    dim: Option<Vec<i64>>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    let zeroed = if x.dtype().is_float() {
        let nan = bin(Binary::Ne, x, x)?;
        ew::where_(&nan, &Arg::Scalar(Scalar::Float(0.0)), &x.into())?
    } else {
        x.clone()
    };
    reduce::sum(&zeroed, dim.as_deref(), keepdim, dtype)
}

fn nanmean(
    x: &Tensor,
    dim: Option<Vec<i64>>,
    keepdim: bool,
    dtype: Option<DType>,
) -> Result<Tensor> {
    if !x.dtype().is_float() {
        return Err(TensorError::not_implemented(format!(
            "nanmean(): expected input to have floating point or complex dtype but got {}",
            fxvm_tensor::error::legacy_name(x.dtype())
        )));
    }
    // Composite: the sum records its history, the count needs none.
    let present = bin(Binary::Eq, x, x)?.to_dtype(x.dtype());
    let count = reduce::sum(&present, dim.as_deref(), keepdim, dtype)?;
    let total = crate::autograd::ops::call(
        "nansum",
        vec![
            Value::Tensor(x.clone()),
            dim.map_or(Value::None, Value::Ints),
            Value::Bool(keepdim),
        ],
        vec![("dtype", dtype.map_or(Value::None, Value::DType))],
    )?;
    crate::autograd::ops::div(&total, &count)
}

type VarianceArgs = (
    Tensor,
    Option<Or<Vec<i64>, bool>>,
    Option<bool>,
    bool,
    Option<Scalar>,
);

/// `var_mean`/`std_mean`: the spread and the mean over the same dims.
fn spread_and_mean(
    (x, dim, unbiased, keepdim, correction): VarianceArgs,
    sqrt: bool,
) -> Result<Value> {
    let dims = match &dim {
        Some(Or::A(d)) => Some(d.clone()),
        _ => None,
    };
    let spread = variance(x.clone(), dim, unbiased, keepdim, correction, sqrt)?;
    let mean = reduce::mean(&x, dims.as_deref(), keepdim, None)?;
    Ok(Value::Tuple(vec![
        Value::Tensor(spread),
        Value::Tensor(mean),
    ]))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "cumprod(Tensor input, int dim, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| scan::cumprod(&x, dim, dtype),
        )
        .grad(crate::derivatives::select::cumprod()),
        op(
            "cumprod_(Tensor(a!) input, int dim, *, ScalarType? dtype=None)",
            M,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| {
                same_dtype_in_place(&x, dim, dtype)?;
                in_place(&x, || scan::cumprod(&x, dim, dtype))
            },
        )
        .grad(crate::derivatives::select::cumprod()),
        op(
            "cumsum_(Tensor(a!) input, int dim, *, ScalarType? dtype=None)",
            M,
            |(x, dim, dtype): (Tensor, i64, Option<DType>)| {
                same_dtype_in_place(&x, dim, dtype)?;
                in_place(&x, || reduce::cumsum(&x, dim, dtype))
            },
        )
        .grad(crate::derivatives::index::cumsum()),
        op(
            "cummax(Tensor input, int dim)",
            TM,
            |(x, dim): (Tensor, i64)| {
                let (v, i) = scan::cumextremum(&x, dim, true)?;
                Ok(Value::ReturnType(
                    "cummax",
                    vec![Value::Tensor(v), Value::Tensor(i)],
                ))
            },
        )
        .grad(crate::derivatives::select::cumulative_extreme("CummaxBackward0")),
        op(
            "cummin(Tensor input, int dim)",
            TM,
            |(x, dim): (Tensor, i64)| {
                let (v, i) = scan::cumextremum(&x, dim, false)?;
                Ok(Value::ReturnType(
                    "cummin",
                    vec![Value::Tensor(v), Value::Tensor(i)],
                ))
            },
        )
        .grad(crate::derivatives::select::cumulative_extreme("CumminBackward0")),
        op(
            "logcumsumexp(Tensor input, int dim)",
            TM,
            |(x, dim): (Tensor, i64)| scan::logcumsumexp(&x, dim),
        )
        .grad(crate::derivatives::index::logcumsumexp()),
        op(
            "diff(Tensor input, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None)",
            TM,
            |(x, n, dim, pre, app): (Tensor, i64, i64, Option<Tensor>, Option<Tensor>)| {
                diff(&x, n, dim, pre, app)
            },
        )
        .composite(),
        op(
            "aminmax(Tensor input, *, int? dim=None, bool keepdim=False)",
            TM,
            |(x, dim, keepdim): (Tensor, Option<i64>, bool)| {
                let dims = dim.map(|d| vec![d]);
                let lo = extremum::extremum(&x, dims.as_deref(), keepdim, Extremum::Min)?;
                let hi = extremum::extremum(&x, dims.as_deref(), keepdim, Extremum::Max)?;
                Ok(Value::ReturnType(
                    "aminmax",
                    vec![Value::Tensor(lo), Value::Tensor(hi)],
                ))
            },
        )
        .grad(crate::derivatives::select::aminmax()),
        op(
            "var_mean(Tensor input, int[]|bool? dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            &[crate::op::Place::Torch],
            |args: VarianceArgs| spread_and_mean(args, false),
        )
        .refuses(&["unbiased", "correction"], &[])
        .refuses(&["unbiased", "keepdim"], &["dim"])
        .grad(crate::derivatives::reduce::variance(false, true)),
        op(
            "std_mean(Tensor input, int[]|bool? dim=None, bool? unbiased=None, bool keepdim=False, *, Scalar? correction=None)",
            &[crate::op::Place::Torch],
            |args: VarianceArgs| spread_and_mean(args, true),
        )
        .refuses(&["unbiased", "correction"], &[])
        .refuses(&["unbiased", "keepdim"], &["dim"])
        .grad(crate::derivatives::reduce::variance(true, true)),
        op(
            "nansum(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, keepdim, dtype): (Tensor, Option<Vec<i64>>, bool, Option<DType>)| {
                nansum(&x, dim, keepdim, dtype)
            },
        )
        .grad(crate::derivatives::select::nansum()),
        op(
            "nanmean(Tensor input, int[]? dim=None, bool keepdim=False, *, ScalarType? dtype=None)",
            TM,
            |(x, dim, keepdim, dtype): (Tensor, Option<Vec<i64>>, bool, Option<DType>)| {
                nanmean(&x, dim, keepdim, dtype)
            },
        )
        .composite(),
    ]
}
