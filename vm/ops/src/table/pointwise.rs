//! Pointwise functions PyTorch defines over the elementwise kernels:
//! classification (`isnan` …), replacement (`nan_to_num`), interpolation
//! and fused multiply-adds (`lerp`, `addcmul`, `addcdiv`), and the
//! remaining arithmetic forms (`frac`, `logit`, `float_power`, `ldexp`,
//! `rsub`, `positive`).

use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary, Unary};
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::{bin, in_place, unary_in_place};
use crate::meta;
use crate::op::{M, Op, T, TM, op};
use crate::value::{Or, Value};

fn float_only(kernel: &str, x: &Tensor) -> Result<()> {
    if x.dtype().is_float() {
        Ok(())
    } else {
        Err(TensorError::not_implemented_for(kernel, x.dtype()))
    }
}

fn arg(v: Or<Tensor, Scalar>) -> Arg {
    match v {
        Or::A(t) => Arg::Tensor(t),
        Or::B(s) => Arg::Scalar(s),
    }
}

fn frac(x: &Tensor) -> Result<Tensor> {
    float_only("frac_cpu", x)?;
    bin(Binary::Sub, x, ew::unary(Unary::Trunc, x)?)
}

/// `value` everywhere (the non-float dtypes hold no NaN or infinity).
fn everywhere(x: &Tensor, value: bool) -> Tensor {
    Tensor::full(x.shape(), Scalar::Bool(value), DType::Bool)
}

fn is_equal_to(x: &Tensor, v: f64) -> Result<Tensor> {
    if x.dtype() == DType::Bool {
        return Ok(everywhere(x, false));
    }
    bin(Binary::Eq, x, v)
}

fn isfinite(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_float() {
        return Ok(everywhere(x, true));
    }
    // x - x is 0 unless x is NaN or infinite.
    bin(Binary::Eq, bin(Binary::Sub, x, x)?, 0.0)
}

fn isinf(x: &Tensor) -> Result<Tensor> {
    if !x.dtype().is_float() {
        return Ok(everywhere(x, false));
    }
    bin(Binary::Eq, ew::unary(Unary::Abs, x)?, f64::INFINITY)
}

fn signbit(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => Ok(everywhere(x, false)),
        d if d.is_float() => {
            let ones = Tensor::full(x.shape(), Scalar::Float(1.0), d);
            bin(Binary::Lt, bin(Binary::Copysign, ones, x)?, 0.0)
        }
        _ => bin(Binary::Lt, x, 0.0),
    }
}

/// NaN → `nan`, ±inf → `posinf`/`neginf` (the dtype's largest finite
/// values by default), in the tensor's own dtype.
fn nan_to_num(x: &Tensor, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Tensor {
    let d = x.dtype();
    if !d.is_float() {
        return x.copy();
    }
    let (hi, lo) = (
        posinf.unwrap_or(d.max_finite()),
        neginf.unwrap_or(-d.max_finite()),
    );
    let values: Vec<f64> = x
        .to_vec::<f64>()
        .into_iter()
        .map(|v| match v {
            v if v.is_nan() => nan,
            v if v == f64::INFINITY => hi,
            v if v == f64::NEG_INFINITY => lo,
            v => v,
        })
        .collect();
    Tensor::from_vec(values, x.shape()).to_dtype(d)
}

/// PyTorch's lerp takes `end` (and a tensor `weight`) of `start`'s dtype.
fn same_dtype_as_start(start: &Tensor, name: &str, other: &Tensor) -> Result<()> {
    if other.dtype() == start.dtype() {
        return Ok(());
    }
    Err(TensorError::runtime(
        "lerp",
        format!(
            "expected dtype {} for `{name}` but got dtype {}",
            start.dtype().type_meta_name(),
            other.dtype().type_meta_name()
        ),
    ))
}

/// `start + w·(end - start)` for |w| < 0.5, else `end - (end - start)·(1 - w)`,
/// PyTorch's two forms that keep both ends exact.
fn lerp(start: &Tensor, end: &Tensor, weight: Arg) -> Result<Tensor> {
    same_dtype_as_start(start, "end", end)?;
    if let Arg::Tensor(w) = &weight {
        same_dtype_as_start(start, "weight", w)?;
    }
    float_only("lerp_kernel_scalar", start)?;
    let diff = bin(Binary::Sub, end, start)?;
    let low = bin(
        Binary::Add,
        start,
        ew::binary(Binary::Mul, &weight, &diff.clone().into())?,
    )?;
    let rest = ew::binary(Binary::Sub, &Arg::Scalar(Scalar::Int(1)), &weight)?;
    let high = bin(Binary::Sub, end, bin(Binary::Mul, diff, rest)?)?;
    let w = match &weight {
        Arg::Tensor(t) => Arg::Tensor(ew::unary(Unary::Abs, t)?),
        Arg::Scalar(s) => Arg::Scalar(Scalar::Float(s.to_f64().abs())),
    };
    let near_start = ew::binary(Binary::Lt, &w, &Arg::Scalar(Scalar::Float(0.5)))?;
    ew::where_(&near_start, &low.into(), &high.into())
}

/// `input + value·t1·t2` (`divide`: `input + value·(t1/t2)`), in PyTorch's order.
fn addc(x: &Tensor, t1: &Tensor, t2: &Tensor, value: Scalar, divide: bool) -> Result<Tensor> {
    let term = if divide {
        if !t1.dtype().is_float() && !t2.dtype().is_float() {
            return Err(TensorError::runtime(
                "addcdiv",
                "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all dtypes.",
            ));
        }
        bin(Binary::Mul, value, bin(Binary::Div, t1, t2)?)?
    } else {
        bin(Binary::Mul, bin(Binary::Mul, value, t1)?, t2)?
    };
    bin(Binary::Add, x, term)
}

fn logit(x: &Tensor, eps: Option<f64>) -> Result<Tensor> {
    // Integers and bools compute in float32, as every float-valued op.
    let x = &if x.dtype().is_float() {
        x.clone()
    } else {
        x.to_dtype(DType::F32)
    };
    let z = match eps {
        Some(e) => ew::clamp(x, Some(Scalar::Float(e)), Some(Scalar::Float(1.0 - e)))?,
        None => x.clone(),
    };
    let odds = bin(Binary::Div, &z, bin(Binary::Sub, 1.0, &z)?)?;
    ew::unary(Unary::Log, &odds)
}

/// `float_power`: both sides in double precision.
fn float_power(x: Arg, y: Arg) -> Result<Tensor> {
    if matches!((&x, &y), (Arg::Scalar(_), Arg::Scalar(_))) {
        return Err(TensorError::Argument {
            op: "float_power",
            message: "received an invalid combination of arguments - got (Number, Number), \
                      but expected a Tensor on at least one side"
                .into(),
        });
    }
    let wide = |a: Arg| match a {
        Arg::Tensor(t) => Arg::Tensor(t.to_dtype(DType::F64)),
        Arg::Scalar(s) => Arg::Scalar(Scalar::Float(s.to_f64())),
    };
    let out = ew::binary(Binary::Pow, &wide(x), &wide(y))?;
    Ok(out.to_dtype(DType::F64))
}

/// `|a - b| <= atol + rtol·|b|` elementwise for a finite difference, equal
/// values (infinities included) always close, NaNs close to each other only
/// with `equal_nan`.
fn isclose(a: &Tensor, b: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
    if a.dtype() != b.dtype() {
        return Err(TensorError::runtime(
            "isclose",
            format!(
                "{} did not match {}",
                fxvm_tensor::error::legacy_name(a.dtype()),
                fxvm_tensor::error::legacy_name(b.dtype())
            ),
        ));
    }
    let equal = bin(Binary::Eq, a, b)?;
    if !a.dtype().is_float() {
        return Ok(equal);
    }
    let diff = ew::unary(Unary::Abs, &bin(Binary::Sub, a, b)?)?;
    let bound = bin(
        Binary::Add,
        bin(Binary::Mul, rtol, ew::unary(Unary::Abs, b)?)?,
        atol,
    )?;
    // An infinite difference is never within tolerance, even of an infinite
    // bound (inf vs -inf, 1 vs inf).
    let within = bin(
        Binary::LogicalAnd,
        bin(Binary::Lt, &diff, f64::INFINITY)?,
        bin(Binary::Le, &diff, bound)?,
    )?;
    let mut close = bin(Binary::LogicalOr, equal, within)?;
    if equal_nan {
        let both = bin(
            Binary::LogicalAnd,
            bin(Binary::Ne, a, a)?,
            bin(Binary::Ne, b, b)?,
        )?;
        close = bin(Binary::LogicalOr, close, both)?;
    }
    Ok(close)
}

fn rsub(x: &Tensor, other: Arg, alpha: Scalar) -> Result<Tensor> {
    let scaled = bin(Binary::Mul, x, alpha)?;
    ew::binary(Binary::Sub, &other, &scaled.into())
}

/// `~x`: logical not for bools, two's complement for integers.
fn bitwise_not(x: &Tensor) -> Result<Tensor> {
    match x.dtype() {
        DType::Bool => bin(Binary::Eq, x, 0.0),
        d if d.is_float() => Err(TensorError::not_implemented_for("bitwise_not_cpu", d)),
        // All ones flips every bit, exactly at any width (no float detour).
        _ => bin(Binary::BitwiseXor, x, Scalar::Int(-1)),
    }
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op("frac(Tensor input)", TM, |(x,): (Tensor,)| frac(&x)).grad(crate::derivatives::pointwise::pass("FracBackward0")).meta(meta::pointwise),
        op("frac_(Tensor(a!) input)", TM, |(x,): (Tensor,)| {
            in_place(&x, || frac(&x))
        }).grad(crate::derivatives::pointwise::pass("FracBackward0")).meta(meta::pointwise),
        op("sgn(Tensor input)", TM, |(x,): (Tensor,)| {
            ew::unary(Unary::Sign, &x)
        }).grad(crate::derivatives::pointwise::flat("SgnBackward0")).meta(meta::pointwise),
        op("sgn_(Tensor(a!) input)", M, |(x,): (Tensor,)| {
            unary_in_place(&x, Unary::Sign)
        }).grad(crate::derivatives::pointwise::flat("SgnBackward0")).meta(meta::pointwise),
        op("isnan(Tensor input)", TM, |(x,): (Tensor,)| {
            bin(Binary::Ne, &x, &x)
        }).meta(meta::pointwise),
        op("isinf(Tensor input)", TM, |(x,): (Tensor,)| isinf(&x)).meta(meta::pointwise),
        op("isposinf(Tensor input)", TM, |(x,): (Tensor,)| {
            is_equal_to(&x, f64::INFINITY)
        }).meta(meta::pointwise),
        op("isneginf(Tensor input)", TM, |(x,): (Tensor,)| {
            is_equal_to(&x, f64::NEG_INFINITY)
        }).meta(meta::pointwise),
        op("isfinite(Tensor input)", TM, |(x,): (Tensor,)| isfinite(&x)).meta(meta::pointwise),
        op("isreal(Tensor input)", TM, |(x,): (Tensor,)| {
            Ok(everywhere(&x, true))
        }).meta(meta::pointwise),
        op("signbit(Tensor input)", TM, |(x,): (Tensor,)| signbit(&x)).meta(meta::pointwise),
        op(
            "nan_to_num(Tensor input, float? nan=0.0, float? posinf=None, float? neginf=None)",
            TM,
            |(x, nan, hi, lo): (Tensor, Option<f64>, Option<f64>, Option<f64>)| {
                Ok(nan_to_num(&x, nan.unwrap_or(0.0), hi, lo))
            },
        ).grad(crate::derivatives::pointwise::nan_to_num()).meta(meta::pointwise)
        .dtype_generic(),
        op(
            "nan_to_num_(Tensor(a!) input, float? nan=0.0, float? posinf=None, float? neginf=None)",
            TM,
            |(x, nan, hi, lo): (Tensor, Option<f64>, Option<f64>, Option<f64>)| {
                in_place(&x, || Ok(nan_to_num(&x, nan.unwrap_or(0.0), hi, lo)))
            },
        ).grad(crate::derivatives::pointwise::nan_to_num()).meta(meta::pointwise)
        .dtype_generic(),
        op(
            "lerp(Tensor input, Tensor end, Tensor|Scalar weight)",
            TM,
            |(x, end, w): (Tensor, Tensor, Or<Tensor, Scalar>)| lerp(&x, &end, arg(w)),
        ).grad(crate::derivatives::pointwise::lerp()).meta(meta::pointwise),
        op(
            "lerp_(Tensor(a!) input, Tensor end, Tensor|Scalar weight)",
            M,
            |(x, end, w): (Tensor, Tensor, Or<Tensor, Scalar>)| {
                in_place(&x, || lerp(&x, &end, arg(w)))
            },
        ).grad(crate::derivatives::pointwise::lerp()).meta(meta::pointwise),
        op(
            "addcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
            TM,
            |(x, a, b, v): (Tensor, Tensor, Tensor, Scalar)| addc(&x, &a, &b, v, false),
        ).grad(crate::derivatives::pointwise::addc(false)).meta(meta::pointwise),
        op(
            "addcmul_(Tensor(a!) input, Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
            M,
            |(x, a, b, v): (Tensor, Tensor, Tensor, Scalar)| {
                in_place(&x, || addc(&x, &a, &b, v, false))
            },
        ).grad(crate::derivatives::pointwise::addc(false)).meta(meta::pointwise),
        op(
            "addcdiv(Tensor input, Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
            TM,
            |(x, a, b, v): (Tensor, Tensor, Tensor, Scalar)| addc(&x, &a, &b, v, true),
        ).grad(crate::derivatives::pointwise::addc(true)).meta(meta::pointwise),
        op(
            "addcdiv_(Tensor(a!) input, Tensor tensor1, Tensor tensor2, *, Scalar value=1)",
            M,
            |(x, a, b, v): (Tensor, Tensor, Tensor, Scalar)| {
                in_place(&x, || addc(&x, &a, &b, v, true))
            },
        ).grad(crate::derivatives::pointwise::addc(true)).meta(meta::pointwise),
        op(
            "logit(Tensor input, float? eps=None)",
            TM,
            |(x, eps): (Tensor, Option<f64>)| logit(&x, eps),
        ).grad(crate::derivatives::pointwise::logit()).meta(meta::pointwise),
        op(
            "logit_(Tensor(a!) input, float? eps=None)",
            TM,
            |(x, eps): (Tensor, Option<f64>)| in_place(&x, || logit(&x, eps)),
        ).grad(crate::derivatives::pointwise::logit()).meta(meta::pointwise),
        op(
            "float_power(Tensor|Scalar input, Tensor|Scalar exponent)",
            TM,
            |(x, y): (Or<Tensor, Scalar>, Or<Tensor, Scalar>)| float_power(arg(x), arg(y)),
        ).grad_opt(crate::derivatives::elementwise::binary_op(Binary::Pow)).meta(meta::pointwise),
        op(
            "ldexp(Tensor input, Tensor other)",
            TM,
            |(x, y): (Tensor, Tensor)| {
                let scale = ew::binary(Binary::Pow, &Arg::Scalar(Scalar::Float(2.0)), &y.into())?;
                bin(Binary::Mul, x, scale)
            },
        ).grad(crate::derivatives::pointwise::ldexp()).meta(meta::pointwise),
        op(
            "rsub(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)",
            T,
            |(x, y, alpha): (Tensor, Or<Tensor, Scalar>, Scalar)| rsub(&x, arg(y), alpha),
        ).grad(crate::derivatives::elementwise::rsub()).meta(meta::pointwise),
        op(
            "isclose(Tensor input, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False)",
            TM,
            |(a, b, rtol, atol, nan): (Tensor, Tensor, f64, f64, bool)| {
                isclose(&a, &b, rtol, atol, nan)
            },
        ).meta(meta::pointwise),
        op(
            "allclose(Tensor input, Tensor other, float rtol=1e-05, float atol=1e-08, bool equal_nan=False)",
            TM,
            |(a, b, rtol, atol, nan): (Tensor, Tensor, f64, f64, bool)| -> Result<bool> {
                let close = isclose(&a, &b, rtol, atol, nan)?;
                Ok(close.to_vec::<bool>().into_iter().all(|c| c))
            },
        ),
        op(
            "dist(Tensor input, Tensor other, Scalar p=2)",
            TM,
            |(a, b, p): (Tensor, Tensor, Scalar)| {
                // Composite: the norm of the difference, with history.
                let o = crate::autograd::ops::sub(&a, &b)?;
                crate::autograd::ops::norm(&o, p.to_f64(), None, false)
            },
        )
        .composite(),
        op("bitwise_not(Tensor input)", TM, |(x,): (Tensor,)| {
            bitwise_not(&x)
        }).meta(meta::pointwise),
        op("bitwise_not_(Tensor(a!) input)", M, |(x,): (Tensor,)| {
            in_place(&x, || bitwise_not(&x))
        }).meta(meta::pointwise),
        op(
            "positive(Tensor input)",
            TM,
            |(x,): (Tensor,)| -> Result<Value> {
                if x.dtype() == DType::Bool {
                    return Err(TensorError::not_implemented(
                        "The `+` operator, on a bool tensor is not supported.",
                    ));
                }
                Ok(Value::Input(0))
            },
        )
        // The input itself, history and all (PyTorch returns `self`).
        .composite()
        .meta(meta::pointwise),
    ]
}
