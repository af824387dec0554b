//! Pointwise ops outside the unary/binary families: `frac`, `sgn`,
//! `round(decimals)`, `logit`, `nan_to_num`, `lerp`, `addcmul`/`addcdiv`,
//! `ldexp`.

use crate::autograd::ops::{self as o, unary};
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

/// An op whose gradient is the output's as it is (`frac`: `x - trunc x`).
pub(crate) fn pass(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = c.grad()?;
        c.set(0, g);
        Ok(())
    })
}

/// A piecewise-constant op (`sgn`, `round` with decimals): zero gradient.
pub(crate) fn flat(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = o::mul_s(&c.grad()?, 0.0)?;
        c.set(0, g);
        Ok(())
    })
}

/// `logit(input, eps)`: `g / (x (1 - x))`; with `eps`, zero outside
/// `[eps, 1 - eps]`; without, NaN outside `[0, 1]` (as PyTorch).
pub(crate) fn logit() -> Derivative {
    derivative("LogitBackward0", &[Save::In(0)], |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        let d = o::div(&g, &o::mul(&x, &o::add_s(&o::neg(&x)?, 1.0)?)?)?;
        let d = match c.value(1) {
            Value::Float(eps) => {
                let inside = o::call(
                    "logical_and",
                    vec![
                        Value::Tensor(o::cmp_s("ge", &x, *eps)?),
                        Value::Tensor(o::cmp_s("le", &x, 1.0 - eps)?),
                    ],
                    vec![],
                )?;
                o::mask(&inside, &d)?
            }
            _ => {
                let outside = o::call(
                    "logical_or",
                    vec![
                        Value::Tensor(o::cmp_s("lt", &x, 0.0)?),
                        Value::Tensor(o::cmp_s("gt", &x, 1.0)?),
                    ],
                    vec![],
                )?;
                let nan = o::add_s(&o::mul_s(&d, 0.0)?, f64::NAN)?;
                o::select_where(&outside, &nan, &d)?
            }
        };
        c.set(0, d);
        Ok(())
    })
}

/// `nan_to_num`: the gradient times whether the input was finite.
pub(crate) fn nan_to_num() -> Derivative {
    derivative("NanToNumBackward0", &[Save::In(0)], |c| {
        let g = c.grad()?;
        let finite = o::to_dtype(&unary("isfinite", &c.input(0)?)?, g.dtype())?;
        let g = o::mul(&g, &finite)?;
        c.set(0, g);
        Ok(())
    })
}

/// `lerp(input, end, weight)` = `input + weight (end - input)`.
pub(crate) fn lerp() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match values[2] {
            Value::Tensor(_) => "LerpBackward1",
            _ => "LerpBackward0",
        }
    }
    derivative(
        Name::Pick(name),
        &[Save::In(0), Save::In(1), Save::In(2)],
        |c| {
            let g = c.grad()?;
            let w = if c.is_tensor(2) {
                c.input(2)?
            } else {
                o::add_s(&o::mul_s(&g, 0.0)?, c.scalar(2).to_f64())?
            };
            if c.needs(0) {
                c.set(0, o::mul(&g, &o::add_s(&o::neg(&w)?, 1.0)?)?);
            }
            if c.needs(1) {
                c.set(1, o::mul(&g, &w)?);
            }
            if c.is_tensor(2) && c.needs(2) {
                let d = o::mul(&g, &o::sub(&c.input(1)?, &c.input(0)?)?)?;
                c.set(2, d);
            }
            Ok(())
        },
    )
}

/// `addcmul`/`addcdiv(input, tensor1, tensor2, value)`.
pub(crate) fn addc(divide: bool) -> Derivative {
    let name = if divide {
        "AddcdivBackward0"
    } else {
        "AddcmulBackward0"
    };
    derivative(name, &[Save::In(1), Save::In(2)], move |c| {
        let g = c.grad()?;
        let v = c.scalar(3);
        let (a, b) = (c.input(1)?, c.input(2)?);
        if c.needs(1) {
            let d = if divide {
                o::div(&g, &b)?
            } else {
                o::mul(&g, &b)?
            };
            c.set(1, o::mul_scalar(&d, v)?);
        }
        if c.needs(2) {
            let d = if divide {
                // -g a / b²
                o::neg(&o::div(&o::mul(&g, &a)?, &o::mul(&b, &b)?)?)?
            } else {
                o::mul(&g, &a)?
            };
            c.set(2, o::mul_scalar(&d, v)?);
        }
        c.set(0, g);
        Ok(())
    })
}

/// `ldexp(input, other)` = `input · 2^other`.
pub(crate) fn ldexp() -> Derivative {
    derivative("LdexpBackward0", &[Save::In(0), Save::In(1)], |c| {
        let (x, e, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let scale = unary("exp2", &o::to_dtype(&e, g.dtype())?)?;
        if c.needs(0) {
            c.set(0, o::mul(&g, &scale)?);
        }
        if c.needs(1) {
            let d = o::mul_s(&o::mul(&o::mul(&g, &x)?, &scale)?, std::f64::consts::LN_2)?;
            c.set(1, d);
        }
        Ok(())
    })
}
