//! What the facts about sizes decide: each symbol's integer range (a size
//! is at least 2 once 0 and 1 are specialised away), propagated through an
//! expression by interval arithmetic, answers comparisons that hold for
//! every value in range (`s0 >= 0`, `s0 + 1 > 2`, `Eq(s0, 1)` is False), so
//! forcing them needs no guard.

use std::collections::HashMap;

use crate::expr::{Expr, Node};
use crate::logic::Relation;
use crate::number::Number;

/// An integer interval; `None` ends are unbounded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Range {
    pub lo: Option<i128>,
    pub hi: Option<i128>,
}

impl Range {
    pub const ANY: Range = Range { lo: None, hi: None };

    pub fn at_least(lo: i128) -> Range {
        Range {
            lo: Some(lo),
            hi: None,
        }
    }

    fn point(v: i128) -> Range {
        Range {
            lo: Some(v),
            hi: Some(v),
        }
    }

    fn add(self, o: Range) -> Range {
        let sum = |a: Option<i128>, b: Option<i128>| a.zip(b).and_then(|(a, b)| a.checked_add(b));
        Range {
            lo: sum(self.lo, o.lo),
            hi: sum(self.hi, o.hi),
        }
    }

    fn scale(self, c: i128) -> Range {
        let times = |a: Option<i128>| a.and_then(|a| a.checked_mul(c));
        if c >= 0 {
            Range {
                lo: times(self.lo),
                hi: times(self.hi),
            }
        } else {
            Range {
                lo: times(self.hi),
                hi: times(self.lo),
            }
        }
    }

    fn nonnegative(self) -> bool {
        self.lo.is_some_and(|l| l >= 0)
    }

    /// The product of two ranges of non-negative values (otherwise unknown).
    fn times(self, o: Range) -> Range {
        if !(self.nonnegative() && o.nonnegative()) {
            return Range::ANY;
        }
        let mul = |a: Option<i128>, b: Option<i128>| a.zip(b).and_then(|(a, b)| a.checked_mul(b));
        Range {
            lo: mul(self.lo, o.lo),
            hi: mul(self.hi, o.hi),
        }
    }
}

impl Expr {
    /// The range of this integer expression's values given its symbols'
    /// ranges (symbols not listed are unbounded).
    pub fn range(&self, symbols: &HashMap<String, Range>) -> Range {
        match self.node() {
            Node::Num(Number::Int(v)) => Range::point(*v),
            Node::Symbol(name) => symbols.get(&**name).copied().unwrap_or(Range::ANY),
            Node::Add(ts) => ts
                .iter()
                .fold(Range::point(0), |acc, t| acc.add(t.range(symbols))),
            Node::Mul(fs) => match self.split_coefficient() {
                (Number::Int(1), _) => fs
                    .iter()
                    .fold(Range::point(1), |acc, f| acc.times(f.range(symbols))),
                (Number::Int(c), rest) => rest.range(symbols).scale(c),
                (Number::Float(_), _) => Range::ANY,
            },
            Node::Pow(b, e) => match e.as_int() {
                Some(k) if k >= 0 => {
                    let r = b.range(symbols);
                    if !r.nonnegative() {
                        return Range::ANY;
                    }
                    let p = |v: Option<i128>| v.and_then(|v| v.checked_pow(u32::try_from(k).ok()?));
                    Range {
                        lo: p(r.lo),
                        hi: p(r.hi),
                    }
                }
                _ => Range::ANY,
            },
            Node::FloorDiv(a, d) => match d.as_int() {
                Some(k) if k > 0 => {
                    let r = a.range(symbols);
                    let div = |v: Option<i128>| v.map(|v| v.div_euclid(k));
                    Range {
                        lo: div(r.lo),
                        hi: div(r.hi),
                    }
                }
                _ => Range::ANY,
            },
            Node::Mod(_, d) => match d.as_int() {
                Some(k) if k > 0 => Range {
                    lo: Some(0),
                    hi: Some(k - 1),
                },
                _ => Range::ANY,
            },
            Node::Min(xs) | Node::Max(xs) => {
                let is_max = matches!(self.node(), Node::Max(_));
                let rs: Vec<Range> = xs.iter().map(|x| x.range(symbols)).collect();
                let pick = |vs: Vec<Option<i128>>, lower_end: bool| -> Option<i128> {
                    // max: an unbounded high end wins; min: an unbounded low end wins.
                    if vs.iter().any(Option::is_none) {
                        return if is_max == lower_end {
                            vs.into_iter().flatten().max()
                        } else {
                            None
                        };
                    }
                    let it = vs.into_iter().flatten();
                    if is_max { it.max() } else { it.min() }
                };
                Range {
                    lo: pick(rs.iter().map(|r| r.lo).collect(), true),
                    hi: pick(rs.iter().map(|r| r.hi).collect(), false),
                }
            }
            _ => Range::ANY,
        }
    }

    /// Whether this condition holds for every value the symbols' ranges
    /// allow (`Some(true)`), for none (`Some(false)`), or depends (`None`).
    pub fn static_truth(&self, symbols: &HashMap<String, Range>) -> Option<bool> {
        match self.node() {
            Node::Bool(b) => Some(*b),
            Node::Not(x) => x.static_truth(symbols).map(|b| !b),
            Node::And(xs) => {
                let mut all = Some(true);
                for x in xs {
                    match x.static_truth(symbols) {
                        Some(false) => return Some(false),
                        None => all = None,
                        Some(true) => {}
                    }
                }
                all
            }
            Node::Or(xs) => {
                let mut any = Some(false);
                for x in xs {
                    match x.static_truth(symbols) {
                        Some(true) => return Some(true),
                        None => any = None,
                        Some(false) => {}
                    }
                }
                any
            }
            Node::Rel(r, a, b) => {
                if !(a.is_integer() && b.is_integer()) {
                    return None;
                }
                let d = a.sub(b).ok()?.range(symbols);
                let (pos, neg, zero) = (
                    d.lo.is_some_and(|l| l > 0),
                    d.hi.is_some_and(|h| h < 0),
                    d.lo == Some(0) && d.hi == Some(0),
                );
                let (nonneg, nonpos) = (d.lo.is_some_and(|l| l >= 0), d.hi.is_some_and(|h| h <= 0));
                match r {
                    Relation::Eq if zero => Some(true),
                    Relation::Eq if pos || neg => Some(false),
                    Relation::Ne if zero => Some(false),
                    Relation::Ne if pos || neg => Some(true),
                    Relation::Lt if neg => Some(true),
                    Relation::Lt if nonneg => Some(false),
                    Relation::Le if nonpos => Some(true),
                    Relation::Le if pos => Some(false),
                    Relation::Gt if pos => Some(true),
                    Relation::Gt if nonpos => Some(false),
                    Relation::Ge if nonneg => Some(true),
                    Relation::Ge if neg => Some(false),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_of_at_least_two_decide_what_they_can() {
        let s = Expr::symbol("s0");
        let facts = HashMap::from([("s0".to_string(), Range::at_least(2))]);
        let decide = |e: Expr, r: Relation, k: i128| {
            e.compare(r, &Expr::int(k)).unwrap().static_truth(&facts)
        };
        assert_eq!(decide(s.clone(), Relation::Ge, 0), Some(true));
        assert_eq!(decide(s.clone(), Relation::Gt, 1), Some(true));
        assert_eq!(decide(s.clone(), Relation::Eq, 1), Some(false));
        assert_eq!(decide(s.clone(), Relation::Ne, 0), Some(true));
        assert_eq!(decide(s.clone(), Relation::Gt, 4), None);
        assert_eq!(
            decide(s.add(&Expr::int(1)).unwrap(), Relation::Gt, 2),
            Some(true)
        );
        assert_eq!(
            decide(Expr::int(2).mul(&s).unwrap(), Relation::Ge, 4),
            Some(true)
        );
        assert_eq!(
            decide(s.floor_div(&Expr::int(2)).unwrap(), Relation::Ge, 1),
            Some(true)
        );
        assert_eq!(
            decide(s.modulo(&Expr::int(3)).unwrap(), Relation::Lt, 3),
            Some(true)
        );
        assert_eq!(decide(s.neg().unwrap(), Relation::Lt, 0), Some(true));
        let t = Expr::symbol("s1");
        let both = HashMap::from([
            ("s0".to_string(), Range::at_least(2)),
            ("s1".to_string(), Range::at_least(2)),
        ]);
        let prod = s
            .mul(&t)
            .unwrap()
            .compare(Relation::Ge, &Expr::int(4))
            .unwrap();
        assert_eq!(prod.static_truth(&both), Some(true));
        // An unknown symbol decides nothing.
        assert_eq!(decide(Expr::symbol("u"), Relation::Ge, 0), None);
    }
}

impl Expr {
    /// What a relation says of its one symbol, when it is linear in it
    /// (`s0 <= 64`, `2*s0 + 1 > 9`, `Eq(s0 - 3, 3)`): the symbol and the
    /// integer range the relation confines it to. How a guard narrows what
    /// is known of a size, so that the comparisons it implies need no
    /// guard of their own.
    pub fn bound(&self) -> Option<(String, Range)> {
        let Node::Rel(r, a, b) = self.node() else {
            return None;
        };
        // a R b  ⇔  k*s + c R 0
        let diff = a.sub(b).ok()?;
        let (constant, term) = match diff.node() {
            Node::Add(ts) if ts.len() == 2 => (ts[0].as_int()?, &ts[1]),
            _ => (0, &diff),
        };
        let (k, rest) = term.split_coefficient();
        let (Number::Int(k), Node::Symbol(name)) = (k, rest.node()) else {
            return None;
        };
        if k == 0 {
            return None;
        }
        // k*s R -c: divide by k (flipping the relation when k < 0), then
        // round the bound inward to integers.
        let rhs = -constant;
        let r = if k < 0 { flip(*r) } else { *r };
        let (num, den) = if k < 0 { (-rhs, -k) } else { (rhs, k) };
        let floor = num.div_euclid(den);
        let ceil = -(-num).div_euclid(den);
        let exact = num.rem_euclid(den) == 0;
        let range = match r {
            Relation::Le => Range {
                lo: None,
                hi: Some(floor),
            },
            Relation::Lt => Range {
                lo: None,
                hi: Some(if exact { floor - 1 } else { floor }),
            },
            Relation::Ge => Range {
                lo: Some(ceil),
                hi: None,
            },
            Relation::Gt => Range {
                lo: Some(if exact { ceil + 1 } else { ceil }),
                hi: None,
            },
            Relation::Eq if exact => Range::point(floor),
            Relation::Eq | Relation::Ne => return None,
        };
        Some((name.to_string(), range))
    }
}

/// `a R b` as `b R' a`.
fn flip(r: Relation) -> Relation {
    match r {
        Relation::Lt => Relation::Gt,
        Relation::Le => Relation::Ge,
        Relation::Gt => Relation::Lt,
        Relation::Ge => Relation::Le,
        other => other,
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    fn s0() -> Expr {
        Expr::symbol("s0")
    }

    fn bound(rel: Relation, lhs: Expr, rhs: i128) -> Option<(String, Range)> {
        lhs.compare(rel, &Expr::int(rhs)).unwrap().bound()
    }

    #[test]
    fn linear_relations_bound_their_symbol_rounding_inward() {
        let two_s_plus_1 = s0().mul(&Expr::int(2)).unwrap().add(&Expr::int(1)).unwrap();
        assert_eq!(
            bound(Relation::Le, s0(), 64),
            Some((
                "s0".into(),
                Range {
                    lo: None,
                    hi: Some(64)
                }
            ))
        );
        assert_eq!(
            bound(Relation::Lt, s0(), 64),
            Some((
                "s0".into(),
                Range {
                    lo: None,
                    hi: Some(63)
                }
            ))
        );
        assert_eq!(
            bound(Relation::Gt, two_s_plus_1.clone(), 9),
            Some(("s0".into(), Range::at_least(5)))
        );
        assert_eq!(
            bound(Relation::Ge, two_s_plus_1.clone(), 10),
            Some(("s0".into(), Range::at_least(5)))
        );
        assert_eq!(
            bound(Relation::Eq, two_s_plus_1.clone(), 11),
            Some(("s0".into(), Range::point(5)))
        );
        assert_eq!(bound(Relation::Eq, two_s_plus_1, 10), None);
        // -s0 <= -3  ⇔  s0 >= 3
        assert_eq!(
            bound(Relation::Le, s0().neg().unwrap(), -3),
            Some(("s0".into(), Range::at_least(3)))
        );
        let two_symbols = s0().add(&Expr::symbol("s1")).unwrap();
        assert_eq!(bound(Relation::Le, two_symbols, 3), None);
    }
}
