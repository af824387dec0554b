//! Printing as PyTorch prints symbolic sizes (sympy's string printer with
//! PyTorch's functions): `2*s0 + 1`, `10 - s0`, `s0*s1 - s1 + 3`,
//! `(s0//2)`, `Mod(s0, 3)`, `IntTrueDiv(s0, 2)`, `Max(5, s0)`, `s0 < s1`,
//! `Eq(s0, 5)`.
//!
//! Terms of a sum are ordered as sympy orders them: each term's exponents
//! over all the bases in the sum (bases in sympy's sort order, `SortKey`),
//! compared lexicographically, highest first, ties broken by the
//! coefficient; except that a positive constant goes first before a single
//! negatively scaled term (`10 - s0`). Factors of a product and arguments
//! of `Min`/`Max` follow the same sort order.

use std::cmp::Ordering;
use std::fmt;

use crate::expr::{Expr, Node};
use crate::logic::Relation;
use crate::number::Number;

/// Binding strengths, as sympy's printer ranks them.
const ADD: u8 = 40;
const MUL: u8 = 50;
const POW: u8 = 60;
const ATOM: u8 = 100;
/// PyTorch's `FloorDiv` and `Mod` print below a sum, so sums and products
/// wrap them in parentheses (`((s0//2)) + 1`).
const DIVISION: u8 = 35;

fn precedence(e: &Expr) -> u8 {
    match e.node() {
        Node::Num(n) if n.is_negative() => ADD,
        Node::Add(_) => ADD,
        Node::Mul(fs) if fs[0].as_number().is_some_and(Number::is_negative) => ADD,
        Node::Mul(_) => MUL,
        Node::Pow(..) => POW,
        Node::FloorDiv(..) | Node::Mod(..) | Node::TrueDiv(..) => DIVISION,
        _ => ATOM,
    }
}

fn wrapped(e: &Expr, below: u8) -> String {
    if precedence(e) < below {
        format!("({e})")
    } else {
        e.to_string()
    }
}

fn number(n: Number) -> String {
    match n {
        Number::Int(i) => i.to_string(),
        // PyTorch's printer shows a float constant as Python's repr does.
        Number::Float(x) => format!("{x:?}"),
    }
}

/// sympy's `sort_key`, which orders the bases of a sum's terms, a product's
/// factors and `Min`/`Max` arguments: the class (numbers, symbols, sums and
/// products, PyTorch's functions, `Min`/`Max`), then the arguments (count
/// first; a sum's in printing order), then the exponent, then the
/// coefficient.
#[derive(Debug, PartialEq, PartialOrd)]
struct SortKey {
    class: (u8, u32, &'static str),
    args: (usize, Vec<KeyArg>),
    /// Absent for numbers (sympy's empty tuple, below any exponent).
    exp: Option<Box<SortKey>>,
    coeff: f64,
}

#[derive(Debug, PartialEq, PartialOrd)]
enum KeyArg {
    Name(String),
    Key(SortKey),
}

fn class_key(e: &Expr) -> (u8, u32, &'static str) {
    const FUNCTION: u32 = 10000;
    match e.node() {
        Node::Num(_) => (1, 0, "Number"),
        Node::Bool(_) | Node::Symbol(_) => (2, 0, "Symbol"),
        Node::Mul(_) => (3, 0, "Mul"),
        Node::Add(_) => (3, 1, "Add"),
        Node::Pow(..) => (3, 2, "Pow"),
        Node::FloorDiv(..) => (4, FUNCTION, "FloorDiv"),
        Node::Mod(..) => (4, FUNCTION, "Mod"),
        Node::TrueDiv(..) => (4, FUNCTION, "IntTrueDiv"),
        Node::ToFloat(_) => (4, FUNCTION, "ToFloat"),
        Node::Round(how, _) => (4, FUNCTION, how.name()),
        Node::Max(_) => (5, 0, "Max"),
        Node::Min(_) => (5, 0, "Min"),
        _ => (6, 0, "Boolean"),
    }
}

fn sort_key(e: &Expr) -> SortKey {
    if let Some(n) = e.as_number() {
        return SortKey {
            class: class_key(e),
            args: (0, Vec::new()),
            exp: None,
            coeff: n.to_f64(),
        };
    }
    let (coeff, rest) = e.split_coefficient();
    let (base, exp) = rest.base_exp();
    let keys = |xs: Vec<&Expr>| {
        xs.into_iter()
            .map(|x| KeyArg::Key(sort_key(x)))
            .collect::<Vec<_>>()
    };
    let args = match base.node() {
        Node::Symbol(name) => vec![KeyArg::Name(name.to_string())],
        Node::Bool(b) => vec![KeyArg::Name(b.to_string())],
        Node::Add(terms) => keys(ordered_terms(terms).iter().collect()),
        Node::Mul(factors) => {
            let mut fs: Vec<&Expr> = factors.iter().collect();
            fs.sort_by(|a, b| base_order(a, b));
            keys(fs)
        }
        Node::Pow(b, x) | Node::FloorDiv(b, x) | Node::Mod(b, x) | Node::TrueDiv(b, x) => {
            keys(vec![b, x])
        }
        Node::ToFloat(x) | Node::Round(_, x) | Node::Not(x) => keys(vec![x]),
        Node::Min(xs) | Node::Max(xs) | Node::And(xs) | Node::Or(xs) => keys(xs.iter().collect()),
        Node::Rel(_, a, b) => keys(vec![a, b]),
        Node::Num(_) => Vec::new(),
    };
    SortKey {
        class: class_key(&base),
        args: (args.len(), args),
        exp: Some(Box::new(sort_key(&exp))),
        coeff: coeff.to_f64(),
    }
}

/// The order sympy sorts expressions in (see `SortKey`).
fn base_order(a: &Expr, b: &Expr) -> Ordering {
    sort_key(a)
        .partial_cmp(&sort_key(b))
        .unwrap_or(Ordering::Equal)
}

/// A term's factors as (base, integer exponent), the coefficient apart.
fn powers(term: &Expr) -> (Number, Vec<(Expr, i128)>) {
    let (coefficient, rest) = term.split_coefficient();
    if rest.as_int() == Some(1) {
        return (coefficient, Vec::new());
    }
    let powers = rest
        .factors()
        .iter()
        .map(|f| {
            let (base, exp) = f.base_exp();
            match exp.as_int() {
                Some(e) => (base, e),
                None => (f.clone(), 1),
            }
        })
        .collect();
    (coefficient, powers)
}

/// The terms of a sum in the order sympy prints them.
fn ordered_terms(terms: &[Expr]) -> Vec<Expr> {
    if let [a, b] = terms {
        for (first, second) in [(a, b), (b, a)] {
            if first
                .as_number()
                .is_some_and(|n| !n.is_negative() && !n.is_zero())
                && let Node::Mul(fs) = second.node()
                && fs.len() == 2
                && fs[0].as_number().is_some_and(Number::is_negative)
            {
                return vec![first.clone(), second.clone()];
            }
        }
    }
    let split: Vec<(Number, Vec<(Expr, i128)>)> = terms.iter().map(powers).collect();
    let mut gens: Vec<Expr> = split
        .iter()
        .flat_map(|(_, ps)| ps.iter().map(|(b, _)| b.clone()))
        .collect();
    gens.sort_by(base_order);
    gens.dedup();
    let monomial = |ps: &[(Expr, i128)]| -> Vec<i128> {
        gens.iter()
            .map(|g| ps.iter().find(|(b, _)| b == g).map_or(0, |(_, e)| *e))
            .collect()
    };
    let mut keyed: Vec<(Vec<i128>, Number, Expr)> = split
        .iter()
        .zip(terms)
        .map(|((c, ps), t)| (monomial(ps), *c, t.clone()))
        .collect();
    keyed.sort_by(|(ma, ca, _), (mb, cb, _)| mb.cmp(ma).then_with(|| ca.cmp(cb)));
    keyed.into_iter().map(|(_, _, t)| t).collect()
}

fn write_sum(f: &mut fmt::Formatter<'_>, terms: &[Expr]) -> fmt::Result {
    for (i, term) in ordered_terms(terms).iter().enumerate() {
        let text = wrapped(term, ADD);
        let (sign, text) = match text.strip_prefix('-') {
            Some(rest) if !matches!(term.node(), Node::Add(_)) => ("-", rest.to_string()),
            _ => ("+", text),
        };
        match (i, sign) {
            (0, "-") => write!(f, "-{text}")?,
            (0, _) => write!(f, "{text}")?,
            _ => write!(f, " {sign} {text}")?,
        }
    }
    Ok(())
}

fn write_product(f: &mut fmt::Formatter<'_>, factors: &[Expr]) -> fmt::Result {
    let (coefficient, rest) = match factors[0].as_number() {
        Some(c) => (c, &factors[1..]),
        None => (Number::ONE, factors),
    };
    let mut ordered: Vec<&Expr> = rest.iter().collect();
    ordered.sort_by(|a, b| base_order(a, b));
    let (mut numerator, mut denominator) = (Vec::new(), Vec::new());
    for factor in ordered {
        match factor.base_exp() {
            (base, exp) if exp.as_int().is_some_and(|e| e < 0) => {
                let e = -exp.as_int().expect("checked");
                let positive = if e == 1 {
                    base
                } else {
                    Expr::new(Node::Pow(base, Expr::int(e)))
                };
                denominator.push(wrapped(&positive, MUL));
            }
            _ => numerator.push(wrapped(factor, MUL)),
        }
    }
    match coefficient {
        Number::Int(-1) => f.write_str("-")?,
        c if c.is_one() => {}
        c => numerator.insert(0, number(c)),
    }
    if numerator.is_empty() {
        numerator.push("1".into());
    }
    f.write_str(&numerator.join("*"))?;
    match denominator.len() {
        0 => Ok(()),
        1 => write!(f, "/{}", denominator[0]),
        _ => write!(f, "/({})", denominator.join("*")),
    }
}

fn write_args(f: &mut fmt::Formatter<'_>, name: &str, args: &[&Expr]) -> fmt::Result {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    write!(f, "{name}({})", args.join(", "))
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.node() {
            Node::Num(n) => f.write_str(&number(*n)),
            Node::Bool(b) => f.write_str(if *b { "True" } else { "False" }),
            Node::Symbol(name) => f.write_str(name),
            Node::Add(terms) => write_sum(f, terms),
            Node::Mul(factors) => write_product(f, factors),
            Node::Pow(base, exp) => match exp.as_int() {
                Some(-1) => write!(f, "1/{}", wrapped(base, MUL)),
                Some(e) if e < 0 => write!(f, "{}**({e})", wrapped(base, POW)),
                _ => write!(f, "{}**{}", wrapped(base, POW), wrapped(exp, POW)),
            },
            // PyTorch's FloorDiv wraps anything but an atom on either side.
            Node::FloorDiv(a, b) => write!(f, "({}//{})", wrapped(a, ATOM), wrapped(b, ATOM)),
            Node::Mod(a, b) => write_args(f, "Mod", &[a, b]),
            Node::TrueDiv(a, b) => write_args(f, "IntTrueDiv", &[a, b]),
            Node::ToFloat(x) => write_args(f, "ToFloat", &[x]),
            Node::Round(how, x) => write_args(f, how.name(), &[x]),
            Node::Min(xs) | Node::Max(xs) => {
                let mut args: Vec<&Expr> = xs.iter().collect();
                args.sort_by(|a, b| base_order(a, b));
                let name = if matches!(self.node(), Node::Max(_)) {
                    "Max"
                } else {
                    "Min"
                };
                write_args(f, name, &args)
            }
            Node::Rel(r, a, b) => match r {
                Relation::Eq => write_args(f, "Eq", &[a, b]),
                Relation::Ne => write_args(f, "Ne", &[a, b]),
                Relation::Lt => write!(f, "{a} < {b}"),
                Relation::Le => write!(f, "{a} <= {b}"),
                Relation::Gt => write!(f, "{a} > {b}"),
                Relation::Ge => write!(f, "{a} >= {b}"),
            },
            Node::Not(x) => write!(f, "~{}", bool_operand(x)),
            Node::And(xs) => {
                f.write_str(&xs.iter().map(bool_operand).collect::<Vec<_>>().join(" & "))
            }
            Node::Or(xs) => {
                f.write_str(&xs.iter().map(bool_operand).collect::<Vec<_>>().join(" | "))
            }
        }
    }
}

/// An operand of `~`, `&` or `|`: comparisons and connectives in parentheses.
fn bool_operand(e: &Expr) -> String {
    match e.node() {
        Node::Rel(r, ..) if !matches!(r, Relation::Eq | Relation::Ne) => format!("({e})"),
        Node::And(_) | Node::Or(_) => format!("({e})"),
        _ => e.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(n: &str) -> Expr {
        Expr::symbol(n)
    }

    fn i(v: i128) -> Expr {
        Expr::int(v)
    }

    /// Each expression with what sympy 1.x prints for it under PyTorch 2.15
    /// (gathered with `str()` of the same expressions built in sympy).
    #[test]
    fn prints_as_sympy_under_pytorch() {
        let (a, b, c) = (s("s0"), s("s1"), s("s2"));
        let ab = a.mul(&b).unwrap();
        let cases: Vec<(Expr, &str)> = vec![
            (i(10).sub(&a).unwrap(), "10 - s0"),
            (a.sub(&i(10)).unwrap(), "s0 - 10"),
            (b.sub(&a).unwrap(), "-s0 + s1"),
            (a.neg().unwrap().sub(&b).unwrap(), "-s0 - s1"),
            (i(2).mul(&a).unwrap().add(&i(1)).unwrap(), "2*s0 + 1"),
            (i(1).sub(&i(2).mul(&a).unwrap()).unwrap(), "1 - 2*s0"),
            (ab.sub(&b).unwrap().add(&i(3)).unwrap(), "s0*s1 - s1 + 3"),
            (i(3).sub(&ab).unwrap(), "-s0*s1 + 3"),
            (
                a.pow(&i(2)).unwrap().add(&a).unwrap().add(&i(1)).unwrap(),
                "s0**2 + s0 + 1",
            ),
            (
                a.pow(&i(2)).unwrap().sub(&i(3).mul(&a).unwrap()).unwrap(),
                "s0**2 - 3*s0",
            ),
            (c.add(&a).unwrap().add(&b).unwrap(), "s0 + s1 + s2"),
            (
                i(2).mul(&b).unwrap().add(&i(3).mul(&a).unwrap()).unwrap(),
                "3*s0 + 2*s1",
            ),
            (a.mul(&c).unwrap().add(&b).unwrap(), "s0*s2 + s1"),
            (ab.neg().unwrap(), "-s0*s1"),
            (i(-2).mul(&a).unwrap(), "-2*s0"),
            (ab.mul(&c).unwrap(), "s0*s1*s2"),
            (a.pow(&i(2)).unwrap().mul(&b).unwrap(), "s0**2*s1"),
            (
                a.pow(&i(2))
                    .unwrap()
                    .mul(&b)
                    .unwrap()
                    .add(&a.mul(&b.pow(&i(2)).unwrap()).unwrap())
                    .unwrap(),
                "s0**2*s1 + s0*s1**2",
            ),
            (a.add(&i(1)).unwrap().sub(&b).unwrap(), "s0 - s1 + 1"),
            (i(-1).sub(&a).unwrap(), "-s0 - 1"),
            (
                a.floor_div(&i(2)).unwrap().add(&i(1)).unwrap(),
                "((s0//2)) + 1",
            ),
            (
                i(2).mul(&a.floor_div(&i(2)).unwrap()).unwrap(),
                "2*((s0//2))",
            ),
            (
                a.add(&i(1)).unwrap().floor_div(&i(2)).unwrap(),
                "((s0 + 1)//2)",
            ),
            (
                a.modulo(&i(3)).unwrap().add(&a).unwrap(),
                "s0 + (Mod(s0, 3))",
            ),
            (a.mul(&b.floor_div(&i(2)).unwrap()).unwrap(), "s0*((s1//2))"),
            (
                a.maximum(&b).unwrap().add(&i(1)).unwrap(),
                "Max(s0, s1) + 1",
            ),
            (a.floor_div(&i(2)).unwrap().neg().unwrap(), "-((s0//2))"),
            (
                a.floor_div(&i(2)).unwrap().sub(&a).unwrap(),
                "-s0 + ((s0//2))",
            ),
            (i(3).minimum(&a).unwrap(), "Min(3, s0)"),
            (
                b.maximum(&a).unwrap().maximum(&i(5)).unwrap(),
                "Max(5, s0, s1)",
            ),
            // From PyTorch's SymInt arithmetic (ShapeEnv symbols renamed).
            (a.floor_div(&i(2)).unwrap(), "(s0//2)"),
            (
                i(6).mul(&a).unwrap().floor_div(&i(4)).unwrap(),
                "((3*s0)//2)",
            ),
            (a.modulo(&i(3)).unwrap(), "Mod(s0, 3)"),
            (a.add(&i(1)).unwrap().pow(&i(2)).unwrap(), "(s0 + 1)**2"),
            (a.true_div(&b).unwrap(), "IntTrueDiv(s0, s1)"),
            (a.compare(Relation::Lt, &b).unwrap(), "s0 < s1"),
            (a.compare(Relation::Eq, &i(5)).unwrap(), "Eq(s0, 5)"),
            (a.compare(Relation::Ne, &b).unwrap(), "Ne(s0, s1)"),
            (i(2).mul(&ab).unwrap().add(&b).unwrap(), "2*s0*s1 + s1"),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
    }

    #[test]
    fn floats_print_as_python_and_conversions_as_pytorch() {
        assert_eq!(Expr::float(0.5).to_string(), "0.5");
        assert_eq!(Expr::float(2.0).to_string(), "2.0");
        let s = Expr::symbol("s0");
        let half = s.true_div(&Expr::int(2)).unwrap();
        assert_eq!(
            half.add(&Expr::float(1.0)).unwrap().to_string(),
            "(IntTrueDiv(s0, 2)) + 1.0"
        );
        assert_eq!(
            Expr::float(1.5).mul(&s.to_float()).unwrap().to_string(),
            "1.5*ToFloat(s0)"
        );
        assert_eq!(
            half.round_to_int(crate::Rounding::Floor)
                .unwrap()
                .to_string(),
            "FloorToInt(IntTrueDiv(s0, 2))"
        );
        assert_eq!(
            Expr::float(2.5)
                .round_to_int(crate::Rounding::Ceil)
                .unwrap(),
            Expr::int(3)
        );
    }
}
