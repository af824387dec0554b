//! The rows, by family. Each op is declared here once.

// A kernel's parameter tuple mirrors its schema, one type per parameter;
// naming each tuple would only move the list away from its declaration.
#![allow(clippy::type_complexity)]

mod activation;
mod aten;
mod convert;
mod counting;
mod create;
mod elementwise;
mod index;
mod joins;
mod linalg;
mod loss;
mod margin;
mod nn;
mod optim;
mod pointwise;
mod random;
mod reduce;
mod rnn;
mod sampling;
mod scan;
mod shape;
mod sort;

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary};
use fxvm_tensor::{Result, Tensor};

use crate::op::Op;
use crate::value::Value;

pub(crate) fn all() -> Vec<Op> {
    // Views, indexing, conversions and creation take every dtype as stored.
    // Conversions pass the gradient through (the engine casts it back);
    // creation and sampling make tensors that never require grad.
    let convert = convert::rows().into_iter().map(|op| match op.name() {
        "promote_types" | "can_cast" | "result_type" => op.nondiff(),
        _ => op.grad(crate::derivatives::shape::identity("ToCopyBackward0")),
    });
    let created = create::rows().into_iter().map(Op::nondiff);
    let sampled = random::rows().into_iter().map(|op| {
        if op.derivative().is_some() {
            op
        } else {
            op.nondiff()
        }
    });
    let generic = [shape::rows(), joins::rows(), index::rows()]
        .into_iter()
        .flatten()
        .chain(convert)
        .chain(created)
        .map(Op::dtype_generic);
    let rows = [
        reduce::rows(),
        linalg::rows(),
        sort::rows(),
        counting::rows(),
        sampled.collect(),
        elementwise::rows(),
        pointwise::rows(),
        nn::rows(),
        loss::rows(),
        margin::rows(),
        rnn::rows(),
        sampling::rows(),
        scan::rows(),
        activation::rows(),
        aten::rows(),
        optim::rows(),
    ]
    .into_iter()
    .flatten()
    .chain(generic);
    rows.map(|op| {
        if op.derivative().is_none() && INDICES_AND_MASKS.contains(&op.name()) {
            op.nondiff()
        } else {
            op
        }
    })
    .collect()
}

/// Rows whose outputs are indices, masks, counts or flags: never
/// differentiable.
const INDICES_AND_MASKS: &[&str] = &[
    "argmax",
    "argmin",
    "argsort",
    "argwhere",
    "nonzero",
    "count_nonzero",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "isfinite",
    "isreal",
    "signbit",
    "isclose",
    "allclose",
    "equal",
    "all",
    "any",
    "logical_not",
    "logical_not_",
    "bitwise_not",
    "bitwise_not_",
    "bincount",
    "histc",
    "unique",
    "unique_consecutive",
    "isin",
    "bucketize",
    "searchsorted",
    "tril_indices",
    "triu_indices",
];

/// An in-place op: refuses an `x` whose elements share memory (an
/// expanded view) before computing — PyTorch's iterator checks that first,
/// before the kernel's dtype — then stores the result into `x` and returns
/// `x` itself.
fn in_place(x: &Tensor, result: impl FnOnce() -> Result<Tensor>) -> Result<Value> {
    x.check_writable()?;
    x.assign(&result()?)?;
    Ok(Value::Input(0))
}

/// An indexing op's end: stores `result` into `x` and returns `x` itself —
/// its arguments (indices, sizes) are checked before the write is, as
/// PyTorch's indexing kernels check them before an expanded `x`.
fn written_back(x: &Tensor, result: Result<Tensor>) -> Result<Value> {
    x.assign(&result?)?;
    Ok(Value::Input(0))
}

/// A fill's end (`masked_fill_`, `index_fill_`, `tril_`): as [`in_place`],
/// but an expanded `x` is written as PyTorch still allows for fills.
pub(super) fn fill_in_place(x: &Tensor, result: Result<Tensor>) -> Result<Value> {
    x.assign_fill(&result?)?;
    Ok(Value::Input(0))
}

/// `u` of `x` written into `x` (see `ew::unary_`), returning `x` itself.
fn unary_in_place(x: &Tensor, u: ew::Unary) -> Result<Value> {
    ew::unary_(u, x)?;
    Ok(Value::Input(0))
}

/// `inplace=True` stores into `x`; otherwise the result is a new tensor.
fn maybe_in_place(
    x: &Tensor,
    result: impl FnOnce() -> Result<Tensor>,
    inplace: bool,
) -> Result<Value> {
    if inplace {
        in_place(x, result)
    } else {
        result().map(Value::Tensor)
    }
}

/// A binary op over tensors and numbers, for compositions.
fn bin(op: Binary, a: impl Into<Arg>, b: impl Into<Arg>) -> Result<Tensor> {
    ew::binary(op, &a.into(), &b.into())
}
