//! Elementwise ops: a row per op of the tensor core's unary and binary
//! tables (plus its in-place `op_` method), PyTorch's aliases, `where` and
//! `clamp`.

use fxvm_tensor::dtype::Operand;
use fxvm_tensor::ops::elementwise::{self as ew, Arg, Binary, Unary};
use fxvm_tensor::ops::gamma;
use fxvm_tensor::{DType, Result, Scalar, Tensor, TensorError};

use super::{in_place, unary_in_place};
use crate::derivatives::elementwise as derivatives;
use crate::meta;
use crate::op::{M, Op, Place, T, TM, op};
use crate::value::Value;

/// Leaks a generated declaration: the registry lives as long as the process.
fn decl(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// What PyTorch's schema takes as a binary op's `other`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Other {
    /// A tensor or a Python number.
    TensorOrScalar,
    /// A tensor or a number, scaled by the keyword `alpha` first.
    Alpha,
    /// Only a tensor (no Scalar overload).
    TensorOnly,
    /// A tensor or a number on either side (`torch.pow(2, t)`), not both.
    EitherSide,
    /// A tensor or a number, with the keyword `rounding_mode` (`div`).
    Rounding,
}

/// One row per op of [`Binary`] (and whether PyTorch has its in-place
/// `Tensor.op_`); a unit test checks none is missing.
const BINARY: &[(Binary, Other, bool)] = {
    use Binary::*;
    use Other::*;
    &[
        (Add, Alpha, true),
        (Sub, Alpha, true),
        (Mul, TensorOrScalar, true),
        (Div, Rounding, true),
        (FloorDivide, TensorOrScalar, true),
        (Remainder, EitherSide, true),
        (Fmod, TensorOrScalar, true),
        (Pow, EitherSide, true),
        (Maximum, TensorOnly, false),
        (Minimum, TensorOnly, false),
        (Fmax, TensorOnly, false),
        (Fmin, TensorOnly, false),
        (Atan2, TensorOnly, true),
        (Hypot, TensorOnly, true),
        (LogAddExp, TensorOnly, false),
        (LogAddExp2, TensorOnly, false),
        (Xlogy, EitherSide, true),
        (Copysign, TensorOrScalar, true),
        (Heaviside, TensorOnly, true),
        (Gcd, TensorOnly, true),
        (Lcm, TensorOnly, true),
        (Eq, TensorOrScalar, true),
        (Ne, TensorOrScalar, true),
        (Lt, TensorOrScalar, true),
        (Le, TensorOrScalar, true),
        (Gt, TensorOrScalar, true),
        (Ge, TensorOrScalar, true),
        (LogicalAnd, TensorOnly, true),
        (LogicalOr, TensorOnly, true),
        (LogicalXor, TensorOnly, true),
        (BitwiseAnd, EitherSide, true),
        (BitwiseOr, EitherSide, true),
        (BitwiseXor, EitherSide, true),
        (LeftShift, EitherSide, true),
        (RightShift, EitherSide, true),
    ]
};

/// PyTorch's other names for binary ops.
const ALIASES: &[(&str, Binary)] = &[
    ("true_divide", Binary::Div),
    ("multiply", Binary::Mul),
    ("subtract", Binary::Sub),
    ("greater", Binary::Gt),
    ("less", Binary::Lt),
    ("not_equal", Binary::Ne),
    ("greater_equal", Binary::Ge),
    ("less_equal", Binary::Le),
    ("arctan2", Binary::Atan2),
];

/// PyTorch's other names for unary ops, and where their in-place forms are.
const UNARY_ALIASES: &[(&str, Unary, &[Place])] = &[
    ("absolute", Unary::Abs, M),
    ("negative", Unary::Neg, TM),
    ("fix", Unary::Trunc, TM),
    ("arccos", Unary::Acos, TM),
    ("arcsin", Unary::Asin, TM),
    ("arctan", Unary::Atan, TM),
    ("arccosh", Unary::Acosh, TM),
    ("arcsinh", Unary::Asinh, TM),
    ("arctanh", Unary::Atanh, TM),
];

/// PyTorch's rules for `alpha`: a bool only when the result is bool, a
/// float only when it is floating.
fn check_alpha(x: &Tensor, y: &Arg, alpha: Scalar) -> Result<()> {
    let result = fxvm_tensor::dtype::result_type(&[Operand::Tensor(x.dtype()), y.operand()]);
    let message = match alpha {
        Scalar::Bool(_) if result != DType::Bool => {
            "Boolean alpha only supported for Boolean results."
        }
        Scalar::Float(_) if !result.is_float() => {
            "For integral input tensors, argument alpha must not be a floating point number."
        }
        _ => return Ok(()),
    };
    Err(TensorError::runtime("add", message))
}

/// The second operand's parameter name: `other`, but `values` for
/// heaviside and `exponent` for pow, as PyTorch names them (keyword calls
/// use it).
fn operand_name(op_: Binary) -> &'static str {
    match op_ {
        Binary::Heaviside => "values",
        Binary::Pow => "exponent",
        _ => "other",
    }
}

fn binary_rows(op_: Binary, other: Other) -> [Op; 2] {
    binary_rows_of(op_, other).map(|row| row.grad_opt(derivatives::binary_op(op_)))
}

fn binary_rows_of(op_: Binary, other: Other) -> [Op; 2] {
    let name = op_.name();
    // `alpha * other`, as `add` and `sub` take it.
    let scaled = |x: &Tensor, y: Arg, alpha: Scalar| -> Result<Arg> {
        if let Scalar::Bool(_) | Scalar::Float(_) = alpha {
            check_alpha(x, &y, alpha)?;
        }
        Ok(match alpha {
            Scalar::Int(1) => y,
            alpha => Arg::Tensor(ew::binary(Binary::Mul, &y, &Arg::Scalar(alpha))?),
        })
    };
    let run = move |x: Tensor, y: Arg, alpha: Scalar| {
        let y = scaled(&x, y, alpha)?;
        ew::binary(op_, &Arg::Tensor(x), &y)
    };
    // The in-place form writes into `x` (see `ew::binary_`).
    let run_ = move |x: Tensor, y: Arg, alpha: Scalar| {
        ew::binary_(op_, &x, &scaled(&x, y, alpha)?)?;
        Ok(Value::Input(0))
    };
    match other {
        Other::Alpha => [
            op(
                decl(format!(
                    "{name}(Tensor input, Tensor|Scalar other, *, Scalar alpha=1)"
                )),
                TM,
                move |(x, y, alpha): (Tensor, Arg, Scalar)| run(x, y, alpha),
            ),
            op(
                decl(format!(
                    "{name}_(Tensor(a!) input, Tensor|Scalar other, *, Scalar alpha=1)"
                )),
                M,
                move |(x, y, alpha): (Tensor, Arg, Scalar)| run_(x, y, alpha),
            ),
        ],
        Other::TensorOrScalar => [
            op(
                decl(format!("{name}(Tensor input, Tensor|Scalar other)")),
                TM,
                move |(x, y): (Tensor, Arg)| run(x, y, Scalar::Int(1)),
            ),
            op(
                decl(format!("{name}_(Tensor(a!) input, Tensor|Scalar other)")),
                M,
                move |(x, y): (Tensor, Arg)| run_(x, y, Scalar::Int(1)),
            ),
        ],
        Other::EitherSide => [
            op(
                decl(format!(
                    "{name}(Tensor|Scalar input, Tensor|Scalar {})",
                    operand_name(op_)
                )),
                TM,
                move |(x, y): (Arg, Arg)| match (&x, &y) {
                    (Arg::Scalar(_), Arg::Scalar(_)) => Err(TensorError::Argument {
                        op: name,
                        message:
                            "received an invalid combination of arguments - got (Number, Number), \
                                  but expected a Tensor on at least one side"
                                .into(),
                    }),
                    _ => ew::binary(op_, &x, &y),
                },
            ),
            op(
                decl(format!(
                    "{name}_(Tensor(a!) input, Tensor|Scalar {})",
                    operand_name(op_)
                )),
                M,
                move |(x, y): (Tensor, Arg)| run_(x, y, Scalar::Int(1)),
            ),
        ],
        Other::Rounding => [
            op(
                decl(format!(
                    "{name}(Tensor input, Tensor|Scalar other, *, str? rounding_mode=None)"
                )),
                TM,
                |(x, y, mode): (Tensor, Arg, Option<String>)| divide(&x, &y, mode.as_deref()),
            ),
            op(
                decl(format!(
                    "{name}_(Tensor(a!) input, Tensor|Scalar other, *, str? rounding_mode=None)"
                )),
                M,
                |(x, y, mode): (Tensor, Arg, Option<String>)| match mode {
                    None => {
                        ew::binary_(Binary::Div, &x, &y)?;
                        Ok(Value::Input(0))
                    }
                    Some(mode) => super::in_place(&x, || divide(&x, &y, Some(&mode))),
                },
            ),
        ],
        Other::TensorOnly => [
            op(
                decl(format!(
                    "{name}(Tensor input, Tensor {})",
                    operand_name(op_)
                )),
                TM,
                move |(x, y): (Tensor, Tensor)| run(x, Arg::Tensor(y), Scalar::Int(1)),
            ),
            op(
                decl(format!(
                    "{name}_(Tensor(a!) input, Tensor {})",
                    operand_name(op_)
                )),
                M,
                move |(x, y): (Tensor, Tensor)| run_(x, Arg::Tensor(y), Scalar::Int(1)),
            ),
        ],
    }
}

/// `div(x, y, rounding_mode=)`: true division, or division rounded toward
/// zero (`"trunc"`) or down (`"floor"`) in the promoted dtype, so integers
/// stay integers.
fn divide(x: &Tensor, y: &Arg, mode: Option<&str>) -> Result<Tensor> {
    let x = Arg::Tensor(x.clone());
    match mode {
        None => ew::binary(Binary::Div, &x, y),
        Some("floor") => ew::binary(Binary::FloorDivide, &x, y),
        Some("trunc") => {
            let floor = ew::binary(Binary::FloorDivide, &x, y)?;
            if floor.dtype().is_float() {
                return ew::unary(Unary::Trunc, &ew::binary(Binary::Div, &x, y)?);
            }
            // Integers: the floor quotient, one up where the signs differ
            // and the division is inexact.
            let inexact = ew::binary(
                Binary::Ne,
                &ew::binary(Binary::Remainder, &x, y)?.into(),
                &Arg::Scalar(Scalar::Int(0)),
            )?;
            let signs_differ = ew::binary(
                Binary::LogicalXor,
                &ew::binary(Binary::Lt, &x, &Arg::Scalar(Scalar::Int(0)))?.into(),
                &ew::binary(Binary::Lt, y, &Arg::Scalar(Scalar::Int(0)))?.into(),
            )?;
            let up = ew::binary(Binary::LogicalAnd, &inexact.into(), &signs_differ.into())?;
            ew::binary(
                Binary::Add,
                &floor.clone().into(),
                &up.to_dtype(floor.dtype()).into(),
            )
        }
        Some(other) => Err(TensorError::runtime(
            "div",
            format!(
                "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{other}'"
            ),
        )),
    }
}

pub(crate) fn rows() -> Vec<Op> {
    let mut rows = Vec::new();
    // GELU's two forms are one function with `approximate` (see activation).
    for &u in Unary::ALL
        .iter()
        .filter(|&&u| u != Unary::Gelu && u != Unary::GeluTanh)
    {
        let name = u.name();
        if u == Unary::Round {
            continue; // declared below with its `decimals`
        }
        // SiLU, Mish and Softplus are only `torch.nn.functional`'s (see
        // activation); this row is the kernel their derivatives name.
        let places: &'static [Place] = match u {
            Unary::Silu | Unary::Mish | Unary::Softplus => &[],
            _ => TM,
        };
        rows.push(
            op(
                decl(format!("{name}(Tensor input)")),
                places,
                move |(x,): (Tensor,)| ew::unary(u, &x),
            )
            .grad_opt(derivatives::unary_op(u)),
        );
        // PyTorch's in-place forms: `torch.relu_` and `Tensor.relu_` for
        // most, only the method for sign/erfinv, none for these activations.
        let places: &'static [Place] = match u {
            Unary::Silu | Unary::Mish | Unary::Softplus => continue,
            Unary::Sign | Unary::Erfinv | Unary::Lgamma | Unary::Digamma => M,
            Unary::Relu => &[Place::Torch, Place::Method, Place::FunctionalIsTorch],
            _ => TM,
        };
        rows.push(
            op(
                decl(format!("{name}_(Tensor(a!) input)")),
                places,
                move |(x,): (Tensor,)| unary_in_place(&x, u),
            )
            .grad_opt(derivatives::unary_op(u)),
        );
    }
    // `torch.polygamma(n, input)`, but `Tensor.polygamma(n)`.
    rows.push(
        op(
            "polygamma(int n, Tensor input)",
            T,
            |(n, x): (i64, Tensor)| gamma::polygamma(n, &x),
        )
        .grad(derivatives::polygamma("PolygammaBackward0", 1, 0)),
    );
    rows.push(
        op(
            "polygamma(Tensor input, int n)",
            M,
            |(x, n): (Tensor, i64)| gamma::polygamma(n, &x),
        )
        .grad(derivatives::polygamma("PolygammaBackward0", 0, 1)),
    );
    rows.push(
        op(
            "polygamma_(Tensor(a!) input, int n)",
            M,
            |(x, n): (Tensor, i64)| in_place(&x, || gamma::polygamma(n, &x)),
        )
        .grad(derivatives::polygamma("PolygammaBackward1", 0, 1)),
    );
    for &(b, other, has_in_place) in BINARY {
        let [function, in_place] = binary_rows(b, other);
        rows.push(function);
        if has_in_place {
            rows.push(in_place);
        }
    }
    // `torch.divide` is `div` under its numpy name, rounding_mode included.
    rows.push(
        op(
            "divide(Tensor input, Tensor|Scalar other, *, str? rounding_mode=None)",
            TM,
            |(x, y, mode): (Tensor, Arg, Option<String>)| divide(&x, &y, mode.as_deref()),
        )
        .grad_opt(derivatives::binary_op(Binary::Div)),
    );
    for &(alias, b) in ALIASES {
        rows.push(
            op(
                decl(format!("{alias}(Tensor input, Tensor|Scalar other)")),
                TM,
                move |(x, y): (Tensor, Arg)| ew::binary(b, &Arg::Tensor(x), &y),
            )
            .grad_opt(derivatives::binary_op(b)),
        );
    }
    for &(alias, u, in_place_places) in UNARY_ALIASES {
        rows.push(
            op(
                decl(format!("{alias}(Tensor input)")),
                TM,
                move |(x,): (Tensor,)| ew::unary(u, &x),
            )
            .grad_opt(derivatives::unary_op(u)),
        );
        rows.push(
            op(
                decl(format!("{alias}_(Tensor(a!) input)")),
                in_place_places,
                move |(x,): (Tensor,)| unary_in_place(&x, u),
            )
            .grad_opt(derivatives::unary_op(u)),
        );
    }
    rows.push(
        op(
            "round(Tensor input, *, int decimals=0)",
            TM,
            |(x, d): (Tensor, i64)| ew::round_decimals(&x, d),
        )
        .grad(crate::derivatives::pointwise::flat("RoundBackward1")),
    );
    rows.push(
        op(
            "round_(Tensor(a!) input, *, int decimals=0)",
            TM,
            |(x, d): (Tensor, i64)| in_place(&x, || ew::round_decimals(&x, d)),
        )
        .grad(crate::derivatives::pointwise::flat("RoundBackward1")),
    );
    // `not x` elementwise: zero (or False) becomes True, anything else False.
    let logical_not = |x: &Tensor| {
        ew::binary(
            Binary::Eq,
            &Arg::Tensor(x.clone()),
            &Arg::Scalar(Scalar::Int(0)),
        )
    };
    rows.push(op(
        "logical_not(Tensor input)",
        TM,
        move |(x,): (Tensor,)| logical_not(&x),
    ));
    rows.push(op(
        "logical_not_(Tensor(a!) input)",
        M,
        move |(x,): (Tensor,)| in_place(&x, || logical_not(&x)),
    ));
    rows.push(
        op(
            "where(Tensor condition, Tensor|Scalar input, Tensor|Scalar other)",
            T,
            |(c, a, b): (Tensor, Arg, Arg)| ew::where_(&c, &a, &b),
        )
        .grad(derivatives::where_(0, 1)),
    );
    // `x.where(condition, y)` is `torch.where(condition, x, y)`.
    rows.push(
        op(
            "where(Tensor input, Tensor condition, Tensor|Scalar other)",
            M,
            |(x, c, b): (Tensor, Tensor, Arg)| ew::where_(&c, &x.into(), &b),
        )
        .grad(derivatives::where_(1, 0)),
    );
    for name in ["clamp", "clip"] {
        rows.push(
            op(
                decl(format!(
                    "{name}(Tensor input, Scalar? min=None, Scalar? max=None)"
                )),
                TM,
                |(x, lo, hi): (Tensor, Option<Scalar>, Option<Scalar>)| ew::clamp(&x, lo, hi),
            )
            .grad(derivatives::clamp(Some(1), Some(2))),
        );
        rows.push(
            op(
                decl(format!(
                    "{name}_(Tensor(a!) input, Scalar? min=None, Scalar? max=None)"
                )),
                M,
                |(x, lo, hi): (Tensor, Option<Scalar>, Option<Scalar>)| {
                    in_place(&x, || ew::clamp(&x, lo, hi))
                },
            )
            .grad(derivatives::clamp(Some(1), Some(2))),
        );
    }
    rows.push(
        op(
            "clamp_min(Tensor input, Scalar min)",
            TM,
            |(x, lo): (Tensor, Scalar)| ew::clamp(&x, Some(lo), None),
        )
        .grad(derivatives::clamp(Some(1), None)),
    );
    rows.push(
        op(
            "clamp_max(Tensor input, Scalar max)",
            TM,
            |(x, hi): (Tensor, Scalar)| ew::clamp(&x, None, Some(hi)),
        )
        .grad(derivatives::clamp(None, Some(1))),
    );
    rows.push(
        op(
            "clamp_min_(Tensor(a!) input, Scalar min)",
            M,
            |(x, lo): (Tensor, Scalar)| in_place(&x, || ew::clamp(&x, Some(lo), None)),
        )
        .grad(derivatives::clamp(Some(1), None)),
    );
    rows.push(
        op(
            "clamp_max_(Tensor(a!) input, Scalar max)",
            M,
            |(x, hi): (Tensor, Scalar)| in_place(&x, || ew::clamp(&x, None, Some(hi))),
        )
        .grad(derivatives::clamp(None, Some(1))),
    );
    // Every row here is pointwise: broadcast operands, promoted dtype.
    rows.into_iter().map(|o| o.meta(meta::pointwise)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_binary_op_has_one_row() {
        for b in Binary::ALL {
            assert_eq!(
                BINARY.iter().filter(|(x, _, _)| x == b).count(),
                1,
                "{}",
                b.name()
            );
        }
    }
}
