//! Comparisons, `Min`/`Max`, and the boolean connectives, folded when the
//! answer is known from the expressions alone.

use crate::error::Result;
use crate::expr::{Expr, Node};
use crate::number::Number;

/// A comparison between two expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Relation {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Relation {
    fn holds(self, a: Number, b: Number) -> bool {
        let (x, y) = (a.to_f64(), b.to_f64());
        match self {
            Relation::Eq => x == y,
            Relation::Ne => x != y,
            Relation::Lt => x < y,
            Relation::Le => x <= y,
            Relation::Gt => x > y,
            Relation::Ge => x >= y,
        }
    }

    /// The relation that holds exactly when this one does not.
    pub fn negated(self) -> Relation {
        match self {
            Relation::Eq => Relation::Ne,
            Relation::Ne => Relation::Eq,
            Relation::Lt => Relation::Ge,
            Relation::Le => Relation::Gt,
            Relation::Gt => Relation::Le,
            Relation::Ge => Relation::Lt,
        }
    }

    /// Whether `x R x` holds.
    fn reflexive(self) -> bool {
        matches!(self, Relation::Eq | Relation::Le | Relation::Ge)
    }
}

impl Expr {
    /// `self R other`: a boolean when both sides are constants or the same
    /// expression.
    pub fn compare(&self, relation: Relation, other: &Expr) -> Result<Expr> {
        if let (Some(a), Some(b)) = (self.as_number(), other.as_number()) {
            return Ok(Expr::boolean(relation.holds(a, b)));
        }
        if self == other {
            return Ok(Expr::boolean(relation.reflexive()));
        }
        Ok(Expr::new(Node::Rel(relation, self.clone(), other.clone())))
    }

    /// `not self`: a comparison flips to its negation.
    pub fn not(&self) -> Expr {
        match self.node() {
            Node::Bool(b) => Expr::boolean(!b),
            Node::Not(inner) => inner.clone(),
            Node::Rel(r, a, b) => Expr::new(Node::Rel(r.negated(), a.clone(), b.clone())),
            _ => Expr::new(Node::Not(self.clone())),
        }
    }

    /// `self and other`.
    pub fn and(&self, other: &Expr) -> Expr {
        connective(self, other, false)
    }

    /// `self or other`.
    pub fn or(&self, other: &Expr) -> Expr {
        connective(self, other, true)
    }

    /// `min(self, other)`.
    pub fn minimum(&self, other: &Expr) -> Result<Expr> {
        extremum(self, other, false)
    }

    /// `max(self, other)`.
    pub fn maximum(&self, other: &Expr) -> Result<Expr> {
        extremum(self, other, true)
    }
}

/// `and` (absorbing False) or `or` (absorbing True), flattened and sorted.
fn connective(a: &Expr, b: &Expr, is_or: bool) -> Expr {
    let mut parts = Vec::new();
    for e in [a, b] {
        match (e.node(), is_or) {
            (Node::Bool(v), _) if *v == is_or => return Expr::boolean(is_or),
            (Node::Bool(_), _) => {}
            (Node::Or(xs), true) | (Node::And(xs), false) => parts.extend(xs.iter().cloned()),
            _ => parts.push(e.clone()),
        }
    }
    parts.sort();
    parts.dedup();
    match parts.len() {
        0 => Expr::boolean(!is_or),
        1 => parts.pop().expect("one part"),
        _ if is_or => Expr::new(Node::Or(parts)),
        _ => Expr::new(Node::And(parts)),
    }
}

/// `Min`/`Max`: flattened, constants folded into one, duplicates dropped.
fn extremum(a: &Expr, b: &Expr, is_max: bool) -> Result<Expr> {
    let mut parts: Vec<Expr> = Vec::new();
    let mut best: Option<Number> = None;
    for e in [a, b] {
        let inner = match (e.node(), is_max) {
            (Node::Max(xs), true) | (Node::Min(xs), false) => xs.clone(),
            _ => vec![e.clone()],
        };
        for x in inner {
            match x.as_number() {
                Some(n) => {
                    best = Some(match best {
                        Some(m) if (n > m) == is_max || n == m => n,
                        Some(m) => m,
                        None => n,
                    })
                }
                None => parts.push(x),
            }
        }
    }
    if let Some(n) = best {
        parts.push(Expr::number(n));
    }
    parts.sort();
    parts.dedup();
    Ok(match parts.len() {
        1 => parts.pop().expect("one part"),
        _ if is_max => Expr::new(Node::Max(parts)),
        _ => Expr::new(Node::Min(parts)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_fold_when_known() {
        let (a, two) = (Expr::symbol("s0"), Expr::int(2));
        assert_eq!(
            two.compare(Relation::Lt, &Expr::int(3)).unwrap(),
            Expr::boolean(true)
        );
        assert_eq!(a.compare(Relation::Le, &a).unwrap(), Expr::boolean(true));
        assert_eq!(a.compare(Relation::Ne, &a).unwrap(), Expr::boolean(false));
        let lt = a.compare(Relation::Lt, &two).unwrap();
        assert_eq!(lt.not(), a.compare(Relation::Ge, &two).unwrap());
        assert_eq!(lt.not().not(), lt);
    }

    #[test]
    fn connectives_absorb_and_flatten() {
        let a = Expr::symbol("s0")
            .compare(Relation::Gt, &Expr::int(1))
            .unwrap();
        let b = Expr::symbol("s1")
            .compare(Relation::Gt, &Expr::int(1))
            .unwrap();
        assert_eq!(a.and(&Expr::boolean(false)), Expr::boolean(false));
        assert_eq!(a.and(&Expr::boolean(true)), a);
        assert_eq!(a.or(&Expr::boolean(true)), Expr::boolean(true));
        assert_eq!(a.and(&b).and(&a), a.and(&b));
    }

    #[test]
    fn extrema_fold_constants() {
        let a = Expr::symbol("s0");
        assert_eq!(Expr::int(3).maximum(&Expr::int(5)).unwrap(), Expr::int(5));
        assert_eq!(a.maximum(&a).unwrap(), a);
        let m = a
            .maximum(&Expr::int(2))
            .unwrap()
            .maximum(&Expr::int(7))
            .unwrap();
        assert_eq!(m, a.maximum(&Expr::int(7)).unwrap());
        assert_eq!(Expr::int(4).minimum(&Expr::int(-1)).unwrap(), Expr::int(-1));
    }
}
