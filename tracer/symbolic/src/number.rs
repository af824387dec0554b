//! Constants: Python ints (128-bit, checked) and floats, with Python's
//! arithmetic (floor division and modulo round toward negative infinity).

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use crate::error::{Result, SymbolicError};

#[derive(Clone, Copy, Debug)]
pub enum Number {
    Int(i128),
    Float(f64),
}

impl Number {
    pub const ZERO: Number = Number::Int(0);
    pub const ONE: Number = Number::Int(1);

    pub fn is_zero(self) -> bool {
        match self {
            Number::Int(i) => i == 0,
            Number::Float(x) => x == 0.0,
        }
    }

    pub fn is_one(self) -> bool {
        match self {
            Number::Int(i) => i == 1,
            Number::Float(x) => x == 1.0,
        }
    }

    pub fn is_negative(self) -> bool {
        match self {
            Number::Int(i) => i < 0,
            Number::Float(x) => x < 0.0,
        }
    }

    pub fn to_f64(self) -> f64 {
        match self {
            Number::Int(i) => i as f64,
            Number::Float(x) => x,
        }
    }

    fn ints(self, other: Number) -> Option<(i128, i128)> {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => Some((a, b)),
            _ => None,
        }
    }

    pub fn checked_add(self, other: Number) -> Result<Number> {
        match self.ints(other) {
            Some((a, b)) => a
                .checked_add(b)
                .map(Number::Int)
                .ok_or(SymbolicError::Overflow),
            None => Ok(Number::Float(self.to_f64() + other.to_f64())),
        }
    }

    pub fn checked_mul(self, other: Number) -> Result<Number> {
        match self.ints(other) {
            Some((a, b)) => a
                .checked_mul(b)
                .map(Number::Int)
                .ok_or(SymbolicError::Overflow),
            None => Ok(Number::Float(self.to_f64() * other.to_f64())),
        }
    }

    pub fn checked_neg(self) -> Result<Number> {
        self.checked_mul(Number::Int(-1))
    }

    /// Python's `//`.
    pub fn floor_div(self, other: Number) -> Result<Number> {
        if other.is_zero() {
            return Err(SymbolicError::ZeroDivision(match self {
                Number::Int(_) if matches!(other, Number::Int(_)) => {
                    "integer division or modulo by zero"
                }
                _ => "float floor division by zero",
            }));
        }
        match self.ints(other) {
            Some((a, b)) => {
                let (q, r) = a
                    .checked_div(b)
                    .zip(a.checked_rem(b))
                    .ok_or(SymbolicError::Overflow)?;
                // Truncation, moved down when the exact quotient is negative.
                Ok(Number::Int(if r != 0 && (r < 0) != (b < 0) {
                    q - 1
                } else {
                    q
                }))
            }
            None => Ok(Number::Float((self.to_f64() / other.to_f64()).floor())),
        }
    }

    /// Python's `%`: the result takes the divisor's sign.
    pub fn modulo(self, other: Number) -> Result<Number> {
        if other.is_zero() {
            return Err(SymbolicError::ZeroDivision(match (self, other) {
                (Number::Int(_), Number::Int(_)) => "integer division or modulo by zero",
                _ => "float modulo",
            }));
        }
        match self.ints(other) {
            Some((a, b)) => {
                let r = a.checked_rem(b).ok_or(SymbolicError::Overflow)?;
                Ok(Number::Int(if r != 0 && (r < 0) != (b < 0) {
                    r + b
                } else {
                    r
                }))
            }
            None => {
                let (a, b) = (self.to_f64(), other.to_f64());
                let r = a % b;
                Ok(Number::Float(if r != 0.0 && (r < 0.0) != (b < 0.0) {
                    r + b
                } else {
                    r
                }))
            }
        }
    }

    /// Python's `/`: always a float.
    pub fn true_div(self, other: Number) -> Result<Number> {
        if other.is_zero() {
            return Err(SymbolicError::ZeroDivision("division by zero"));
        }
        Ok(Number::Float(self.to_f64() / other.to_f64()))
    }

    /// Python's `**`: an int to a non-negative int stays an int.
    pub fn pow(self, exp: Number) -> Result<Number> {
        if self.is_zero() && exp.is_negative() {
            return Err(SymbolicError::ZeroDivision(
                "0.0 cannot be raised to a negative power",
            ));
        }
        match self.ints(exp) {
            Some((b, e)) if e >= 0 => {
                let e = u32::try_from(e).map_err(|_| SymbolicError::Overflow)?;
                b.checked_pow(e)
                    .map(Number::Int)
                    .ok_or(SymbolicError::Overflow)
            }
            _ => Ok(Number::Float(self.to_f64().powf(exp.to_f64()))),
        }
    }

    fn key(self) -> (u8, i128, u64) {
        match self {
            Number::Int(i) => (0, i, 0),
            Number::Float(x) => (1, 0, x.to_bits()),
        }
    }
}

/// Structural equality (an int and the equal float are different constants,
/// as sympy's `Integer(2)` and `Float(2.0)` are).
impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Number {}

impl Hash for Number {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl PartialOrd for Number {
    fn partial_cmp(&self, other: &Number) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// By value (ints before floats of the same value), for canonical orders.
impl Ord for Number {
    fn cmp(&self, other: &Number) -> Ordering {
        self.to_f64()
            .total_cmp(&other.to_f64())
            .then_with(|| self.key().cmp(&other.key()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_division_and_modulo_round_as_python() {
        let i = Number::Int;
        for (a, b, q, r) in [
            (7, 2, 3, 1),
            (-7, 2, -4, 1),
            (7, -2, -4, -1),
            (-7, -2, 3, -1),
            (6, 3, 2, 0),
        ] {
            assert_eq!(i(a).floor_div(i(b)), Ok(i(q)), "{a} // {b}");
            assert_eq!(i(a).modulo(i(b)), Ok(i(r)), "{a} % {b}");
        }
        assert_eq!(Number::Float(-7.5).modulo(i(2)), Ok(Number::Float(0.5)));
        assert!(matches!(
            i(1).floor_div(i(0)),
            Err(SymbolicError::ZeroDivision(_))
        ));
    }

    #[test]
    fn powers_follow_python() {
        let i = Number::Int;
        assert_eq!(i(2).pow(i(10)), Ok(i(1024)));
        assert_eq!(i(5).pow(i(0)), Ok(i(1)));
        assert_eq!(i(2).pow(i(-1)), Ok(Number::Float(0.5)));
        assert_eq!(
            i(0).pow(i(-1)),
            Err(SymbolicError::ZeroDivision(
                "0.0 cannot be raised to a negative power"
            ))
        );
        assert_eq!(i(2).pow(i(200)), Err(SymbolicError::Overflow));
        assert_eq!(
            i(1).true_div(i(0)),
            Err(SymbolicError::ZeroDivision("division by zero"))
        );
    }
}
