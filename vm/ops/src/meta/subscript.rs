//! The sizes of `x[items]`: integers drop a dimension, slices keep a
//! clamped length of it, `None` adds one, `...` stands for the rest, and
//! index tensors (broadcast together) replace the dimensions they index —
//! in place when adjacent, in front otherwise, as PyTorch places them.

use fxvm_symbolic::Expr;
use fxvm_tensor::{Result, TensorError};

use super::pointwise::broadcast;
use super::{Ctx, TensorMeta};

/// One subscript item, described.
#[derive(Clone, Debug)]
pub enum Item {
    Int(Expr),
    Slice {
        start: Option<Expr>,
        stop: Option<Expr>,
        step: i64,
    },
    NewAxis,
    Ellipsis,
    /// An integer index tensor (a list of ints becomes one).
    Tensor(TensorMeta),
}

/// `bound` of a slice over a dimension of `size`, clamped into `[0, size]`
/// (a negative constant counts from the end).
fn clamp(cx: &mut Ctx<'_>, bound: &Expr, size: &Expr) -> Result<Expr> {
    let zero = Expr::int(0);
    let b = match bound.as_int() {
        Some(c) if c < 0 => cx.sym(size.add(bound))?,
        _ => bound.clone(),
    };
    if b.as_int().is_some_and(|c| c <= 0) || !cx.at_most(&zero, &b)? {
        return Ok(zero);
    }
    if cx.at_most(&b, size)? {
        Ok(b)
    } else {
        Ok(size.clone())
    }
}

fn slice_len(
    cx: &mut Ctx<'_>,
    size: &Expr,
    start: &Option<Expr>,
    stop: &Option<Expr>,
    step: i64,
) -> Result<Expr> {
    if step <= 0 {
        return Err(TensorError::Value {
            op: cx.name(),
            message: "step must be greater than zero".into(),
        });
    }
    let start = match start {
        Some(s) => clamp(cx, s, size)?,
        None => Expr::int(0),
    };
    let stop = match stop {
        Some(s) => clamp(cx, s, size)?,
        None => size.clone(),
    };
    if !cx.at_most(&start, &stop)? {
        return Ok(Expr::int(0));
    }
    // ceil((stop - start) / step)
    let step = Expr::int(step as i128);
    cx.sym(
        stop.sub(&start)
            .and_then(|d| d.add(&step)?.sub(&Expr::int(1))?.floor_div(&step)),
    )
}

/// The result of indexing `x` with `items`.
pub fn subscript(cx: &mut Ctx<'_>, x: &TensorMeta, items: &[Item]) -> Result<TensorMeta> {
    let consumed = items
        .iter()
        .filter(|i| !matches!(i, Item::NewAxis | Item::Ellipsis))
        .count();
    if consumed > x.ndim() {
        return Err(TensorError::Other {
            kind: fxvm_tensor::ErrorKind::Index,
            message: format!("too many indices for tensor of dimension {}", x.ndim()),
        });
    }
    let mut sizes = Vec::new();
    let mut dim = 0;
    // Where the index tensors' result goes, and their broadcast sizes.
    let mut advanced: Option<(usize, Vec<Expr>)> = None;
    let mut adjacent = true;
    let mut last_advanced = None;
    for (k, item) in items.iter().enumerate() {
        match item {
            Item::NewAxis => sizes.push(Expr::int(1)),
            Item::Ellipsis => {
                let rest = x.ndim() - consumed;
                sizes.extend_from_slice(&x.sizes[dim..dim + rest]);
                dim += rest;
            }
            Item::Int(_) => dim += 1,
            Item::Slice { start, stop, step } => {
                let size = x.sizes[dim].clone();
                sizes.push(slice_len(cx, &size, start, stop, *step)?);
                dim += 1;
            }
            Item::Tensor(t) => {
                if let Some(prev) = last_advanced
                    && prev + 1 != k
                {
                    adjacent = false;
                }
                last_advanced = Some(k);
                advanced = Some(match advanced {
                    None => (sizes.len(), t.sizes.clone()),
                    Some((at, b)) => (at, broadcast(cx, &b, &t.sizes)?),
                });
                dim += 1;
            }
        }
    }
    sizes.extend_from_slice(&x.sizes[dim..]);
    if let Some((at, shape)) = advanced {
        let at = if adjacent { at } else { 0 };
        sizes.splice(at..at, shape);
    }
    Ok(TensorMeta::new(sizes, x.dtype))
}

#[cfg(test)]
mod tests {
    use fxvm_tensor::DType;

    use super::*;
    use crate::meta::testing::{Examples, n, s};
    use crate::registry;

    fn run(x: Vec<Expr>, items: &[Item], ex: &mut Examples) -> Vec<Expr> {
        let op = registry().function("clone").unwrap();
        let mut cx = Ctx::new(op, vec![], ex);
        subscript(&mut cx, &TensorMeta::new(x, DType::F32), items)
            .unwrap()
            .sizes
    }

    fn upto(stop: Expr) -> Item {
        Item::Slice {
            start: None,
            stop: Some(stop),
            step: 1,
        }
    }

    #[test]
    fn a_causal_mask_sliced_by_a_symbolic_length_guards_the_bound() {
        let mut ex = Examples::with(&[("s0", 8)]);
        let all = Item::Slice {
            start: None,
            stop: None,
            step: 1,
        };
        let out = run(
            vec![n(1), n(1), n(64), n(64)],
            &[all.clone(), all, upto(s("s0")), upto(s("s0"))],
            &mut ex,
        );
        assert_eq!(out, [n(1), n(1), s("s0"), s("s0")]);
        // A ShapeEnv knows sizes are ≥ 0; this oracle records every question.
        assert_eq!(ex.guards, ["0 <= s0", "s0 <= 64", "0 <= s0"].repeat(2));
    }

    #[test]
    fn ints_drop_dims_lists_keep_them_and_ellipsis_fills() {
        let mut ex = Examples::with(&[("s0", 8)]);
        let last = Item::Tensor(TensorMeta::of(&[1], DType::I64));
        let all = Item::Slice {
            start: None,
            stop: None,
            step: 1,
        };
        let out = run(
            vec![n(2), s("s0"), n(16)],
            &[all.clone(), last, all.clone()],
            &mut ex,
        );
        assert_eq!(out, [n(2), n(1), n(16)]);
        let out = run(
            vec![n(2), s("s0"), n(16)],
            &[Item::Ellipsis, Item::Int(n(-1))],
            &mut ex,
        );
        assert_eq!(out, [n(2), s("s0")]);
        let out = run(
            vec![s("s0"), n(16)],
            &[
                Item::NewAxis,
                Item::Slice {
                    start: Some(n(-3)),
                    stop: None,
                    step: 2,
                },
            ],
            &mut ex,
        );
        assert_eq!(out, [n(1), n(2), n(16)]);
    }
}
