//! Terms as monomials — an integer coefficient times powers of bases — for
//! the divisibility PyTorch's `FloorDiv` and `Mod` ask sympy's `gcd` about:
//! `(128*s0) // (2*s0)` is `64`, `Mod(6*s0*s1, 3*s0)` is `0`.

use crate::Result;
use crate::expr::{Expr, Node, gcd};
use crate::number::Number;

/// `coefficient * Π base^exponent`, bases sorted.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Monomial {
    coefficient: i128,
    powers: Vec<(Expr, i128)>,
}

impl Monomial {
    /// The monomial `term` is; `None` for float coefficients or
    /// non-integer exponents.
    pub(crate) fn of(term: &Expr) -> Option<Monomial> {
        let (c, rest) = term.split_coefficient();
        let Number::Int(coefficient) = c else {
            return None;
        };
        let mut powers = Vec::new();
        if rest.as_int() != Some(1) {
            for f in rest.factors() {
                match f.node() {
                    Node::Pow(base, exp) => powers.push((base.clone(), exp.as_int()?)),
                    _ => powers.push((f.clone(), 1)),
                }
            }
        }
        powers.sort();
        Some(Monomial {
            coefficient,
            powers,
        })
    }

    pub(crate) fn is_one(&self) -> bool {
        self.coefficient.abs() == 1 && self.powers.is_empty()
    }

    fn power_of(&self, base: &Expr) -> i128 {
        self.powers
            .iter()
            .find(|(b, _)| b == base)
            .map_or(0, |(_, e)| *e)
    }

    /// Whether `self` divides `other` exactly.
    pub(crate) fn divides(&self, other: &Monomial) -> bool {
        self.coefficient != 0
            && other.coefficient % self.coefficient == 0
            && self
                .powers
                .iter()
                .all(|(b, e)| *e > 0 && other.power_of(b) >= *e)
    }

    /// The integer gcd of the coefficients, times the factors (`s0`,
    /// `s1**2`) both have exactly: PyTorch's fast gcd compares factors
    /// whole, so `s0**2` and `s0` share none.
    fn simple_gcd(&self, other: &Monomial) -> Monomial {
        let powers = self
            .powers
            .iter()
            .filter(|(b, e)| matches!(b.node(), Node::Symbol(_)) && other.power_of(b) == *e)
            .cloned()
            .collect();
        Monomial {
            coefficient: gcd(self.coefficient, other.coefficient),
            powers,
        }
    }

    pub(crate) fn to_expr(&self) -> Result<Expr> {
        self.powers
            .iter()
            .try_fold(Expr::int(self.coefficient), |acc, (b, e)| {
                acc.mul(&b.pow(&Expr::int(*e))?)
            })
    }
}

/// The common factor of `e`'s terms and `divisor` other than 1, when all
/// are monomials.
pub(crate) fn common_factor(e: &Expr, divisor: &Expr) -> Option<Monomial> {
    let g = e.terms().iter().try_fold(Monomial::of(divisor)?, |g, t| {
        Some(g.simple_gcd(&Monomial::of(t)?))
    })?;
    (!g.is_one()).then_some(g)
}

/// `e / m` for a monomial dividing every term of `e`.
pub(crate) fn divide(e: &Expr, m: &Monomial) -> Result<Expr> {
    let terms = e
        .terms()
        .iter()
        .map(|t| {
            let mut q = Monomial::of(t).expect("a monomial term");
            q.coefficient /= m.coefficient;
            for (b, exp) in &m.powers {
                let p = q
                    .powers
                    .iter_mut()
                    .find(|(x, _)| x == b)
                    .expect("divisible");
                p.1 -= exp;
            }
            q.powers.retain(|(_, e)| *e != 0);
            q.to_expr()
        })
        .collect::<Result<Vec<_>>>()?;
    crate::expr::sum(terms)
}
