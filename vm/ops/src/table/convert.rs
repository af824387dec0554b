//! Dtype conversions.

use fxvm_tensor::dtype::result_type;
use fxvm_tensor::layout::MemoryFormat;
use fxvm_tensor::ops::elementwise::Arg;
use fxvm_tensor::{DType, Result, Tensor, TensorError};

use crate::meta;
use crate::op::{M, Op, T, op};
use crate::value::{Or, Value};

fn cast(x: Tensor, dtype: DType) -> Result<Tensor> {
    Ok(x.to_dtype(dtype))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        // PyTorch's three overloads in one declaration: `to(device, dtype,
        // non_blocking, copy)`, `to(dtype, non_blocking, copy)` and
        // `to(other, non_blocking, copy)`; `resolve_to` reads the positional
        // forms back. No change returns `x` itself.
        op(
            "to(Tensor input, ScalarType|Tensor|Device? device=None, ScalarType|bool? dtype=None, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)",
            M,
            |(x, first, second, non_blocking, copy, format): (
                Tensor,
                Option<Target>,
                Option<Or<DType, bool>>,
                bool,
                bool,
                Option<MemoryFormat>,
            )|
             -> Result<Value> {
                let (target, copy) = resolve_to(first, second, non_blocking, copy)?;
                let format = format.unwrap_or(MemoryFormat::Preserve);
                let dtype = target.unwrap_or(x.dtype());
                let laid_out = format == MemoryFormat::Preserve || x.is_in_format(format);
                if dtype == x.dtype() && !copy && laid_out {
                    return Ok(Value::Input(0));
                }
                let out = if dtype == x.dtype() {
                    x.copy()
                } else {
                    x.to_dtype(dtype)
                };
                Ok(Value::Tensor(match format {
                    MemoryFormat::Preserve => out,
                    f => out.copy_in(f)?,
                }))
            },
        ).meta(meta::like_first),
        op(
            "type_as(Tensor input, Tensor other)",
            M,
            |(x, o): (Tensor, Tensor)| cast(x, o.dtype()),
        ).meta(meta::like_first),
        op("float(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::F32)
        }).meta(meta::like_first),
        op("double(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::F64)
        }).meta(meta::like_first),
        op("long(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::I64)
        }).meta(meta::like_first),
        op("int(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::I32)
        }).meta(meta::like_first),
        op("bool(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::Bool)
        }).meta(meta::like_first),
        op("half(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::F16)
        }).meta(meta::like_first),
        op("bfloat16(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::BF16)
        }).meta(meta::like_first),
        op("byte(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::U8)
        }).meta(meta::like_first),
        op("char(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::I8)
        }).meta(meta::like_first),
        op("short(Tensor input)", M, |(x,): (Tensor,)| {
            cast(x, DType::I16)
        }).meta(meta::like_first),
        op(
            "promote_types(ScalarType type1, ScalarType type2)",
            T,
            |(a, b): (DType, DType)| Ok(Value::DType(DType::promote(a, b))),
        ),
        // PyTorch refuses only casts to a lower category.
        op(
            "can_cast(ScalarType from_, ScalarType to)",
            T,
            |(from, to): (DType, DType)| Ok(from.category() <= to.category()),
        ),
        op(
            "result_type(Tensor|Scalar tensor1, Tensor|Scalar tensor2)",
            T,
            |(a, b): (Arg, Arg)| Ok(Value::DType(result_type(&[a.operand(), b.operand()]))),
        ),
        op(
            "cpu(Tensor input)",
            M,
            |(_x,): (Tensor,)| -> Result<Value> { Ok(Value::Input(0)) },
        ).meta(meta::like_first),
    ]
}

/// The dtype `to` converts to and whether it must copy, read from the
/// positional forms of PyTorch's three overloads (after a dtype or a
/// tensor, the second positional is `non_blocking` and the third `copy`);
/// a combination none of them takes is PyTorch's TypeError.
fn resolve_to(
    first: Option<Target>,
    second: Option<Or<DType, bool>>,
    non_blocking: bool,
    copy: bool,
) -> Result<(Option<DType>, bool)> {
    let invalid = || TensorError::Argument {
        op: "to",
        message: "received an invalid combination of arguments".into(),
    };
    let like = |t: Target| match t {
        Target::DType(d) => Some(d),
        Target::Like(t) => Some(t.dtype()),
        Target::Device => None,
    };
    match (first, second) {
        (Some(t @ (Target::DType(_) | Target::Like(_))), None) => Ok((like(t), copy)),
        (Some(t @ (Target::DType(_) | Target::Like(_))), Some(Or::B(_))) => {
            Ok((like(t), non_blocking))
        }
        (Some(Target::DType(_) | Target::Like(_)), Some(Or::A(_))) => Err(invalid()),
        (Some(Target::Device) | None, Some(Or::A(d))) => Ok((Some(d), copy)),
        (Some(Target::Device) | None, None) => Ok((None, copy)),
        (Some(Target::Device) | None, Some(Or::B(_))) => Err(invalid()),
    }
}

/// `to`'s first argument: a dtype, a tensor whose dtype to take, or a device.
enum Target {
    DType(DType),
    Like(Tensor),
    Device,
}

impl crate::value::FromValue for Target {
    fn accepts(ty: &crate::schema::Ty, optional: bool) -> bool {
        use crate::schema::Ty;
        !optional && *ty == Ty::Union(vec![Ty::DType, Ty::Tensor, Ty::Device])
    }
    fn is(v: &Value) -> bool {
        matches!(v, Value::DType(_) | Value::Tensor(_) | Value::Device(_))
    }
    fn from_value(v: Value) -> Self {
        match v {
            Value::DType(d) => Target::DType(d),
            Value::Tensor(t) => Target::Like(t),
            _ => Target::Device,
        }
    }
}
