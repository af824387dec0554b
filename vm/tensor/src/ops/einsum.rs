//! `torch.einsum`: diagonals by stride views, single-operand labels summed
//! early, then a left-to-right chain of pairwise contractions, each one
//! batched matrix product.

use crate::error::{Result, TensorError};
use crate::layout::Layout;
use crate::tensor::Tensor;

use super::{linalg, reduce, shape};

/// A subscript: a letter, or the k-th dim covered by `...` (aligned right).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Label {
    Ellipsis(usize),
    Letter(u8),
}

fn err(message: impl Into<String>) -> TensorError {
    TensorError::runtime("einsum", format!("einsum(): {}", message.into()))
}

/// One term's letters, with where its `...` sits (in letters before it).
struct Term {
    letters: Vec<u8>,
    ellipsis: Option<usize>,
}

fn parse_term(s: &str, start: usize) -> Result<Term> {
    let mut letters = Vec::new();
    let mut ellipsis = None;
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                if ellipsis.is_some() || !s[i..].starts_with("...") {
                    return Err(err(
                        "found '.' for operand that is not part of any ellipsis",
                    ));
                }
                ellipsis = Some(letters.len());
                i += 3;
            }
            c if c.is_ascii_alphabetic() => {
                letters.push(c);
                i += 1;
            }
            b' ' => i += 1,
            _ => {
                return Err(err(format!(
                    "invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]",
                    start + i
                )));
            }
        }
    }
    Ok(Term { letters, ellipsis })
}

/// A tensor whose dims carry labels.
struct Labeled {
    t: Tensor,
    labels: Vec<Label>,
}

impl Labeled {
    /// Sums out the dims whose labels `keep` rejects.
    fn sum_unless(self, keep: impl Fn(Label) -> bool) -> Result<Labeled> {
        let drop: Vec<i64> = (0..self.labels.len())
            .filter(|&i| !keep(self.labels[i]))
            .map(|i| i as i64)
            .collect();
        if drop.is_empty() {
            return Ok(self);
        }
        let labels = self.labels.iter().copied().filter(|&l| keep(l)).collect();
        let t = reduce::sum(&self.t, Some(&drop), false, None)?;
        Ok(Labeled { t, labels })
    }

    /// A view with dims in `order`, each expanded to `sizes` where it broadcasts.
    fn arrange(&self, order: &[Label], sizes: &dyn Fn(Label) -> usize) -> Tensor {
        let perm: Vec<usize> = order
            .iter()
            .map(|l| {
                self.labels
                    .iter()
                    .position(|x| x == l)
                    .expect("label present")
            })
            .collect();
        let layout = self.t.layout().permute(&perm);
        let shape: Vec<usize> = order.iter().map(|&l| sizes(l)).collect();
        self.t.with_layout(layout.broadcast_to(&shape))
    }
}

pub fn einsum(equation: &str, operands: &[Tensor]) -> Result<Tensor> {
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let mut terms = Vec::new();
    let mut at = 0;
    for part in lhs.split(',') {
        terms.push(parse_term(part, at)?);
        at += part.len() + 1;
    }
    if terms.len() > operands.len() {
        return Err(err(
            "fewer operands were provided than specified in the equation",
        ));
    }
    if terms.len() < operands.len() {
        return Err(err(
            "more operands were provided than specified in the equation",
        ));
    }
    // Ellipsis dims are numbered so that they align from the right.
    let mut ellipsis_dims = 0;
    for (i, (term, t)) in terms.iter().zip(operands).enumerate() {
        let n = term.letters.len();
        match term.ellipsis {
            None if n != t.ndim() => {
                return Err(err(format!(
                    "the number of subscripts in the equation ({n}) does not match the number of dimensions ({}) for operand {i} and no ellipsis was given",
                    t.ndim()
                )));
            }
            Some(_) if n > t.ndim() => {
                return Err(err(format!(
                    "the number of subscripts in the equation ({n}) is more than the number of dimensions ({}) for operand {i}",
                    t.ndim()
                )));
            }
            Some(_) => ellipsis_dims = ellipsis_dims.max(t.ndim() - n),
            None => {}
        }
    }
    let mut inputs = Vec::new();
    for (i, (term, t)) in terms.iter().zip(operands).enumerate() {
        let e = t.ndim() - term.letters.len();
        let mut labels: Vec<Label> = term.letters.iter().map(|&c| Label::Letter(c)).collect();
        if let Some(p) = term.ellipsis {
            let dots = (ellipsis_dims - e..ellipsis_dims).map(Label::Ellipsis);
            labels.splice(p..p, dots);
        }
        inputs.push(diagonal(
            Labeled {
                t: t.clone(),
                labels,
            },
            i,
        )?);
    }
    // Sizes per label, with size 1 broadcasting.
    let mut sizes: Vec<(Label, usize)> = Vec::new();
    for (i, x) in inputs.iter().enumerate() {
        for (&l, &n) in x.labels.iter().zip(x.t.shape()) {
            match sizes.iter_mut().find(|(k, _)| *k == l) {
                None => sizes.push((l, n)),
                Some((_, seen)) if *seen == 1 => *seen = n,
                Some((_, seen)) if n != 1 && n != *seen => {
                    let name = match l {
                        Label::Letter(c) => (c as char).to_string(),
                        Label::Ellipsis(_) => "...".into(),
                    };
                    return Err(err(format!(
                        "subscript {name} has size {n} for operand {i} which does not broadcast with previously seen size {seen}"
                    )));
                }
                Some(_) => {}
            }
        }
    }
    let size_of = |l: Label| sizes.iter().find(|(k, _)| *k == l).map_or(1, |&(_, n)| n);
    let output: Vec<Label> = match rhs {
        Some(r) => {
            let term = parse_term(r, lhs.len() + 2)?;
            let mut out: Vec<Label> = term.letters.iter().map(|&c| Label::Letter(c)).collect();
            if let Some(p) = term.ellipsis {
                out.splice(p..p, (0..ellipsis_dims).map(Label::Ellipsis));
            }
            for (j, &c) in term.letters.iter().enumerate() {
                if term.letters[..j].contains(&c) {
                    return Err(err(format!(
                        "output subscript {} appears more than once in the output",
                        c as char
                    )));
                }
                if !inputs.iter().any(|x| x.labels.contains(&Label::Letter(c))) {
                    return Err(err(format!(
                        "output subscript {} does not appear in the equation for any input operand",
                        c as char
                    )));
                }
            }
            out
        }
        None => {
            // Implicit output: the ellipsis, then letters seen once, sorted.
            let mut once: Vec<u8> = Vec::new();
            let all: Vec<u8> = terms
                .iter()
                .flat_map(|t| t.letters.iter().copied())
                .collect();
            for &c in &all {
                if all.iter().filter(|&&x| x == c).count() == 1 {
                    once.push(c);
                }
            }
            once.sort_unstable();
            (0..ellipsis_dims)
                .map(Label::Ellipsis)
                .chain(once.into_iter().map(Label::Letter))
                .collect()
        }
    };
    // Contract left to right, keeping labels the output or a later operand needs.
    let mut pending = inputs.into_iter();
    let first = pending
        .next()
        .ok_or_else(|| err("must provide at least one operand"))?;
    let rest: Vec<Labeled> = pending.collect();
    let needed_after =
        |k: usize, l: Label| output.contains(&l) || rest[k..].iter().any(|x| x.labels.contains(&l));
    let mut acc = first.sum_unless(|l| needed_after(0, l))?;
    for (k, next) in rest.iter().enumerate() {
        let next = Labeled {
            t: next.t.clone(),
            labels: next.labels.clone(),
        }
        .sum_unless(|l| needed_after(k + 1, l) || acc.labels.contains(&l))?;
        acc = contract(&acc, &next, &|l| needed_after(k + 1, l), &size_of)?;
    }
    let acc = acc.sum_unless(|l| output.contains(&l))?;
    let t = acc.arrange(&output, &size_of);
    Ok(t.contiguous())
}

/// Takes the diagonal of dims sharing a label (`ii->i`) as a stride view.
fn diagonal(x: Labeled, operand: usize) -> Result<Labeled> {
    let mut labels: Vec<Label> = Vec::new();
    let (mut shape, mut strides) = (Vec::new(), Vec::new());
    let layout = x.t.layout();
    for (i, &l) in x.labels.iter().enumerate() {
        match labels.iter().position(|&k| k == l) {
            Some(j) => {
                if shape[j] != layout.shape[i] {
                    let name = match l {
                        Label::Letter(c) => c as char,
                        Label::Ellipsis(_) => '.',
                    };
                    return Err(err(format!(
                        "subscript {name} is repeated for operand {operand} but the sizes don't match, {} != {}",
                        layout.shape[i], shape[j]
                    )));
                }
                strides[j] += layout.strides[i];
            }
            None => {
                labels.push(l);
                shape.push(layout.shape[i]);
                strides.push(layout.strides[i]);
            }
        }
    }
    let t = x.t.with_layout(Layout {
        shape,
        strides,
        offset: layout.offset,
    });
    Ok(Labeled { t, labels })
}

/// One pairwise contraction as a batched matrix product:
/// (batch, left, summed) @ (batch, summed, right).
fn contract(
    a: &Labeled,
    b: &Labeled,
    keep: &dyn Fn(Label) -> bool,
    size_of: &dyn Fn(Label) -> usize,
) -> Result<Labeled> {
    let in_b = |l: &Label| b.labels.contains(l);
    let batch: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && keep(*l))
        .collect();
    let summed: Vec<Label> = a
        .labels
        .iter()
        .copied()
        .filter(|l| in_b(l) && !keep(*l))
        .collect();
    let left: Vec<Label> = a.labels.iter().copied().filter(|l| !in_b(l)).collect();
    let right: Vec<Label> = b
        .labels
        .iter()
        .copied()
        .filter(|l| !a.labels.contains(l))
        .collect();
    let n = |ls: &[Label]| ls.iter().map(|&l| size_of(l)).product::<usize>() as i64;
    let (nb, nl, ns, nr) = (n(&batch), n(&left), n(&summed), n(&right));
    let order_a: Vec<Label> = batch.iter().chain(&left).chain(&summed).copied().collect();
    let order_b: Vec<Label> = batch.iter().chain(&summed).chain(&right).copied().collect();
    // Broadcast (size-1) summed dims expand to the full size on both sides.
    let ta = shape::reshape(&a.arrange(&order_a, size_of), &[nb, nl, ns])?;
    let tb = shape::reshape(&b.arrange(&order_b, size_of), &[nb, ns, nr])?;
    let prod = linalg::bmm(&ta, &tb)?;
    let labels: Vec<Label> = batch.iter().chain(&left).chain(&right).copied().collect();
    let dims: Vec<i64> = labels.iter().map(|&l| size_of(l) as i64).collect();
    let t = shape::reshape(&prod, &dims)?;
    Ok(Labeled { t, labels })
}
