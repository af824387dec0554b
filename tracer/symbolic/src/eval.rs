//! Evaluating an expression under values for its symbols, with Python's
//! semantics; and substituting expressions for symbols.

use std::collections::HashMap;

use crate::error::{Result, SymbolicError};
use crate::expr::{Expr, Node, product, sum};
use crate::number::Number;

/// A Python value an expression evaluates to.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Bool(bool),
}

impl Value {
    fn number(self) -> Result<Number> {
        match self {
            Value::Int(i) => Ok(Number::Int(i)),
            Value::Float(x) => Ok(Number::Float(x)),
            Value::Bool(_) => Err(SymbolicError::Type(
                "a boolean where a number was expected".into(),
            )),
        }
    }

    fn from_number(n: Number) -> Value {
        match n {
            Number::Int(i) => Value::Int(i),
            Number::Float(x) => Value::Float(x),
        }
    }

    fn truth(self) -> Result<bool> {
        match self {
            Value::Bool(b) => Ok(b),
            _ => Err(SymbolicError::Type(
                "a number where a boolean was expected".into(),
            )),
        }
    }
}

impl Expr {
    /// The value under `bindings` (symbol name → value).
    pub fn eval(&self, bindings: &HashMap<String, Value>) -> Result<Value> {
        let num = |e: &Expr| e.eval(bindings)?.number();
        let fold = |xs: &[Expr], f: fn(Number, Number) -> Result<Number>| -> Result<Value> {
            let mut acc = num(&xs[0])?;
            for x in &xs[1..] {
                acc = f(acc, num(x)?)?;
            }
            Ok(Value::from_number(acc))
        };
        Ok(match self.node() {
            Node::Num(n) => Value::from_number(*n),
            Node::Bool(b) => Value::Bool(*b),
            Node::Symbol(name) => *bindings
                .get(&**name)
                .ok_or_else(|| SymbolicError::Unbound(name.to_string()))?,
            Node::Add(xs) => fold(xs, Number::checked_add)?,
            Node::Mul(xs) => fold(xs, Number::checked_mul)?,
            Node::Pow(b, e) => Value::from_number(num(b)?.pow(num(e)?)?),
            Node::FloorDiv(a, b) => Value::from_number(num(a)?.floor_div(num(b)?)?),
            Node::Mod(a, b) => Value::from_number(num(a)?.modulo(num(b)?)?),
            Node::TrueDiv(a, b) => Value::from_number(num(a)?.true_div(num(b)?)?),
            Node::ToFloat(x) => Value::Float(num(x)?.to_f64()),
            Node::Round(how, x) => match Expr::number(num(x)?).round_to_int(*how)?.as_number() {
                Some(n) => Value::from_number(n),
                None => unreachable!("a constant rounds to a constant"),
            },
            Node::Min(xs) => fold(xs, |a, b| Ok(if b < a { b } else { a }))?,
            Node::Max(xs) => fold(xs, |a, b| Ok(if b > a { b } else { a }))?,
            Node::Rel(r, a, b) => {
                let folded = Expr::number(num(a)?).compare(*r, &Expr::number(num(b)?))?;
                Value::Bool(folded.as_bool().expect("constants compare to a boolean"))
            }
            Node::Not(x) => Value::Bool(!x.eval(bindings)?.truth()?),
            Node::And(xs) => {
                let mut all = true;
                for x in xs {
                    all &= x.eval(bindings)?.truth()?;
                }
                Value::Bool(all)
            }
            Node::Or(xs) => {
                let mut any = false;
                for x in xs {
                    any |= x.eval(bindings)?.truth()?;
                }
                Value::Bool(any)
            }
        })
    }

    /// The value of the one symbol for which this expression, `a*s + b`
    /// with integers `a != 0` and `b`, equals `value`: how a guard
    /// `Eq(2*s0 + 1, 11)` pins `s0` to 5. None for any other shape, or
    /// when no integer solves it.
    pub fn solve_linear(&self, value: i128) -> Option<(String, i128)> {
        let (constant, term) = match self.node() {
            Node::Add(ts) if ts.len() == 2 => (ts[0].as_int()?, &ts[1]),
            _ => (0, self),
        };
        let (a, rest) = term.split_coefficient();
        let (Number::Int(a), Node::Symbol(name)) = (a, rest.node()) else {
            return None;
        };
        let diff = value.checked_sub(constant)?;
        (a != 0 && diff % a == 0).then(|| (name.to_string(), diff / a))
    }

    /// The names of the symbols in this expression, sorted.
    pub fn free_symbols(&self) -> Vec<String> {
        fn walk(e: &Expr, out: &mut std::collections::BTreeSet<String>) {
            match e.node() {
                Node::Num(_) | Node::Bool(_) => {}
                Node::Symbol(name) => {
                    out.insert(name.to_string());
                }
                Node::Add(xs)
                | Node::Mul(xs)
                | Node::Min(xs)
                | Node::Max(xs)
                | Node::And(xs)
                | Node::Or(xs) => xs.iter().for_each(|x| walk(x, out)),
                Node::Pow(a, b)
                | Node::FloorDiv(a, b)
                | Node::Mod(a, b)
                | Node::TrueDiv(a, b)
                | Node::Rel(_, a, b) => {
                    walk(a, out);
                    walk(b, out);
                }
                Node::Not(x) | Node::ToFloat(x) | Node::Round(_, x) => walk(x, out),
            }
        }
        let mut out = std::collections::BTreeSet::new();
        walk(self, &mut out);
        out.into_iter().collect()
    }

    /// This expression with `replacements` (symbol name → expression) put
    /// in, rebuilt through the canonical constructors.
    pub fn subs(&self, replacements: &HashMap<String, Expr>) -> Result<Expr> {
        let each = |xs: &[Expr]| {
            xs.iter()
                .map(|x| x.subs(replacements))
                .collect::<Result<Vec<_>>>()
        };
        let pair = |a: &Expr, b: &Expr| -> Result<(Expr, Expr)> {
            Ok((a.subs(replacements)?, b.subs(replacements)?))
        };
        let chain = |xs: Vec<Expr>, f: fn(&Expr, &Expr) -> Result<Expr>| -> Result<Expr> {
            let mut acc = xs[0].clone();
            for x in &xs[1..] {
                acc = f(&acc, x)?;
            }
            Ok(acc)
        };
        Ok(match self.node() {
            Node::Num(_) | Node::Bool(_) => self.clone(),
            Node::Symbol(name) => replacements
                .get(&**name)
                .cloned()
                .unwrap_or_else(|| self.clone()),
            Node::Add(xs) => sum(each(xs)?)?,
            Node::Mul(xs) => product(each(xs)?)?,
            Node::Pow(b, e) => {
                let (b, e) = pair(b, e)?;
                b.pow(&e)?
            }
            Node::FloorDiv(a, b) => {
                let (a, b) = pair(a, b)?;
                a.floor_div(&b)?
            }
            Node::Mod(a, b) => {
                let (a, b) = pair(a, b)?;
                a.modulo(&b)?
            }
            Node::TrueDiv(a, b) => {
                let (a, b) = pair(a, b)?;
                a.true_div(&b)?
            }
            Node::Min(xs) => chain(each(xs)?, Expr::minimum)?,
            Node::Max(xs) => chain(each(xs)?, Expr::maximum)?,
            Node::Rel(r, a, b) => {
                let (a, b) = pair(a, b)?;
                a.compare(*r, &b)?
            }
            Node::Not(x) => x.subs(replacements)?.not(),
            Node::ToFloat(x) => x.subs(replacements)?.to_float(),
            Node::Round(how, x) => x.subs(replacements)?.round_to_int(*how)?,
            Node::And(xs) => chain(each(xs)?, |a, b| Ok(a.and(b)))?,
            Node::Or(xs) => chain(each(xs)?, |a, b| Ok(a.or(b)))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::logic::Relation;

    #[test]
    fn evaluation_follows_python() {
        let (a, b) = (Expr::symbol("s0"), Expr::symbol("s1"));
        let bindings = HashMap::from([
            ("s0".to_string(), Value::Int(-7)),
            ("s1".to_string(), Value::Int(2)),
        ]);
        let e = a
            .floor_div(&b)
            .unwrap()
            .add(&a.modulo(&b).unwrap())
            .unwrap();
        assert_eq!(e.eval(&bindings), Ok(Value::Int(-4 + 1)));
        assert_eq!(
            a.true_div(&b).unwrap().eval(&bindings),
            Ok(Value::Float(-3.5))
        );
        assert_eq!(
            a.compare(Relation::Lt, &b).unwrap().eval(&bindings),
            Ok(Value::Bool(true))
        );
        let zero = HashMap::from([
            ("s0".to_string(), Value::Int(0)),
            ("s1".to_string(), Value::Int(0)),
        ]);
        assert_eq!(
            a.pow(&Expr::int(-1)).unwrap().eval(&zero),
            Err(SymbolicError::ZeroDivision(
                "0.0 cannot be raised to a negative power"
            ))
        );
        assert_eq!(
            a.eval(&HashMap::new()),
            Err(SymbolicError::Unbound("s0".into()))
        );
    }

    #[test]
    fn linear_guards_solve_for_their_symbol() {
        let a = Expr::symbol("s0");
        let e = Expr::int(2).mul(&a).unwrap().add(&Expr::int(1)).unwrap();
        assert_eq!(e.solve_linear(11), Some(("s0".to_string(), 5)));
        assert_eq!(e.solve_linear(10), None);
        assert_eq!(a.solve_linear(7), Some(("s0".to_string(), 7)));
        assert_eq!(a.floor_div(&Expr::int(2)).unwrap().solve_linear(3), None);
        assert_eq!(a.mul(&Expr::symbol("s1")).unwrap().solve_linear(6), None);
    }

    #[test]
    fn substitution_recanonicalises() {
        let a = Expr::symbol("s0");
        let e = a
            .add(&Expr::int(1))
            .unwrap()
            .floor_div(&Expr::int(2))
            .unwrap();
        let twice = Expr::int(2).mul(&Expr::symbol("s1")).unwrap();
        // (2*s1 + 1)//2 = s1 (the even term comes out, 1//2 is 0).
        let replaced = e.subs(&HashMap::from([("s0".to_string(), twice)])).unwrap();
        assert_eq!(replaced, Expr::symbol("s1"));
        let five = e
            .subs(&HashMap::from([("s0".to_string(), Expr::int(5))]))
            .unwrap();
        assert_eq!(five, Expr::int(3));
    }
}
