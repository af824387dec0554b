//! Expressions and the constructors that keep them canonical: sums and
//! products flattened, like terms and like bases merged, constants folded,
//! numeric coefficients distributed over a sum (`2*(s0 + 1)` is
//! `2*s0 + 2`), and PyTorch's rules for `FloorDiv`, `Mod` and `TrueDiv`.
//! Two expressions built from equal parts are equal, structurally.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::error::{Result, SymbolicError};
use crate::logic::Relation;
use crate::monomial::{self, Monomial};
use crate::number::Number;

/// A shared, immutable expression.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Expr(Arc<Node>);

#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    Num(Number),
    Bool(bool),
    Symbol(Arc<str>),
    /// At least two terms, no sums among them, at most one constant.
    Add(Vec<Expr>),
    /// At least two factors, no products among them, at most one constant.
    Mul(Vec<Expr>),
    Pow(Expr, Expr),
    /// Python's `//` on sizes (`FloorDiv` in PyTorch).
    FloorDiv(Expr, Expr),
    /// Python's `%` on sizes (`Mod`).
    Mod(Expr, Expr),
    /// `/` of two sizes, a float (`IntTrueDiv`).
    TrueDiv(Expr, Expr),
    Min(Vec<Expr>),
    Max(Vec<Expr>),
    /// An int as a float, where int and float values meet (`ToFloat`).
    ToFloat(Expr),
    /// A float rounded to an int: `math.floor`, `math.ceil`, `int()`'s truncation.
    Round(Rounding, Expr),
    Rel(Relation, Expr, Expr),
    Not(Expr),
    And(Vec<Expr>),
    Or(Vec<Expr>),
}

/// How a float becomes an int.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rounding {
    Floor,
    Ceil,
    Trunc,
}

impl Rounding {
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Floor => "FloorToInt",
            Rounding::Ceil => "CeilToInt",
            Rounding::Trunc => "TruncToInt",
        }
    }

    pub(crate) fn apply(self, x: f64) -> f64 {
        match self {
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
            Rounding::Trunc => x.trunc(),
        }
    }
}

impl Expr {
    pub(crate) fn new(node: Node) -> Expr {
        Expr(Arc::new(node))
    }

    pub fn node(&self) -> &Node {
        &self.0
    }

    pub fn symbol(name: &str) -> Expr {
        Expr::new(Node::Symbol(name.into()))
    }

    pub fn int(value: i128) -> Expr {
        Expr::new(Node::Num(Number::Int(value)))
    }

    pub fn float(value: f64) -> Expr {
        Expr::new(Node::Num(Number::Float(value)))
    }

    pub fn number(value: Number) -> Expr {
        Expr::new(Node::Num(value))
    }

    pub fn boolean(value: bool) -> Expr {
        Expr::new(Node::Bool(value))
    }

    /// The constant this expression is, if it is one.
    pub fn as_number(&self) -> Option<Number> {
        match self.node() {
            Node::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i128> {
        match self.node() {
            Node::Num(Number::Int(i)) => Some(*i),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self.node() {
            Node::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The terms of a sum, or the expression alone (sympy's `Add.make_args`).
    pub(crate) fn terms(&self) -> &[Expr] {
        match self.node() {
            Node::Add(ts) => ts,
            _ => std::slice::from_ref(self),
        }
    }

    /// The factors of a product, or the expression alone (`Mul.make_args`).
    pub(crate) fn factors(&self) -> &[Expr] {
        match self.node() {
            Node::Mul(fs) => fs,
            _ => std::slice::from_ref(self),
        }
    }

    /// The coefficient and the rest of a term: `3*s0*s1` is `(3, s0*s1)`,
    /// `s0` is `(1, s0)`, `5` is `(5, 1)`.
    pub(crate) fn split_coefficient(&self) -> (Number, Expr) {
        match self.node() {
            Node::Num(n) => (*n, Expr::int(1)),
            Node::Mul(factors) => match factors[0].as_number() {
                Some(c) => {
                    let rest = factors[1..].to_vec();
                    let rest = if rest.len() == 1 {
                        rest[0].clone()
                    } else {
                        Expr::new(Node::Mul(rest))
                    };
                    (c, rest)
                }
                None => (Number::ONE, self.clone()),
            },
            _ => (Number::ONE, self.clone()),
        }
    }

    /// `self + other`.
    pub fn add(&self, other: &Expr) -> Result<Expr> {
        sum([self.clone(), other.clone()])
    }

    /// `self - other`.
    pub fn sub(&self, other: &Expr) -> Result<Expr> {
        self.add(&other.neg()?)
    }

    /// `-self`.
    pub fn neg(&self) -> Result<Expr> {
        self.mul(&Expr::int(-1))
    }

    /// `self * other`.
    pub fn mul(&self, other: &Expr) -> Result<Expr> {
        product([self.clone(), other.clone()])
    }

    /// `self ** exp`: `b**0` is 1, constants fold, integer powers of
    /// powers and products distribute.
    pub fn pow(&self, exp: &Expr) -> Result<Expr> {
        if let (Some(b), Some(e)) = (self.as_number(), exp.as_number()) {
            return Ok(Expr::number(b.pow(e)?));
        }
        match exp.as_int() {
            Some(0) => return Ok(Expr::int(1)),
            Some(1) => return Ok(self.clone()),
            Some(_) => match self.node() {
                Node::Pow(base, inner) if inner.as_int().is_some() => {
                    return base.pow(&inner.mul(exp)?);
                }
                Node::Mul(factors) => {
                    let powers = factors
                        .iter()
                        .map(|f| f.pow(exp))
                        .collect::<Result<Vec<_>>>()?;
                    return product(powers);
                }
                _ => {}
            },
            None => {}
        }
        if self.as_int() == Some(1) {
            return Ok(self.clone());
        }
        Ok(Expr::new(Node::Pow(self.clone(), exp.clone())))
    }

    /// The base and exponent of a factor: `s0**2` is `(s0, 2)`, `s0` is `(s0, 1)`.
    pub(crate) fn base_exp(&self) -> (Expr, Expr) {
        match self.node() {
            Node::Pow(b, e) => (b.clone(), e.clone()),
            _ => (self.clone(), Expr::int(1)),
        }
    }

    /// Whether the value is an integer whatever the symbols are (symbols
    /// stand for sizes, which are).
    pub fn is_integer(&self) -> bool {
        match self.node() {
            Node::Num(n) => matches!(n, Number::Int(_)),
            Node::Symbol(_) | Node::FloorDiv(..) | Node::Mod(..) | Node::Round(..) => true,
            Node::Add(xs) | Node::Mul(xs) | Node::Min(xs) | Node::Max(xs) => {
                xs.iter().all(Expr::is_integer)
            }
            Node::Pow(b, e) => b.is_integer() && e.as_int().is_some_and(|e| e >= 0),
            _ => false,
        }
    }
}

/// The canonical sum of `terms`.
pub fn sum(terms: impl IntoIterator<Item = Expr>) -> Result<Expr> {
    let mut constant = Number::ZERO;
    let mut like: BTreeMap<Expr, Number> = BTreeMap::new();
    let mut push = |term: &Expr, constant: &mut Number| -> Result<()> {
        let (c, rest) = term.split_coefficient();
        if rest.as_int() == Some(1) {
            *constant = constant.checked_add(c)?;
        } else {
            let entry = like.entry(rest).or_insert(Number::ZERO);
            *entry = entry.checked_add(c)?;
        }
        Ok(())
    };
    for term in terms {
        for t in term.terms() {
            push(t, &mut constant)?;
        }
    }
    let mut out: Vec<Expr> = like
        .into_iter()
        .filter(|(_, c)| !c.is_zero())
        .map(|(rest, c)| with_coefficient(c, rest))
        .collect();
    if !constant.is_zero() || out.is_empty() {
        out.push(Expr::number(constant));
    }
    out.sort();
    Ok(if out.len() == 1 {
        out.pop().expect("one term")
    } else {
        Expr::new(Node::Add(out))
    })
}

/// `c * rest` for a product `rest` without a coefficient.
fn with_coefficient(c: Number, rest: Expr) -> Expr {
    if c.is_one() {
        return rest;
    }
    let mut factors = vec![Expr::number(c)];
    factors.extend(rest.factors().iter().cloned());
    Expr::new(Node::Mul(factors))
}

/// The canonical product of `factors`.
pub fn product(factors: impl IntoIterator<Item = Expr>) -> Result<Expr> {
    let mut coefficient = Number::ONE;
    let mut bases: BTreeMap<Expr, Expr> = BTreeMap::new();
    let mut push = |f: &Expr, coefficient: &mut Number| -> Result<()> {
        match f.node() {
            Node::Num(n) => *coefficient = coefficient.checked_mul(*n)?,
            _ => {
                let (base, exp) = f.base_exp();
                let total = match bases.remove(&base) {
                    Some(e) => e.add(&exp)?,
                    None => exp,
                };
                bases.insert(base, total);
            }
        }
        Ok(())
    };
    for f in factors {
        for g in f.factors() {
            push(g, &mut coefficient)?;
        }
    }
    if coefficient.is_zero() && matches!(coefficient, Number::Int(_)) {
        return Ok(Expr::int(0));
    }
    let mut rest = Vec::new();
    for (base, exp) in bases {
        let power = base.pow(&exp)?;
        match power.node() {
            Node::Num(n) => coefficient = coefficient.checked_mul(*n)?,
            _ => rest.extend(power.factors().iter().cloned()),
        }
    }
    rest.sort();
    // A number times one sum distributes, as sympy's products do.
    if rest.len() == 1
        && !coefficient.is_one()
        && let Node::Add(terms) = rest[0].node()
    {
        let scaled = terms
            .iter()
            .map(|t| t.mul(&Expr::number(coefficient)))
            .collect::<Result<Vec<_>>>()?;
        return sum(scaled);
    }
    Ok(match rest.len() {
        0 => Expr::number(coefficient),
        1 if coefficient.is_one() => rest.pop().expect("one factor"),
        _ => {
            if !coefficient.is_one() {
                rest.insert(0, Expr::number(coefficient));
            }
            Expr::new(Node::Mul(rest))
        }
    })
}

/// The integer content of an integer polynomial: the gcd of its
/// coefficients (and constant), positive.
fn content(e: &Expr) -> Option<i128> {
    let terms = e.terms();
    let mut g = 0i128;
    for t in terms {
        match t.split_coefficient().0 {
            Number::Int(c) => g = gcd(g, c),
            Number::Float(_) => return None,
        }
    }
    (g != 0).then_some(g)
}

pub(crate) fn gcd(a: i128, b: i128) -> i128 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i128
}

/// `e / k` for an integer `k` dividing `e`'s content exactly.
fn divide_exact(e: &Expr, k: i128) -> Result<Expr> {
    let terms = e.terms();
    let scaled = terms
        .iter()
        .map(|t| {
            let (c, rest) = t.split_coefficient();
            let Number::Int(c) = c else {
                unreachable!("integer content")
            };
            rest.mul(&Expr::int(c / k))
        })
        .collect::<Result<Vec<_>>>()?;
    sum(scaled)
}

impl Expr {
    /// `self // divisor`, with PyTorch's rules: zero numerator, divisor 1,
    /// integer folding, nested divisions merging divisors, a term divisible
    /// by the divisor pulled out of a sum, and numerator and divisor divided
    /// by their common integer factor.
    pub fn floor_div(&self, divisor: &Expr) -> Result<Expr> {
        if divisor.as_number().is_some_and(Number::is_zero) {
            return Err(SymbolicError::ZeroDivision(
                "integer division or modulo by zero",
            ));
        }
        if self.as_number().is_some_and(Number::is_zero) {
            return Ok(Expr::int(0));
        }
        if divisor.as_int() == Some(1) {
            return Ok(self.clone());
        }
        if let (Some(a), Some(b)) = (self.as_number(), divisor.as_number()) {
            return Ok(Expr::number(a.floor_div(b)?));
        }
        if let (Node::FloorDiv(inner, d), Some(_)) = (self.node(), divisor.as_int())
            && d.as_int().is_some()
        {
            return inner.floor_div(&d.mul(divisor)?);
        }
        if let (Node::Add(terms), Some(k)) = (self.node(), divisor.as_int()) {
            for t in terms {
                if let Number::Int(c) = t.split_coefficient().0
                    && c % k == 0
                {
                    let rest = self.sub(t)?;
                    return rest.floor_div(divisor)?.add(&divide_exact(t, k)?);
                }
            }
        }
        if let (Some(g), Some(k)) = (content(self), divisor.as_int()) {
            let g = gcd(g, k);
            if g != 1 {
                return divide_exact(self, g)?.floor_div(&Expr::int(k / g));
            }
        }
        // A symbolic divisor: numerator and divisor divided by their common
        // factor — integers, and symbols every term has to the first power,
        // as PyTorch's fast gcd finds them.
        if divisor.as_int().is_none()
            && let Some(g) = monomial::common_factor(self, divisor)
        {
            return monomial::divide(self, &g)?.floor_div(&monomial::divide(divisor, &g)?);
        }
        Ok(Expr::new(Node::FloorDiv(self.clone(), divisor.clone())))
    }

    /// `self % divisor`, with PyTorch's rules: zero by zero, zero or equal
    /// numerator, integer folding, divisor 1, multiples of the divisor
    /// dropped from a sum, and a common integer factor taken out.
    pub fn modulo(&self, divisor: &Expr) -> Result<Expr> {
        if divisor.as_number().is_some_and(Number::is_zero) {
            return Err(SymbolicError::ZeroDivision("Modulo by zero"));
        }
        if self.as_number().is_some_and(Number::is_zero)
            || self == divisor
            || divisor.as_int() == Some(1)
        {
            return Ok(Expr::int(0));
        }
        if let (Some(a), Some(b)) = (self.as_number(), divisor.as_number()) {
            return Ok(Expr::number(a.modulo(b)?));
        }
        if let Some(k) = divisor.as_int() {
            let terms = self.terms();
            let kept: Vec<Expr> = terms
                .iter()
                .filter(|t| !matches!(t.split_coefficient().0, Number::Int(c) if c % k == 0))
                .cloned()
                .collect();
            if kept.len() != terms.len() {
                return sum(kept)?.modulo(divisor);
            }
            if let Some(g) = content(self).map(|g| gcd(g, k))
                && g != 1
            {
                return divide_exact(self, g)?
                    .modulo(&Expr::int(k / g))?
                    .mul(&Expr::int(g));
            }
        } else if let (Some(d), Some(p)) = (Monomial::of(divisor), Monomial::of(self))
            && d.divides(&p)
        {
            // A multiple of the divisor (PyTorch: `(p / q).is_integer`).
            return Ok(Expr::int(0));
        }
        Ok(Expr::new(Node::Mod(self.clone(), divisor.clone())))
    }

    /// `self / divisor` of sizes, a float: constants fold, division by zero
    /// raises.
    pub fn true_div(&self, divisor: &Expr) -> Result<Expr> {
        if divisor.as_number().is_some_and(Number::is_zero) {
            return Err(SymbolicError::ZeroDivision("division by zero"));
        }
        if let (Some(a), Some(b)) = (self.as_number(), divisor.as_number()) {
            return Ok(Expr::number(a.true_div(b)?));
        }
        Ok(Expr::new(Node::TrueDiv(self.clone(), divisor.clone())))
    }

    /// This int as a float (a constant folds).
    pub fn to_float(&self) -> Expr {
        match self.as_number() {
            Some(n) => Expr::float(n.to_f64()),
            None if self.is_integer() => Expr::new(Node::ToFloat(self.clone())),
            None => self.clone(),
        }
    }

    /// This float rounded to an int (a constant folds).
    pub fn round_to_int(&self, how: Rounding) -> Result<Expr> {
        match self.as_number() {
            Some(n) => {
                let r = how.apply(n.to_f64());
                if !r.is_finite() || r.abs() >= 1.7e38 {
                    return Err(SymbolicError::Overflow);
                }
                Ok(Expr::int(r as i128))
            }
            None => Ok(Expr::new(Node::Round(how, self.clone()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> Expr {
        Expr::symbol(name)
    }

    fn i(v: i128) -> Expr {
        Expr::int(v)
    }

    #[test]
    fn like_terms_merge_and_constants_fold() {
        let (a, b) = (s("s0"), s("s1"));
        let e = a.add(&i(1)).unwrap().add(&a).unwrap();
        assert_eq!(e, i(2).mul(&a).unwrap().add(&i(1)).unwrap());
        assert_eq!(a.sub(&a).unwrap(), i(0));
        assert_eq!(a.mul(&i(0)).unwrap(), i(0));
        assert_eq!(a.mul(&b).unwrap(), b.mul(&a).unwrap());
        assert_eq!(a.mul(&a).unwrap(), a.pow(&i(2)).unwrap());
        assert_eq!(
            i(2).mul(&a.add(&i(1)).unwrap()).unwrap(),
            i(2).mul(&a).unwrap().add(&i(2)).unwrap()
        );
        assert_eq!(a.pow(&i(0)).unwrap(), i(1));
        assert_eq!(
            a.pow(&i(2)).unwrap().pow(&i(3)).unwrap(),
            a.pow(&i(6)).unwrap()
        );
    }

    #[test]
    fn floor_division_rules() {
        let a = s("s0");
        assert_eq!(i(0).floor_div(&a).unwrap(), i(0));
        assert_eq!(a.floor_div(&i(1)).unwrap(), a);
        assert_eq!(i(-7).floor_div(&i(2)).unwrap(), i(-4));
        assert_eq!(
            a.floor_div(&i(0)),
            Err(SymbolicError::ZeroDivision(
                "integer division or modulo by zero"
            ))
        );
        // Nested divisions merge their divisors.
        let nested = a.floor_div(&i(2)).unwrap().floor_div(&i(3)).unwrap();
        assert_eq!(nested, a.floor_div(&i(6)).unwrap());
        // A divisible term comes out of the sum: (4*s0 + 2)//2 = 2*s0 + 1.
        let four = i(4).mul(&a).unwrap().add(&i(2)).unwrap();
        assert_eq!(
            four.floor_div(&i(2)).unwrap(),
            i(2).mul(&a).unwrap().add(&i(1)).unwrap()
        );
        // The common factor divides out: (6*s0)//4 = (3*s0)//2; (2*s0)//2 = s0.
        let six = i(6).mul(&a).unwrap();
        let three = i(3).mul(&a).unwrap();
        assert_eq!(
            six.floor_div(&i(4)).unwrap(),
            Expr::new(Node::FloorDiv(three, i(2)))
        );
        assert_eq!(i(2).mul(&a).unwrap().floor_div(&i(2)).unwrap(), a);
        // Nothing to simplify: a node.
        let plus = a.add(&i(1)).unwrap();
        assert!(matches!(
            plus.floor_div(&i(2)).unwrap().node(),
            Node::FloorDiv(..)
        ));
    }

    #[test]
    fn modulo_rules() {
        let a = s("s0");
        assert_eq!(
            a.modulo(&i(0)),
            Err(SymbolicError::ZeroDivision("Modulo by zero"))
        );
        assert_eq!(a.modulo(&a).unwrap(), i(0));
        assert_eq!(a.modulo(&i(1)).unwrap(), i(0));
        assert_eq!(i(-7).modulo(&i(3)).unwrap(), i(2));
        // Multiples of the divisor drop out: (3*s0 + 4) % 3 = 1.
        let e = i(3).mul(&a).unwrap().add(&i(4)).unwrap();
        assert_eq!(e.modulo(&i(3)).unwrap(), i(1));
        // A common factor comes out: (2*s0) % 6 = 2*Mod(s0, 3).
        let twice = i(2).mul(&a).unwrap();
        let inner = Expr::new(Node::Mod(a.clone(), i(3)));
        assert_eq!(twice.modulo(&i(6)).unwrap(), i(2).mul(&inner).unwrap());
    }

    #[test]
    fn true_division_is_a_float_and_refuses_zero() {
        let a = s("s0");
        assert_eq!(i(1).true_div(&i(2)).unwrap(), Expr::float(0.5));
        assert_eq!(
            a.true_div(&i(0)),
            Err(SymbolicError::ZeroDivision("division by zero"))
        );
        assert!(!a.true_div(&i(2)).unwrap().is_integer());
        assert!(a.floor_div(&i(2)).unwrap().is_integer());
    }

    #[test]
    fn huge_constants_are_an_error_not_a_wrap() {
        let big = i(i128::MAX);
        assert_eq!(big.add(&i(1)), Err(SymbolicError::Overflow));
    }
}
