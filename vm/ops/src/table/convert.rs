//! Dtype conversions.

use fxvm_tensor::dtype::result_type;
use fxvm_tensor::ops::elementwise::Arg;
use fxvm_tensor::{DType, Result, Tensor};

use crate::meta;
use crate::op::{M, Op, T, op};
use crate::value::{Device, Or, Value};

fn cast(x: Tensor, dtype: DType) -> Result<Tensor> {
    Ok(x.to_dtype(dtype))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        // `x.to(dtype)`, `x.to(other)`, `x.to(device, dtype)`: the first
        // target that names a dtype wins; no change returns `x` itself.
        op(
            "to(Tensor input, ScalarType|Tensor|Device? dtype=None, ScalarType|Device? other=None, bool non_blocking=False, bool copy=False)",
            M,
            |(x, first, second, _non_blocking, copy): (
                Tensor,
                Option<Target>,
                Option<Or<DType, Device>>,
                bool,
                bool,
            )|
             -> Result<Value> {
                let target = match (first, second) {
                    (Some(Target::DType(d)), _) | (_, Some(Or::A(d))) => Some(d),
                    (Some(Target::Like(t)), _) => Some(t.dtype()),
                    _ => None,
                };
                Ok(match target {
                    Some(d) if d != x.dtype() || copy => Value::Tensor(x.to_dtype(d).copy()),
                    _ => Value::Input(0),
                })
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
