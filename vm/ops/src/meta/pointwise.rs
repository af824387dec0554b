//! Pointwise ops (elementwise arithmetic, comparisons, activations,
//! `where`, `masked_fill` …): the output has the broadcast sizes of the
//! tensor operands, and its dtype is what the kernel itself returns for
//! one-element operands of the same ranks and dtypes (so type promotion is
//! never spelled twice).

use fxvm_symbolic::Expr;
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use super::{Ctx, Meta, MetaOut, TensorMeta};
use crate::value::Value;

/// PyTorch's broadcasting of `a` and `b`: sizes aligned from the right, a
/// size 1 stretching to the other; two sizes not known to be 1 must be equal
/// (which the oracle may turn into a guard).
pub(crate) fn broadcast(cx: &mut Ctx<'_>, a: &[Expr], b: &[Expr]) -> Result<Vec<Expr>> {
    let n = a.len().max(b.len());
    let one = Expr::int(1);
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = (i + a.len()).checked_sub(n).map(|j| &a[j]);
        let y = (i + b.len()).checked_sub(n).map(|j| &b[j]);
        out.push(match (x, y) {
            (Some(x), None) => x.clone(),
            (None, Some(y)) => y.clone(),
            (Some(x), Some(y)) => {
                if x == y || cx.equal(y, &one)? {
                    x.clone()
                } else if cx.equal(x, &one)? || cx.equal(x, y)? {
                    y.clone()
                } else {
                    let (lhs, rhs) = (cx.hints(a), cx.hints(b));
                    return Err(TensorError::Broadcast { lhs, rhs, dim: i });
                }
            }
            (None, None) => unreachable!("i < n"),
        });
    }
    Ok(out)
}

/// A one-element stand-in for `meta`, of the same rank and dtype.
fn probe(meta: &TensorMeta) -> Tensor {
    Tensor::full(&vec![1; meta.ndim()], Scalar::Int(1), meta.dtype)
}

/// The kernel run on one-element stand-ins for every tensor (same ranks
/// and dtypes) and example values for sizes: what it returns tells the
/// result's dtype(s). Also the broadcast sizes of the tensor arguments.
fn probe_run(cx: &mut Ctx<'_>, broadcast_all: bool) -> Result<(Value, Vec<Expr>)> {
    let mut sizes: Option<Vec<Expr>> = None;
    let mut values = Vec::with_capacity(cx.args.len());
    for i in 0..cx.args.len() {
        let v = match cx.args[i].clone() {
            Meta::Tensor(t) => {
                sizes = Some(match sizes {
                    None => t.sizes.clone(),
                    Some(s) if broadcast_all => broadcast(cx, &s, &t.sizes)?,
                    Some(s) => s,
                });
                Value::Tensor(probe(&t))
            }
            Meta::Tensors(ts) => Value::Tensors(ts.iter().map(probe).collect()),
            Meta::Int(e) => {
                let v = cx.hint(&e).unwrap_or(1);
                if cx.op.schema.params[i].ty == crate::Ty::Int {
                    Value::Int(v)
                } else {
                    // A traced size where a number goes (`x + x.size(0)`).
                    Value::Scalar(Scalar::Int(v))
                }
            }
            Meta::Ints(es) => Value::Ints(es.iter().map(|e| cx.hint(e).unwrap_or(1)).collect()),
            Meta::Value(v) => v,
        };
        let p = &cx.op.schema.params[i];
        if !(v.fits(&p.ty) || matches!(v, Value::None) && p.optional) {
            return Err(cx.bad(p.name));
        }
        values.push(v);
    }
    Ok((cx.op.run(values)?, sizes.unwrap_or_default()))
}

/// The probe's result described with `sizes` for every tensor in it.
pub(crate) fn described(cx: &Ctx<'_>, out: Value, sizes: &[Expr]) -> Result<MetaOut> {
    Ok(match out {
        Value::Input(i) => MetaOut::Input(i),
        Value::Tensor(t) => MetaOut::Tensor(TensorMeta::new(sizes.to_vec(), t.dtype())),
        Value::Tuple(items) | Value::ReturnType(_, items) => MetaOut::Tuple(
            items
                .iter()
                .map(|v| match v {
                    Value::Tensor(t) => Ok(TensorMeta::new(sizes.to_vec(), t.dtype())),
                    _ => Err(cx.bad("a non-tensor result")),
                })
                .collect::<Result<_>>()?,
        ),
        _ => return Err(cx.bad("a non-tensor result")),
    })
}

/// Elementwise over broadcast operands.
pub(crate) fn pointwise(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let (out, sizes) = probe_run(cx, true)?;
    described(cx, out, &sizes)
}

/// The first tensor's sizes, the kernel's dtype (conversions, `sort`).
pub(crate) fn like_first(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let (out, sizes) = probe_run(cx, false)?;
    described(cx, out, &sizes)
}

/// Only the dtype(s) the kernel gives; the caller knows the sizes.
pub(crate) fn probe_with_sizes(cx: &mut Ctx<'_>, sizes: &[Expr]) -> Result<MetaOut> {
    let (out, _) = probe_run(cx, false)?;
    described(cx, out, sizes)
}

#[cfg(test)]
mod tests {
    use fxvm_tensor::DType;

    use super::*;
    use crate::meta::testing::{Examples, n, s};
    use crate::registry;

    fn t(sizes: Vec<Expr>, dtype: DType) -> Meta {
        Meta::Tensor(TensorMeta::new(sizes, dtype))
    }

    #[test]
    fn broadcasting_stretches_ones_and_guards_equal_symbols() {
        let add = registry().function("add").unwrap();
        let mut ex = Examples::with(&[("s0", 8), ("s1", 8)]);
        let out = add
            .infer(
                vec![
                    t(vec![s("s0"), n(1), n(16)], DType::F32),
                    t(vec![s("s1"), n(16)], DType::I64),
                    Meta::Value(Value::Scalar(Scalar::Int(1))),
                ],
                &mut ex,
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            MetaOut::Tensor(TensorMeta::new(vec![s("s0"), s("s1"), n(16)], DType::F32))
        );
        // s1 against 1 is a question the facts (sizes ≥ 2) answer for a
        // ShapeEnv; this oracle records every question.
        assert_eq!(ex.guards, ["Not(Eq(s1, 1))"]);
    }

    #[test]
    fn comparisons_are_bool_and_clashes_name_example_sizes() {
        let lt = registry().function("lt").unwrap();
        let mut ex = Examples::with(&[("s0", 3)]);
        let out = lt.infer(
            vec![t(vec![s("s0")], DType::I64), t(vec![n(4)], DType::F32)],
            &mut ex,
        );
        let err = out.unwrap().unwrap_err();
        assert_eq!(
            err.to_string(),
            "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"
        );
        let out = lt
            .infer(
                vec![t(vec![s("s0")], DType::I64), t(vec![n(1)], DType::F32)],
                &mut ex,
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            MetaOut::Tensor(TensorMeta::new(vec![s("s0")], DType::Bool))
        );
    }

    #[test]
    fn a_size_where_a_number_goes_probes_as_a_number() {
        let add = registry().function("add").unwrap();
        let mut ex = Examples::with(&[("s0", 5)]);
        let out = add
            .infer(
                vec![
                    t(vec![s("s0"), n(3)], DType::F32),
                    Meta::Int(s("s0")),
                    Meta::Value(Value::Scalar(Scalar::Int(1))),
                ],
                &mut ex,
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            MetaOut::Tensor(TensorMeta::new(vec![s("s0"), n(3)], DType::F32))
        );
        // A value of the wrong kind is refused, not a panic in the kernel.
        let err = add
            .infer(
                vec![
                    t(vec![n(3)], DType::F32),
                    Meta::Value(Value::Str("x".into())),
                    Meta::Value(Value::Scalar(Scalar::Int(1))),
                ],
                &mut ex,
            )
            .unwrap()
            .unwrap_err();
        assert!(err.to_string().contains("other"), "{err}");
    }

    #[test]
    fn in_place_ops_return_their_input() {
        let add_ = registry().function("add_").unwrap();
        let mut ex = Examples::default();
        let out = add_
            .infer(
                vec![
                    t(vec![n(2), n(3)], DType::F32),
                    t(vec![n(3)], DType::F32),
                    Meta::Value(Value::Scalar(Scalar::Int(1))),
                ],
                &mut ex,
            )
            .unwrap()
            .unwrap();
        assert_eq!(out, MetaOut::Input(0));
    }
}
