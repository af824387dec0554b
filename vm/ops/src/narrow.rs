//! Narrow dtypes in computing ops. PyTorch stores float16/bfloat16 and the
//! 8/16-bit integers narrow but computes them in float32/int32 (its
//! "opmath" types). An op that computes (every family but the dtype-generic
//! ones: views, indexing, conversions, creation) runs that way here: narrow
//! tensor arguments are widened, the kernel runs, results of the compute
//! dtype are stored back narrow, and tensors the op writes into (declared
//! `(a!)`, or returned as an input by an `inplace=True` functional) receive
//! the result.

use fxvm_tensor::dtype::Category;
use fxvm_tensor::{DType, Result, Tensor, TensorError};

use crate::schema::{Schema, Ty};
use crate::value::Value;

/// The narrow dtype a call computes for, if any: its tensors' promoted
/// dtype when that is narrow (dimensioned tensors decide, zero-dim ones
/// only when alone, as in promotion). An explicit `dtype=` argument means
/// the caller chose the result's dtype, so nothing is narrowed back.
fn target(schema: &Schema, values: &[Value]) -> Option<DType> {
    let tensors = || {
        values.iter().flat_map(|v| match v {
            Value::Tensor(t) => std::slice::from_ref(t),
            Value::Tensors(ts) => ts.as_slice(),
            _ => &[],
        })
    };
    // Every op call passes here: the common case leaves without allocating.
    if !tensors().any(|t| t.dtype().is_narrow()) {
        return None;
    }
    let explicit = schema
        .params
        .iter()
        .zip(values)
        .any(|(p, v)| matches!(p.ty, Ty::DType) && matches!(v, Value::DType(_)));
    if explicit {
        return None;
    }
    let dimensioned: Vec<DType> = tensors()
        .filter(|t| t.ndim() > 0)
        .map(|t| t.dtype())
        .collect();
    // Zero-dim tensors decide when alone, or when of a higher category
    // than every dimensioned one (uint8 tensor + float16 0-d is float16).
    let dim_top = dimensioned.iter().map(|d| d.category()).max();
    let zero_dim: Vec<DType> = tensors()
        .filter(|t| t.ndim() == 0)
        .map(|t| t.dtype())
        .filter(|d| dim_top.is_none_or(|top| d.category() > top))
        .collect();
    let deciding = if zero_dim.is_empty() {
        dimensioned
    } else {
        zero_dim
    };
    let top: Category = deciding.iter().map(|d| d.category()).max()?;
    let promoted = deciding
        .into_iter()
        .filter(|d| d.category() == top)
        .reduce(DType::promote)?;
    promoted.is_narrow().then_some(promoted)
}

fn widen(v: &Value) -> Value {
    let wide = |t: &Tensor| t.to_dtype(t.dtype().compute());
    match v {
        Value::Tensor(t) => Value::Tensor(wide(t)),
        Value::Tensors(ts) => Value::Tensors(ts.iter().map(wide).collect()),
        other => other.clone(),
    }
}

fn narrow_back(v: Value, narrow: DType) -> Value {
    match v {
        Value::Tensor(t) => Value::Tensor(t.narrowed_to(narrow)),
        Value::Tensors(ts) => {
            Value::Tensors(ts.into_iter().map(|t| t.narrowed_to(narrow)).collect())
        }
        Value::Tuple(vs) => Value::Tuple(vs.into_iter().map(|v| narrow_back(v, narrow)).collect()),
        Value::ReturnType(name, vs) => Value::ReturnType(
            name,
            vs.into_iter().map(|v| narrow_back(v, narrow)).collect(),
        ),
        other => other,
    }
}

/// Runs `kernel` on `values` as a computing op does (see the module docs).
pub(crate) fn run(
    schema: &Schema,
    values: Vec<Value>,
    kernel: impl FnOnce(Vec<Value>) -> Result<Value>,
) -> Result<Value> {
    let Some(narrow) = target(schema, &values) else {
        return kernel(values);
    };
    let wide: Vec<Value> = values.iter().map(widen).collect();
    // The tensors the op writes into, to copy back after it ran.
    let written: Vec<(Tensor, Tensor)> = schema
        .params
        .iter()
        .zip(values.iter().zip(&wide))
        .filter(|(p, _)| p.mutates)
        .filter_map(|(_, pair)| match pair {
            (Value::Tensor(original), Value::Tensor(widened)) if original.dtype().is_narrow() => {
                Some((original.clone(), widened.clone()))
            }
            _ => None,
        })
        .collect();
    // A functional called with `inplace=True` writes the input it returns.
    let inplace = schema
        .position("inplace")
        .is_some_and(|i| matches!(values[i], Value::Bool(true)));
    // The widened tensors such a call may write, kept past the kernel.
    let kept = inplace.then(|| wide.clone());
    let returned_input = |out: &Value| match (out, &kept) {
        (Value::Input(i), Some(kept)) => match (&values[*i], &kept[*i]) {
            (Value::Tensor(original), Value::Tensor(widened))
                if original.dtype().is_narrow() && !schema.params[*i].mutates =>
            {
                Some((original.clone(), widened.clone()))
            }
            _ => None,
        },
        _ => None,
    };
    // An in-place result that cannot be cast names the tensor as stored.
    let out = kernel(wide).map_err(|e| match (e, written.first()) {
        (TensorError::InplaceCast { from, to }, Some((original, _)))
            if to == original.dtype().compute() =>
        {
            TensorError::InplaceCast {
                from,
                to: original.dtype(),
            }
        }
        (e, _) => e,
    })?;
    for (original, widened) in written.iter().chain(returned_input(&out).as_ref()) {
        original.copy_from(widened)?;
    }
    Ok(narrow_back(out, narrow))
}
