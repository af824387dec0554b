//! Unary and binary elementwise ops.

use fxvm_tensor::ops::elementwise::{Binary, Unary};
use fxvm_tensor::{Scalar, Tensor};

use crate::autograd::ops::{self as o, unary};
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

const IN: &[Save] = &[Save::In(0)];
const OUT: &[Save] = &[Save::Out(0)];
const BOTH: &[Save] = &[Save::In(0), Save::In(1)];

/// `g * f(x)` from the saved input.
fn chain_in(name: &'static str, f: fn(&Tensor) -> fxvm_tensor::Result<Tensor>) -> Derivative {
    derivative(name, IN, move |c| {
        let d = f(&c.input(0)?)?;
        let g = o::mul(&c.grad()?, &d)?;
        c.set(0, g);
        Ok(())
    })
}

/// `g * f(y)` from the saved output.
fn chain_out(name: &'static str, f: fn(&Tensor) -> fxvm_tensor::Result<Tensor>) -> Derivative {
    derivative(name, OUT, move |c| {
        let d = f(&c.output(0)?)?;
        let g = o::mul(&c.grad()?, &d)?;
        c.set(0, g);
        Ok(())
    })
}

/// `g * k` for a constant slope `k`.
fn scaled(name: &'static str, k: f64) -> Derivative {
    derivative(name, &[], move |c| {
        let g = o::mul_s(&c.grad()?, k)?;
        c.set(0, g);
        Ok(())
    })
}

/// `1 - x²`, the shape of several derivatives.
fn one_minus_sq(x: &Tensor) -> fxvm_tensor::Result<Tensor> {
    o::add_s(&o::neg(&o::mul(x, x)?)?, 1.0)
}

/// The derivative of a unary op (its in-place form shares it).
pub(crate) fn unary_op(u: Unary) -> Option<Derivative> {
    use Unary::*;
    use std::f64::consts::{LN_2, LN_10, PI};
    Some(match u {
        Neg => derivative("NegBackward0", &[], |c| {
            let g = o::neg(&c.grad()?)?;
            c.set(0, g);
            Ok(())
        }),
        Abs => chain_in("AbsBackward0", |x| unary("sign", x)),
        Relu => derivative("ReluBackward0", OUT, |c| {
            let y = o::value(&c.output(0)?);
            let threshold = Value::Scalar(fxvm_tensor::Scalar::Int(0));
            let g = o::call(
                "threshold_backward",
                vec![o::value(&c.grad()?), y, threshold],
                vec![],
            )?;
            c.set(0, g);
            Ok(())
        }),
        Sign | Floor | Ceil | Round | Trunc => {
            let name = match u {
                Sign => "SignBackward0",
                Floor => "FloorBackward0",
                Ceil => "CeilBackward0",
                Round => "RoundBackward0",
                _ => "TruncBackward0",
            };
            derivative(name, &[], |c| {
                let g = o::mul_s(&c.grad()?, 0.0)?;
                c.set(0, g);
                Ok(())
            })
        }
        Square => chain_in("PowBackward0", |x| o::mul_s(x, 2.0)),
        Exp => chain_out("ExpBackward0", |y| Ok(y.clone())),
        Expm1 => chain_out("Expm1Backward0", |y| o::add_s(y, 1.0)),
        Exp2 => chain_out("Exp2Backward0", |y| o::mul_s(y, LN_2)),
        Log => chain_in("LogBackward0", |x| unary("reciprocal", x)),
        Log2 => chain_in("Log2Backward0", |x| {
            unary("reciprocal", &o::mul_s(x, LN_2)?)
        }),
        Log10 => chain_in("Log10Backward0", |x| {
            unary("reciprocal", &o::mul_s(x, LN_10)?)
        }),
        Log1p => chain_in("Log1PBackward0", |x| {
            unary("reciprocal", &o::add_s(x, 1.0)?)
        }),
        Sqrt => chain_out("SqrtBackward0", |y| unary("reciprocal", &o::mul_s(y, 2.0)?)),
        Rsqrt => chain_out("RsqrtBackward0", |y| o::mul_s(&o::pow_s(y, 3.0)?, -0.5)),
        Reciprocal => chain_out("ReciprocalBackward0", |y| o::neg(&o::mul(y, y)?)),
        Sin => chain_in("SinBackward0", |x| unary("cos", x)),
        Cos => chain_in("CosBackward0", |x| o::neg(&unary("sin", x)?)),
        Tan => chain_out("TanBackward0", |y| o::add_s(&o::mul(y, y)?, 1.0)),
        Asin => chain_in("AsinBackward0", |x| unary("rsqrt", &one_minus_sq(x)?)),
        Acos => chain_in("AcosBackward0", |x| {
            o::neg(&unary("rsqrt", &one_minus_sq(x)?)?)
        }),
        Atan => chain_in("AtanBackward0", |x| {
            unary("reciprocal", &o::add_s(&o::mul(x, x)?, 1.0)?)
        }),
        Sinh => chain_in("SinhBackward0", |x| unary("cosh", x)),
        Cosh => chain_in("CoshBackward0", |x| unary("sinh", x)),
        Tanh => chain_out("TanhBackward0", one_minus_sq),
        Asinh => chain_in("AsinhBackward0", |x| {
            unary("rsqrt", &o::add_s(&o::mul(x, x)?, 1.0)?)
        }),
        Acosh => chain_in("AcoshBackward0", |x| {
            unary("rsqrt", &o::add_s(&o::mul(x, x)?, -1.0)?)
        }),
        Atanh => chain_in("AtanhBackward0", |x| unary("reciprocal", &one_minus_sq(x)?)),
        Erf => chain_in("ErfBackward0", |x| {
            o::mul_s(&unary("exp", &o::neg(&o::mul(x, x)?)?)?, 2.0 / PI.sqrt())
        }),
        Erfc => chain_in("ErfcBackward0", |x| {
            o::mul_s(&unary("exp", &o::neg(&o::mul(x, x)?)?)?, -2.0 / PI.sqrt())
        }),
        Erfinv => chain_out("ErfinvBackward0", |y| {
            o::mul_s(&unary("exp", &o::mul(y, y)?)?, PI.sqrt() / 2.0)
        }),
        Sigmoid => chain_out("SigmoidBackward0", |y| {
            o::mul(y, &o::add_s(&o::neg(y)?, 1.0)?)
        }),
        Silu => chain_in("SiluBackward0", |x| {
            // σ(x) (1 + x (1 - σ(x)))
            let s = unary("sigmoid", x)?;
            let one_minus = o::add_s(&o::neg(&s)?, 1.0)?;
            o::mul(&s, &o::add_s(&o::mul(x, &one_minus)?, 1.0)?)
        }),
        Softplus => chain_in("SoftplusBackward0", softplus_slope),
        Mish => chain_in("MishBackward0", |x| {
            // tanh(sp) + x σ(x) (1 - tanh(sp)²), sp = softplus(x)
            let t = unary("tanh", &unary("softplus", x)?)?;
            let s = unary("sigmoid", x)?;
            o::add(&t, &o::mul(&o::mul(x, &s)?, &one_minus_sq(&t)?)?)
        }),
        Lgamma => chain_in("LgammaBackward0", |x| unary("digamma", x)),
        Digamma => chain_in("DigammaBackward0", |x| polygamma_of(1, x)),
        Sinc => chain_in("SincBackward0", |x| {
            // (cos(πx) πx - sin(πx)) / (π x²), 0 at x = 0.
            let px = o::mul_s(x, PI)?;
            let num = o::sub(&o::mul(&unary("cos", &px)?, &px)?, &unary("sin", &px)?)?;
            let d = o::div(&num, &o::mul_s(&o::mul(x, x)?, PI)?)?;
            o::mask(&o::cmp_s("ne", x, 0.0)?, &d)
        }),
        Deg2rad => scaled("Deg2RadBackward0", PI / 180.0),
        Rad2deg => scaled("Rad2DegBackward0", 180.0 / PI),
        _ => return None,
    })
}

/// `polygamma(n, x)` through its row.
fn polygamma_of(n: i64, x: &Tensor) -> fxvm_tensor::Result<Tensor> {
    o::call("polygamma", vec![Value::Int(n), o::value(x)], vec![])
}

/// `polygamma` with its input at `input` and its order at `order`:
/// `g * polygamma(n + 1, x)`.
pub(crate) fn polygamma(name: &'static str, input: usize, order: usize) -> Derivative {
    let saves: &'static [Save] = if input == 0 { IN } else { &[Save::In(1)] };
    derivative(name, saves, move |c| {
        let d = polygamma_of(c.int(order) + 1, &c.input(input)?)?;
        let g = o::mul(&c.grad()?, &d)?;
        c.set(input, g);
        Ok(())
    })
}

/// softplus' slope with PyTorch's defaults (β = 1, linear past 20).
fn softplus_slope(x: &Tensor) -> fxvm_tensor::Result<Tensor> {
    let s = unary("sigmoid", x)?;
    let linear = o::cmp_s("gt", x, 20.0)?;
    o::select_where(&linear, &o::add_s(&o::mul_s(x, 0.0)?, 1.0)?, &s)
}

/// `alpha` of `add`/`sub`, 1 for rows without one.
fn alpha(c: &crate::autograd::Back<'_>) -> Scalar {
    match c.value(2) {
        Value::Scalar(s) => *s,
        _ => Scalar::Int(1),
    }
}

/// `DivBackward0`, or `DivBackward2`/`3` (tensor or number divisor) when
/// the quotient is rounded.
fn div_name(values: &[Value]) -> &'static str {
    match (values.get(1), values.get(2)) {
        (Some(Value::Tensor(_)), Some(Value::Str(_))) => "DivBackward2",
        (_, Some(Value::Str(_))) => "DivBackward3",
        _ => "DivBackward0",
    }
}

/// `PowBackward0` (tensor ** number), `1` (tensor ** tensor), `2` (number ** tensor).
fn pow_name(values: &[Value]) -> &'static str {
    match (&values[0], &values[1]) {
        (Value::Tensor(_), Value::Tensor(_)) => "PowBackward1",
        (Value::Tensor(_), _) => "PowBackward0",
        _ => "PowBackward2",
    }
}

fn negated(s: Scalar) -> Scalar {
    match s {
        Scalar::Int(n) => Scalar::Int(-n),
        Scalar::Float(f) => Scalar::Float(-f),
        s => s,
    }
}

/// The derivative of a binary op (its in-place form shares it).
pub(crate) fn binary_op(b: Binary) -> Option<Derivative> {
    use Binary::*;
    Some(match b {
        Add | Sub => derivative(
            if b == Add {
                "AddBackward0"
            } else {
                "SubBackward0"
            },
            &[],
            move |c| {
                let g = c.grad()?;
                if c.needs(1) {
                    let a = if b == Sub {
                        negated(alpha(c))
                    } else {
                        alpha(c)
                    };
                    let other = match a {
                        Scalar::Int(1) => g.clone(),
                        a => o::mul_scalar(&g, a)?,
                    };
                    c.set(1, other);
                }
                c.set(0, g);
                Ok(())
            },
        ),
        Mul => derivative("MulBackward0", BOTH, |c| {
            let g = c.grad()?;
            if c.needs(0) {
                let d = match c.is_tensor(1) {
                    true => o::mul(&g, &c.input(1)?)?,
                    false => o::mul_scalar(&g, c.scalar(1))?,
                };
                c.set(0, d);
            }
            if c.needs(1) {
                let d = o::mul(&g, &c.input(0)?)?;
                c.set(1, d);
            }
            Ok(())
        }),
        Div => derivative(Name::Pick(div_name), BOTH, |c| {
            let g = c.grad()?;
            if let Value::Str(_) = c.value(2) {
                // A rounded quotient is piecewise constant: zero gradients.
                for i in 0..2 {
                    if c.needs(i) {
                        let x = c.input(i)?;
                        c.set(i, o::zeros(x.shape(), x.dtype())?);
                    }
                }
                return Ok(());
            }
            if c.needs(0) {
                let d = match c.is_tensor(1) {
                    true => o::div(&g, &c.input(1)?)?,
                    false => o::call(
                        "div",
                        vec![Value::Tensor(g.clone()), Value::Scalar(c.scalar(1))],
                        vec![],
                    )?,
                };
                c.set(0, d);
            }
            if c.needs(1) {
                // -g x / y²
                let y = c.input(1)?;
                let d = o::neg(&o::div(&o::mul(&g, &c.input(0)?)?, &o::mul(&y, &y)?)?)?;
                c.set(1, d);
            }
            Ok(())
        }),
        Pow => derivative(
            Name::Pick(pow_name),
            &[Save::In(0), Save::In(1), Save::Out(0)],
            |c| {
                let g = c.grad()?;
                if c.needs(0) {
                    let d = match c.is_tensor(1) {
                        // y x^(y-1)
                        true => {
                            let y = c.input(1)?;
                            o::mul(
                                &y,
                                &o::call(
                                    "pow",
                                    vec![
                                        Value::Tensor(c.input(0)?),
                                        Value::Tensor(o::add_s(&y, -1.0)?),
                                    ],
                                    vec![],
                                )?,
                            )?
                        }
                        false => {
                            let e = c.scalar(1).to_f64();
                            if e == 0.0 {
                                o::mul_s(&c.input(0)?, 0.0)?
                            } else {
                                o::mul_s(&o::pow_s(&c.input(0)?, e - 1.0)?, e)?
                            }
                        }
                    };
                    c.set(0, o::mul(&g, &d)?);
                }
                if c.needs(1) {
                    // x^y ln x, and 0 where x = 0 and y ≥ 0 (PyTorch's choice).
                    let out = c.output(0)?;
                    let d = match c.is_tensor(0) {
                        true => {
                            let x = c.input(0)?;
                            let y = c.input(1)?;
                            let d = o::mul(&out, &unary("log", &x)?)?;
                            let zero_base = o::call(
                                "logical_and",
                                vec![
                                    Value::Tensor(o::cmp_s("eq", &x, 0.0)?),
                                    Value::Tensor(o::cmp_s("ge", &y, 0.0)?),
                                ],
                                vec![],
                            )?;
                            o::select_where(&zero_base, &o::mul_s(&d, 0.0)?, &d)?
                        }
                        false => o::mul_s(&out, c.scalar(0).to_f64().ln())?,
                    };
                    c.set(1, o::mul(&g, &d)?);
                }
                Ok(())
            },
        ),
        Maximum | Minimum | Fmax | Fmin => derivative(
            match b {
                Maximum => "MaximumBackward0",
                Minimum => "MinimumBackward0",
                Fmax => "FmaxBackward0",
                _ => "FminBackward0",
            },
            BOTH,
            move |c| {
                // The larger (smaller) side takes the gradient; ties split it.
                let (x, y, g) = (c.input(0)?, c.input(1)?, c.grad()?);
                let wins = if matches!(b, Maximum | Fmax) {
                    "gt"
                } else {
                    "lt"
                };
                let tie = o::call(
                    "eq",
                    vec![Value::Tensor(x.clone()), Value::Tensor(y.clone())],
                    vec![],
                )?;
                let half = o::mul_s(&g, 0.5)?;
                let side = |a: &Tensor, b: &Tensor| -> fxvm_tensor::Result<Tensor> {
                    let win = o::call(
                        wins,
                        vec![Value::Tensor(a.clone()), Value::Tensor(b.clone())],
                        vec![],
                    )?;
                    o::select_where(&tie, &half, &o::mask(&win, &g)?)
                };
                if c.needs(0) {
                    let d = side(&x, &y)?;
                    c.set(0, d);
                }
                if c.needs(1) {
                    let d = side(&y, &x)?;
                    c.set(1, d);
                }
                Ok(())
            },
        ),
        Atan2 => derivative("Atan2Backward0", BOTH, |c| {
            // ∂/∂x = y/(x²+y²) for atan2(y, x): input is y, other is x.
            let (a, b, g) = (c.input(0)?, c.input(1)?, c.grad()?);
            let r = o::add(&o::mul(&a, &a)?, &o::mul(&b, &b)?)?;
            if c.needs(0) {
                let d = o::div(&o::mul(&g, &b)?, &r)?;
                c.set(0, d);
            }
            if c.needs(1) {
                let d = o::neg(&o::div(&o::mul(&g, &a)?, &r)?)?;
                c.set(1, d);
            }
            Ok(())
        }),
        Remainder | Fmod => derivative(
            Name::Pick(if b == Remainder {
                |v: &[Value]| match v[1] {
                    Value::Tensor(_) => "RemainderBackward1",
                    _ => "RemainderBackward0",
                }
            } else {
                |v: &[Value]| match v[1] {
                    Value::Tensor(_) => "FmodBackward1",
                    _ => "FmodBackward0",
                }
            }),
            BOTH,
            move |c| {
                // x - y · q(x / y): the quotient rounds down (remainder) or
                // toward zero (fmod) and has no gradient.
                let g = c.grad()?;
                if c.needs(1) {
                    let round = if b == Remainder { "floor" } else { "trunc" };
                    let q = unary(round, &o::div(&c.input(0)?, &c.input(1)?)?)?;
                    c.set(1, o::neg(&o::mul(&g, &q)?)?);
                }
                c.set(0, g);
                Ok(())
            },
        ),
        Hypot => derivative(
            "HypotBackward0",
            &[Save::In(0), Save::In(1), Save::Out(0)],
            |c| {
                let (g, r) = (c.grad()?, c.output(0)?);
                for i in 0..2 {
                    if c.needs(i) {
                        let d = o::div(&o::mul(&g, &c.input(i)?)?, &r)?;
                        c.set(i, d);
                    }
                }
                Ok(())
            },
        ),
        LogAddExp | LogAddExp2 => derivative(
            if b == LogAddExp {
                "LogaddexpBackward0"
            } else {
                "Logaddexp2Backward0"
            },
            BOTH,
            move |c| {
                // g / (1 + base^(other - self)), each side.
                let (x, y, g) = (c.input(0)?, c.input(1)?, c.grad()?);
                let power = |d: &Tensor| -> fxvm_tensor::Result<Tensor> {
                    if b == LogAddExp {
                        unary("exp", d)
                    } else {
                        unary("exp2", d)
                    }
                };
                for (i, (a, other)) in [(0, (&x, &y)), (1, (&y, &x))] {
                    if c.needs(i) {
                        let d = o::div(&g, &o::add_s(&power(&o::sub(other, a)?)?, 1.0)?)?;
                        c.set(i, d);
                    }
                }
                Ok(())
            },
        ),
        Xlogy => derivative("XlogyBackward0", BOTH, |c| {
            let (x, y, g) = (c.input(0)?, c.input(1)?, c.grad()?);
            if c.needs(0) {
                // xlogy(x ≠ 0, y): log y, and 0 where x is 0.
                let nonzero = o::to_dtype(&o::cmp_s("ne", &x, 0.0)?, g.dtype())?;
                let d = o::call(
                    "xlogy",
                    vec![Value::Tensor(nonzero), Value::Tensor(y.clone())],
                    vec![],
                )?;
                c.set(0, o::mul(&g, &d)?);
            }
            if c.needs(1) {
                c.set(1, o::div(&o::mul(&g, &x)?, &y)?);
            }
            Ok(())
        }),
        Copysign => derivative("CopysignBackward0", &[Save::In(0), Save::Out(0)], |c| {
            // ±1 by whether the sign changed, 0 at x = 0; none to `other`.
            let (x, y, g) = (c.input(0)?, c.output(0)?, c.grad()?);
            let ratio = o::div(&y, &x)?;
            let d = o::mask(&o::cmp_s("ne", &x, 0.0)?, &o::mul(&g, &ratio)?)?;
            c.set(0, d);
            if c.needs(1) {
                c.set(1, o::zeros(g.shape(), g.dtype())?);
            }
            Ok(())
        }),
        Eq | Ne | Lt | Le | Gt | Ge | LogicalAnd | LogicalOr | LogicalXor | BitwiseAnd
        | BitwiseOr | BitwiseXor | LeftShift | RightShift | Gcd | Lcm => Derivative::None,
        _ => return None,
    })
}

/// `where`: each side where it was chosen; the condition is parameter
/// `cond` and the chosen side `pick` (the method form takes `self` first).
pub(crate) fn where_(cond: usize, pick: usize) -> Derivative {
    let saves: &'static [Save] = if cond == 0 {
        &[Save::In(0)]
    } else {
        &[Save::In(1)]
    };
    derivative("WhereBackward0", saves, move |c| {
        let (mask, g) = (c.input(cond)?, c.grad()?);
        if c.needs(pick) {
            let d = o::mask(&mask, &g)?;
            c.set(pick, d);
        }
        if c.needs(2) {
            let d = o::mask(&unary("logical_not", &mask)?, &g)?;
            c.set(2, d);
        }
        Ok(())
    })
}

/// `clamp` and its one-sided forms: the gradient where the input was
/// within the bounds (parameters `lo`/`hi`, `None` when absent or unset).
pub(crate) fn clamp(lo: Option<usize>, hi: Option<usize>) -> Derivative {
    // `clamp` itself is `ClampBackward1` with one bound or two.
    let name = match (lo, hi) {
        (Some(_), None) => "ClampMinBackward0",
        (None, Some(_)) => "ClampMaxBackward0",
        _ => "ClampBackward1",
    };
    derivative(name, IN, move |c| {
        let x = c.input(0)?;
        let mut g = c.grad()?;
        for (i, keep) in [(lo, "ge"), (hi, "le")] {
            if let Some(i) = i
                && !matches!(c.value(i), Value::None)
            {
                let inside = o::cmp_s(keep, &x, c.scalar(i).to_f64())?;
                g = o::mask(&inside, &g)?;
            }
        }
        c.set(0, g);
        Ok(())
    })
}

/// `rsub(input, other, alpha)` = `other - alpha * input`.
pub(crate) fn rsub() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match values[1] {
            Value::Tensor(_) => "RsubBackward0",
            _ => "RsubBackward1",
        }
    }
    derivative(Name::Pick(name), &[], |c| {
        let g = c.grad()?;
        if c.needs(1) {
            c.set(1, g.clone());
        }
        let d = o::mul_scalar(&g, negated(alpha(c)))?;
        c.set(0, d);
        Ok(())
    })
}
