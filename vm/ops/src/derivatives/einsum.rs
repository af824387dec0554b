//! `einsum`: each operand's gradient is itself an einsum — of the output's
//! gradient with the other operands — summed over nothing it did not
//! have, and broadcast over letters only it had.

use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, derivative};
use crate::value::Value;

/// An equation with its ellipses spelled as letters of their own.
struct Spelled {
    operands: Vec<Vec<char>>,
    output: Vec<char>,
}

fn refuse(what: &str) -> TensorError {
    TensorError::not_implemented(format!(
        "the derivative of 'einsum' {what} is not implemented."
    ))
}

/// Spells out `equation` for operands of these ranks: each `...` becomes
/// letters unused elsewhere, right-aligned across operands as broadcasting
/// aligns them; a missing output is PyTorch's implicit one.
fn spell(equation: &str, ranks: &[usize]) -> Result<Spelled> {
    let eq: String = equation.chars().filter(|c| !c.is_whitespace()).collect();
    let (lhs, rhs) = match eq.split_once("->") {
        Some((l, r)) => (l.to_owned(), Some(r.to_owned())),
        None => (eq.clone(), None),
    };
    let used: Vec<char> = eq.chars().filter(char::is_ascii_alphabetic).collect();
    let spare: Vec<char> = ('A'..='Z')
        .chain('a'..='z')
        .filter(|c| !used.contains(c))
        .collect();
    let terms: Vec<&str> = lhs.split(',').collect();
    let widths: Vec<usize> = terms
        .iter()
        .zip(ranks)
        .map(|(t, &r)| {
            let letters = t.chars().filter(char::is_ascii_alphabetic).count();
            if t.contains("...") {
                r.saturating_sub(letters)
            } else {
                0
            }
        })
        .collect();
    let width = widths.iter().copied().max().unwrap_or(0);
    if width > spare.len() {
        return Err(refuse("with this many broadcast dims"));
    }
    let ellipsis: Vec<char> = spare[..width].to_vec();
    let expand = |t: &str, w: usize| -> Vec<char> {
        let mut out = Vec::new();
        let mut rest = t;
        if let Some((before, after)) = t.split_once("...") {
            out.extend(before.chars());
            out.extend(&ellipsis[width - w..]);
            rest = after;
        } else {
            out.extend(rest.chars());
            return out;
        }
        out.extend(rest.chars());
        out
    };
    let operands: Vec<Vec<char>> = terms
        .iter()
        .zip(&widths)
        .map(|(t, &w)| expand(t, w))
        .collect();
    let output = match rhs {
        Some(r) => expand(&r, width),
        None => {
            let mut once: Vec<char> = used
                .iter()
                .copied()
                .filter(|c| used.iter().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            let mut out = ellipsis.clone();
            out.extend(once);
            out
        }
    };
    Ok(Spelled { operands, output })
}

/// `einsum(equation, operands)`.
pub(crate) fn einsum() -> Derivative {
    derivative("EinsumBackward0", &[crate::autograd::Save::In(1)], |c| {
        let Value::Str(equation) = c.value(0).clone() else {
            unreachable!("einsum's equation is a str")
        };
        let operands = c.list(1)?;
        let g = c.grad()?;
        let ranks: Vec<usize> = operands.iter().map(Tensor::ndim).collect();
        let spelled = spell(&equation, &ranks)?;
        let mut grads = Vec::with_capacity(operands.len());
        for (i, (sub, x)) in spelled.operands.iter().zip(&operands).enumerate() {
            if !x.dtype().is_float() {
                grads.push(None);
                continue;
            }
            if sub
                .iter()
                .any(|c| sub.iter().filter(|d| *d == c).count() > 1)
            {
                return Err(refuse("with a repeated index in one operand (a diagonal)"));
            }
            let elsewhere = |ch: &char| {
                spelled.output.contains(ch)
                    || spelled
                        .operands
                        .iter()
                        .enumerate()
                        .any(|(j, s)| j != i && s.contains(ch))
            };
            let kept: Vec<char> = sub.iter().copied().filter(elsewhere).collect();
            let mut inputs: Vec<String> = vec![spelled.output.iter().collect()];
            let mut tensors = vec![g.clone()];
            for (j, (s, t)) in spelled.operands.iter().zip(&operands).enumerate() {
                if j != i {
                    inputs.push(s.iter().collect());
                    tensors.push(t.clone());
                }
            }
            let eq = format!("{}->{}", inputs.join(","), kept.iter().collect::<String>());
            let mut d = o::call(
                "einsum",
                vec![Value::Str(eq), Value::Tensors(tensors)],
                vec![],
            )?;
            // Letters only this operand had: the gradient is the same
            // along them.
            if kept.len() < sub.len() {
                for (pos, ch) in sub.iter().enumerate() {
                    if !kept.contains(ch) {
                        d = o::unsqueeze(&d, pos as i64)?;
                    }
                }
                d = o::expand(&d, x.shape())?;
            }
            grads.push(Some(d));
        }
        c.set_list(1, grads);
        Ok(())
    })
}
