//! Registry rows as typed Rust functions, for formulas and the engine:
//! each call goes through the row (so it records when grad mode is on).

use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use crate::op::{Op, Place};
use crate::value::Value;

/// The row `torch.<name>` (else `Tensor.<name>`, `F.<name>`, or the
/// builtin of `torch._C._nn`) calls.
fn row(name: &str) -> &'static Op {
    let r = crate::registry();
    r.named(name)
        .find(|op| op.places.iter().any(|p| p.is_torch()))
        .or_else(|| r.named(name).find(|op| op.places.contains(&Place::Method)))
        .or_else(|| r.functional(name))
        .or_else(|| r.named(name).next())
        .unwrap_or_else(|| panic!("no registry row {name}"))
}

fn tensor(v: Value) -> Result<Tensor> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(TensorError::runtime(
            "backward",
            format!("expected a tensor, got {}", other.type_name()),
        )),
    }
}

/// Calls `torch.nn.functional.<name>`'s row (where `torch.<name>` differs,
/// as `unfold`).
pub fn call_functional(name: &str, positional: Vec<Value>) -> Result<Tensor> {
    let op = crate::registry()
        .functional(name)
        .unwrap_or_else(|| panic!("no functional row {name}"));
    tensor(op.call(positional, vec![])?)
}

/// Calls row `name` and returns what it returns.
pub fn call_value(
    name: &str,
    positional: Vec<Value>,
    keywords: Vec<(&str, Value)>,
) -> Result<Value> {
    row(name).call(positional, keywords)
}

/// Calls row `name` and returns its tensor.
pub fn call(name: &str, positional: Vec<Value>, keywords: Vec<(&str, Value)>) -> Result<Tensor> {
    tensor(row(name).call(positional, keywords)?)
}

/// A tensor as a row's argument.
pub fn value(x: &Tensor) -> Value {
    Value::Tensor(x.clone())
}

fn s(x: f64) -> Value {
    Value::Scalar(Scalar::Float(x))
}

fn ints(v: &[usize]) -> Value {
    Value::Ints(v.iter().map(|&d| d as i64).collect())
}

pub fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("add", vec![value(a), value(b)], vec![])
}

pub fn sub(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("sub", vec![value(a), value(b)], vec![])
}

pub fn mul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("mul", vec![value(a), value(b)], vec![])
}

pub fn div(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("div", vec![value(a), value(b)], vec![])
}

pub fn add_s(a: &Tensor, b: f64) -> Result<Tensor> {
    call("add", vec![value(a), s(b)], vec![])
}

pub fn mul_s(a: &Tensor, b: f64) -> Result<Tensor> {
    call("mul", vec![value(a), s(b)], vec![])
}

/// `a * b` where `b` is a number as given (an int stays exact).
pub fn mul_scalar(a: &Tensor, b: Scalar) -> Result<Tensor> {
    call("mul", vec![value(a), Value::Scalar(b)], vec![])
}

pub fn pow_s(a: &Tensor, e: f64) -> Result<Tensor> {
    call("pow", vec![value(a), s(e)], vec![])
}

pub fn unary(name: &str, a: &Tensor) -> Result<Tensor> {
    call(name, vec![value(a)], vec![])
}

pub fn neg(a: &Tensor) -> Result<Tensor> {
    unary("neg", a)
}

/// `where(cond, a, b)`.
pub fn select_where(cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("where", vec![value(cond), value(a), value(b)], vec![])
}

/// `where(cond, a, 0)`.
pub fn mask(cond: &Tensor, a: &Tensor) -> Result<Tensor> {
    call(
        "where",
        vec![value(cond), value(a), Value::Scalar(Scalar::Int(0))],
        vec![],
    )
}

/// A comparison with a number (`gt`, `lt`, …).
pub fn cmp_s(name: &str, a: &Tensor, b: f64) -> Result<Tensor> {
    call(name, vec![value(a), s(b)], vec![])
}

pub fn mm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("mm", vec![value(a), value(b)], vec![])
}

pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("matmul", vec![value(a), value(b)], vec![])
}

pub fn bmm(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    call("bmm", vec![value(a), value(b)], vec![])
}

pub fn transpose(a: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
    call(
        "transpose",
        vec![value(a), Value::Int(d0), Value::Int(d1)],
        vec![],
    )
}

pub fn mt(a: &Tensor) -> Result<Tensor> {
    transpose(a, -2, -1)
}

pub fn permute(a: &Tensor, dims: &[i64]) -> Result<Tensor> {
    call(
        "permute",
        vec![value(a), Value::Ints(dims.to_vec())],
        vec![],
    )
}

pub fn reshape(a: &Tensor, shape: &[usize]) -> Result<Tensor> {
    call("reshape", vec![value(a), ints(shape)], vec![])
}

pub fn expand(a: &Tensor, shape: &[usize]) -> Result<Tensor> {
    call("expand", vec![value(a), ints(shape)], vec![])
}

pub fn unsqueeze(a: &Tensor, dim: i64) -> Result<Tensor> {
    call("unsqueeze", vec![value(a), Value::Int(dim)], vec![])
}

/// Sum over `dims` (all when empty).
pub fn sum(a: &Tensor, dims: &[i64], keepdim: bool) -> Result<Tensor> {
    let dims = if dims.is_empty() {
        Value::None
    } else {
        Value::Ints(dims.to_vec())
    };
    call("sum", vec![value(a), dims, Value::Bool(keepdim)], vec![])
}

/// `g` summed down to `shape` (the inverse of broadcasting to `g`'s shape).
pub fn sum_to(g: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let lead = g.ndim() - shape.len();
    let dims: Vec<i64> = (0..g.ndim())
        .filter(|&d| d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1))
        .map(|d| d as i64)
        .collect();
    if dims.is_empty() {
        return reshape(g, shape);
    }
    reshape(&sum(g, &dims, true)?, shape)
}

pub fn to_dtype(a: &Tensor, dtype: DType) -> Result<Tensor> {
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    call("to", vec![value(a), Value::DType(dtype)], vec![])
}

/// A dense row-major copy (`clone(memory_format=torch.contiguous_format)`).
pub fn contiguous_copy(a: &Tensor) -> Result<Tensor> {
    call(
        "clone",
        vec![value(a)],
        vec![(
            "memory_format",
            Value::MemoryFormat(fxvm_tensor::layout::MemoryFormat::Contiguous),
        )],
    )
}

/// `dst.copy_(src)`.
pub fn copy_into(dst: &Tensor, src: &Tensor) -> Result<()> {
    call_value("copy_", vec![value(dst), value(src)], vec![]).map(drop)
}

/// Zeros (through the `full` row, so a recorded step makes them anew).
pub fn zeros(shape: &[usize], dtype: DType) -> Result<Tensor> {
    full(shape, Scalar::Int(0), dtype)
}

/// `shape` filled with `value` (the `full` row).
pub fn full(shape: &[usize], value: Scalar, dtype: DType) -> Result<Tensor> {
    let size = shape.iter().map(|&n| n as i64).collect();
    call(
        "full",
        vec![Value::Ints(size), Value::Scalar(value)],
        vec![("dtype", Value::DType(dtype))],
    )
}

pub fn cat(items: &[Tensor], dim: i64) -> Result<Tensor> {
    call(
        "cat",
        vec![Value::Tensors(items.to_vec()), Value::Int(dim)],
        vec![],
    )
}

pub fn narrow(a: &Tensor, dim: i64, start: usize, len: usize) -> Result<Tensor> {
    call(
        "narrow",
        vec![
            value(a),
            Value::Int(dim),
            Value::Int(start as i64),
            Value::Int(len as i64),
        ],
        vec![],
    )
}

/// The core's view and join functions with its signatures, called through
/// their rows: a composite row's kernel written with these records its
/// history as it runs.
pub mod shape {
    use super::{Value, call, value};
    use fxvm_tensor::{Result, Tensor};

    pub fn reshape(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
        call(
            "reshape",
            vec![value(x), Value::Ints(shape.to_vec())],
            vec![],
        )
    }

    pub fn expand(x: &Tensor, shape: &[i64]) -> Result<Tensor> {
        call(
            "expand",
            vec![value(x), Value::Ints(shape.to_vec())],
            vec![],
        )
    }

    pub fn permute(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
        call(
            "permute",
            vec![value(x), Value::Ints(dims.to_vec())],
            vec![],
        )
    }

    pub fn transpose(x: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
        super::transpose(x, d0, d1)
    }

    pub fn repeat(x: &Tensor, repeats: &[i64]) -> Result<Tensor> {
        call(
            "repeat",
            vec![value(x), Value::Ints(repeats.to_vec())],
            vec![],
        )
    }

    pub fn narrow(x: &Tensor, dim: i64, start: i64, len: i64) -> Result<Tensor> {
        call(
            "narrow",
            vec![
                value(x),
                Value::Int(dim),
                Value::Int(start),
                Value::Int(len),
            ],
            vec![],
        )
    }

    pub fn cat(items: &[Tensor], dim: i64) -> Result<Tensor> {
        super::cat(items, dim)
    }

    pub fn stack(items: &[Tensor], dim: i64) -> Result<Tensor> {
        call(
            "stack",
            vec![Value::Tensors(items.to_vec()), Value::Int(dim)],
            vec![],
        )
    }
}

/// The `p`-norm over `dims` (all when `None`).
pub fn norm(a: &Tensor, p: f64, dims: Option<&[i64]>, keepdim: bool) -> Result<Tensor> {
    call(
        "norm",
        vec![
            value(a),
            s(p),
            dims.map_or(Value::None, |d| Value::Ints(d.to_vec())),
            Value::Bool(keepdim),
        ],
        vec![],
    )
}

pub fn clamp_min(a: &Tensor, lo: f64) -> Result<Tensor> {
    call("clamp_min", vec![value(a), s(lo)], vec![])
}

/// The core's elementwise functions with its signatures, called through
/// their rows (see [`shape`]).
pub mod ew {
    use super::{Value, call, value};
    use fxvm_tensor::ops::elementwise::{Arg, Binary, Unary};
    use fxvm_tensor::{Result, Scalar, Tensor};

    fn arg(a: &Arg) -> Value {
        match a {
            Arg::Tensor(x) => value(x),
            Arg::Scalar(s) => Value::Scalar(*s),
        }
    }

    /// `a op b`; a number first is put where the rows take it (as
    /// Python's reflected operators do: `s - x` is `rsub`, `s / x` is
    /// `reciprocal(x) * s`).
    pub fn binary(op: Binary, a: &Arg, b: &Arg) -> Result<Tensor> {
        let (Arg::Scalar(s), Arg::Tensor(x)) = (a, b) else {
            return call(op.name(), vec![arg(a), arg(b)], vec![]);
        };
        let (x, s) = (value(x), Value::Scalar(*s));
        match op {
            Binary::Add
            | Binary::Mul
            | Binary::Eq
            | Binary::Ne
            | Binary::Maximum
            | Binary::Minimum => call(op.name(), vec![x, s], vec![]),
            Binary::Lt => call("gt", vec![x, s], vec![]),
            Binary::Gt => call("lt", vec![x, s], vec![]),
            Binary::Le => call("ge", vec![x, s], vec![]),
            Binary::Ge => call("le", vec![x, s], vec![]),
            Binary::Sub => call("rsub", vec![x, s], vec![]),
            Binary::Div => {
                let r = call("reciprocal", vec![x], vec![])?;
                call("mul", vec![value(&r), s], vec![])
            }
            _ => call(op.name(), vec![s, x], vec![]),
        }
    }

    pub fn unary(op: Unary, x: &Tensor) -> Result<Tensor> {
        call(op.name(), vec![value(x)], vec![])
    }

    pub fn clamp(x: &Tensor, lo: Option<Scalar>, hi: Option<Scalar>) -> Result<Tensor> {
        let bound = |b: Option<Scalar>| b.map_or(Value::None, Value::Scalar);
        call("clamp", vec![value(x), bound(lo), bound(hi)], vec![])
    }

    pub fn where_(cond: &Tensor, a: &Arg, b: &Arg) -> Result<Tensor> {
        call("where", vec![value(cond), arg(a), arg(b)], vec![])
    }
}

/// A loss reduced as `reduction` says, through the rows.
pub fn reduced(reduction: fxvm_tensor::ops::nn::Reduction, loss: Tensor) -> Result<Tensor> {
    use fxvm_tensor::ops::nn::Reduction;
    match reduction {
        Reduction::None => Ok(loss),
        Reduction::Mean => call("mean", vec![value(&loss)], vec![]),
        Reduction::Sum => sum(&loss, &[], false),
    }
}
