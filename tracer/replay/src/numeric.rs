//! Python's arithmetic on the ints and floats of a replayed graph (sizes,
//! `1.0 / math.sqrt(d)`), with its semantics: `//` and `%` floor toward
//! minus infinity, `/` is always a float, `**` of ints stays an int for a
//! non-negative exponent.

use super::value::V;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumOp {
    Add,
    Sub,
    Mul,
    TrueDiv,
    FloorDiv,
    Mod,
    Pow,
    /// `math.sqrt`, the one unary one.
    Sqrt,
}

impl NumOp {
    /// The operator (by `operator`'s function name) or `math` function.
    pub(crate) fn of(name: &str) -> Option<NumOp> {
        Some(match name {
            "add" => NumOp::Add,
            "sub" => NumOp::Sub,
            "mul" => NumOp::Mul,
            "truediv" => NumOp::TrueDiv,
            "floordiv" => NumOp::FloorDiv,
            "mod" => NumOp::Mod,
            "pow" => NumOp::Pow,
            "sqrt" => NumOp::Sqrt,
            _ => return None,
        })
    }

    pub(crate) fn unary(self) -> bool {
        self == NumOp::Sqrt
    }

    /// `a op b` (`b` None for a unary op); Err with Python's message.
    pub(crate) fn apply(self, a: &V, b: Option<&V>) -> Result<V, &'static str> {
        let num = |v: &V| match v {
            V::Int(i) => Some(Num::Int(*i)),
            V::Bool(b) => Some(Num::Int(*b as i64)),
            V::Float(f) => Some(Num::Float(*f)),
            _ => None,
        };
        let a = num(a).ok_or("an operand that is not a number")?;
        if self == NumOp::Sqrt {
            let x = a.float();
            return if x < 0.0 {
                Err("math domain error")
            } else {
                Ok(V::Float(x.sqrt()))
            };
        }
        let b = b.and_then(num).ok_or("an operand that is not a number")?;
        if let (Num::Int(x), Num::Int(y)) = (a, b) {
            let overflow = "integer overflow";
            return match self {
                NumOp::Add => x.checked_add(y).map(V::Int).ok_or(overflow),
                NumOp::Sub => x.checked_sub(y).map(V::Int).ok_or(overflow),
                NumOp::Mul => x.checked_mul(y).map(V::Int).ok_or(overflow),
                NumOp::FloorDiv | NumOp::Mod if y == 0 => Err("integer division or modulo by zero"),
                NumOp::FloorDiv => Ok(V::Int(
                    x.div_euclid(y) - i64::from(y < 0 && x.rem_euclid(y) != 0),
                )),
                NumOp::Mod => Ok(V::Int(((x % y) + y) % y)),
                NumOp::TrueDiv if y == 0 => Err("division by zero"),
                NumOp::TrueDiv => Ok(V::Float(x as f64 / y as f64)),
                NumOp::Pow if y >= 0 => u32::try_from(y)
                    .ok()
                    .and_then(|e| x.checked_pow(e))
                    .map(V::Int)
                    .ok_or(overflow),
                NumOp::Pow => Ok(V::Float((x as f64).powf(y as f64))),
                NumOp::Sqrt => unreachable!("handled above"),
            };
        }
        let (x, y) = (a.float(), b.float());
        Ok(V::Float(match self {
            NumOp::Add => x + y,
            NumOp::Sub => x - y,
            NumOp::Mul => x * y,
            NumOp::TrueDiv | NumOp::FloorDiv | NumOp::Mod if y == 0.0 => {
                return Err("float division by zero");
            }
            NumOp::TrueDiv => x / y,
            NumOp::FloorDiv => (x / y).floor(),
            NumOp::Mod => x - y * (x / y).floor(),
            NumOp::Pow => x.powf(y),
            NumOp::Sqrt => unreachable!("handled above"),
        }))
    }
}

#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Float(f64),
}

impl Num {
    fn float(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(v: &V) -> i64 {
        match v {
            V::Int(i) => *i,
            other => panic!("not an int: {other:?}"),
        }
    }

    #[test]
    fn floor_division_and_modulo_follow_python() {
        for (a, b) in [(7, 2), (-7, 2), (7, -2), (-7, -2), (6, -3), (0, 5)] {
            let q = int(&NumOp::FloorDiv.apply(&V::Int(a), Some(&V::Int(b))).unwrap());
            let r = int(&NumOp::Mod.apply(&V::Int(a), Some(&V::Int(b))).unwrap());
            assert_eq!(q, (a as f64 / b as f64).floor() as i64, "{a} // {b}");
            assert_eq!(q * b + r, a, "{a} % {b}");
            assert!(
                r == 0 || (r < 0) == (b < 0),
                "{a} % {b} = {r} takes the divisor's sign"
            );
        }
        assert!(NumOp::FloorDiv.apply(&V::Int(1), Some(&V::Int(0))).is_err());
    }

    #[test]
    fn true_division_is_a_float_and_pow_of_ints_stays_an_int() {
        assert!(
            matches!(NumOp::TrueDiv.apply(&V::Int(1), Some(&V::Int(2))), Ok(V::Float(x)) if x == 0.5)
        );
        assert!(matches!(
            NumOp::Pow.apply(&V::Int(3), Some(&V::Int(4))),
            Ok(V::Int(81))
        ));
        assert!(
            matches!(NumOp::Pow.apply(&V::Int(2), Some(&V::Int(-1))), Ok(V::Float(x)) if x == 0.5)
        );
        assert!(matches!(NumOp::Sqrt.apply(&V::Int(16), None), Ok(V::Float(x)) if x == 4.0));
        assert!(
            matches!(NumOp::FloorDiv.apply(&V::Float(7.5), Some(&V::Int(2))), Ok(V::Float(x)) if x == 3.0)
        );
        assert_eq!(
            NumOp::Sqrt.apply(&V::Int(-1), None).unwrap_err(),
            "math domain error"
        );
    }
}
