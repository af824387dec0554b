//! Products.

use fxvm_tensor::{Result, Tensor};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

const BOTH: &[Save] = &[Save::In(0), Save::In(1)];

pub(crate) fn mm(name: &'static str) -> Derivative {
    derivative(name, BOTH, |c| {
        let g = c.grad()?;
        if c.needs(0) {
            let d = o::matmul(&g, &o::mt(&c.input(1)?)?)?;
            c.set(0, d);
        }
        if c.needs(1) {
            let d = o::matmul(&o::mt(&c.input(0)?)?, &g)?;
            c.set(1, d);
        }
        Ok(())
    })
}

/// PyTorch's node for a `matmul` of these ranks.
fn matmul_name(values: &[Value]) -> &'static str {
    let rank = |v: &Value| match v {
        Value::Tensor(t) => t.ndim(),
        _ => 0,
    };
    match (rank(&values[0]), rank(&values[1])) {
        (1, 1) => "DotBackward0",
        (2, 1) => "MvBackward0",
        (2, 2) => "MmBackward0",
        _ => "UnsafeViewBackward0",
    }
}

/// PyTorch's node for `linear`: `addmm` on matrices with a bias, `mm`
/// without, a view of the product for more dims.
fn linear_name(values: &[Value]) -> &'static str {
    match (&values[0], &values[2]) {
        (Value::Tensor(t), _) if t.ndim() > 2 => "UnsafeViewBackward0",
        (_, Value::None) => "MmBackward0",
        _ => "AddmmBackward0",
    }
}

/// `matmul` over any ranks: 1-d operands are made matrices, products of
/// stacks broadcast (the engine sums the gradient back to each shape).
pub(crate) fn matmul() -> Derivative {
    derivative(Name::Pick(matmul_name), BOTH, |c| {
        let (a, b, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let a2 = if a.ndim() == 1 {
            o::unsqueeze(&a, 0)?
        } else {
            a.clone()
        };
        let b2 = if b.ndim() == 1 {
            o::unsqueeze(&b, 1)?
        } else {
            b.clone()
        };
        // The gradient with the dims 1-d operands lost put back.
        let mut g2 = g.clone();
        if a.ndim() == 1 {
            g2 = o::unsqueeze(&g2, if b.ndim() == 1 { 0 } else { -2 })?;
        }
        if b.ndim() == 1 {
            g2 = o::unsqueeze(&g2, -1)?;
        }
        if c.needs(0) {
            let d = o::matmul(&g2, &o::mt(&b2)?)?;
            let d = if a.ndim() == 1 {
                o::sum_to(&d, &[1, a.shape()[0]])?
            } else {
                d
            };
            c.set(0, o::reshape(&o::sum_to(&d, a2.shape())?, a.shape())?);
        }
        if c.needs(1) {
            let d = o::matmul(&o::mt(&a2)?, &g2)?;
            c.set(1, o::reshape(&o::sum_to(&d, b2.shape())?, b.shape())?);
        }
        Ok(())
    })
}

/// `addmm(input, mat1, mat2, beta, alpha)`.
pub(crate) fn addmm() -> Derivative {
    derivative("AddmmBackward0", &[Save::In(1), Save::In(2)], |c| {
        let g = c.grad()?;
        let (beta, alpha) = (c.scalar(3), c.scalar(4));
        if c.needs(0) {
            let d = o::mul_scalar(&g, beta)?;
            c.set(0, d);
        }
        let ga = o::mul_scalar(&g, alpha)?;
        if c.needs(1) {
            let d = o::mm(&ga, &o::mt(&c.input(2)?)?)?;
            c.set(1, d);
        }
        if c.needs(2) {
            let d = o::mm(&o::mt(&c.input(1)?)?, &ga)?;
            c.set(2, d);
        }
        Ok(())
    })
}

/// `linear(input, weight, bias)`: `input @ weight.T + bias` over any
/// leading dims.
pub(crate) fn linear() -> Derivative {
    derivative(Name::Pick(linear_name), &[Save::In(0), Save::In(1)], |c| {
        let g = c.grad()?;
        let outs = *g.shape().last().unwrap_or(&1);
        if c.needs(0) {
            let d = o::matmul(&g, &c.input(1)?)?;
            c.set(0, d);
        }
        if c.needs(1) || c.needs(2) {
            let rows: Vec<usize> = vec![g.numel() / outs.max(1), outs];
            let g2 = o::reshape(&g, &rows)?;
            if c.needs(1) {
                let x = c.input(0)?;
                let ins = *x.shape().last().unwrap_or(&1);
                let x2 = o::reshape(&x, &[x.numel() / ins.max(1), ins])?;
                let d = o::mm(&o::mt(&g2)?, &x2)?;
                c.set(1, d);
            }
            if c.needs(2) {
                let d = o::sum(&g2, &[0], false)?;
                c.set(2, d);
            }
        }
        Ok(())
    })
}

/// The product kinds of the `add*` BLAS rows: `beta · input + alpha · P`.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Blas {
    /// `addmv`: matrix × vector.
    Mv,
    /// `addr`: outer product of two vectors.
    Outer,
    /// `baddbmm`: batched matrix products.
    Bmm,
    /// `addbmm`: batched products summed over the batch.
    SummedBmm,
}

/// `addmv`/`addr`/`baddbmm`/`addbmm(input, a, b, beta, alpha)`.
pub(crate) fn blas(kind: Blas) -> Derivative {
    let name = match kind {
        Blas::Mv => "AddmvBackward0",
        Blas::Outer => "AddrBackward0",
        Blas::Bmm => "BaddbmmBackward0",
        Blas::SummedBmm => "AddbmmBackward0",
    };
    derivative(name, &[Save::In(1), Save::In(2)], move |c| {
        let g = c.grad()?;
        let (beta, alpha) = (c.scalar(3), c.scalar(4));
        if c.needs(0) {
            c.set(0, o::mul_scalar(&g, beta)?);
        }
        let ga = o::mul_scalar(&g, alpha)?;
        let (a, b) = (c.input(1)?, c.input(2)?);
        let (da, db) = match kind {
            Blas::Mv => (
                o::mul(&o::unsqueeze(&ga, 1)?, &o::unsqueeze(&b, 0)?)?,
                o::matmul(&o::mt(&a)?, &ga)?,
            ),
            Blas::Outer => (o::matmul(&ga, &b)?, o::matmul(&o::mt(&ga)?, &a)?),
            Blas::Bmm => (o::bmm(&ga, &o::mt(&b)?)?, o::bmm(&o::mt(&a)?, &ga)?),
            Blas::SummedBmm => {
                let batch = a.shape()[0];
                let mut shape = vec![batch];
                shape.extend_from_slice(ga.shape());
                let gb = o::expand(&o::unsqueeze(&ga, 0)?, &shape)?;
                (o::bmm(&gb, &o::mt(&b)?)?, o::bmm(&o::mt(&a)?, &gb)?)
            }
        };
        if c.needs(1) {
            c.set(1, da);
        }
        if c.needs(2) {
            c.set(2, db);
        }
        Ok(())
    })
}

fn inv(a: &Tensor) -> Result<Tensor> {
    o::call("linalg_inv", vec![Value::Tensor(a.clone())], vec![])
}

/// `linalg_inv(A)`/`inverse(A)`: `-A⁻ᵀ g A⁻ᵀ`.
pub(crate) fn inverse(name: &'static str) -> Derivative {
    derivative(name, &[Save::Out(0)], |c| {
        let it = o::mt(&c.output(0)?)?;
        let d = o::neg(&o::matmul(&o::matmul(&it, &c.grad()?)?, &it)?)?;
        c.set(0, d);
        Ok(())
    })
}

/// `g` of a per-matrix scalar shaped to scale each matrix.
fn per_matrix(g: &Tensor) -> Result<Tensor> {
    o::unsqueeze(&o::unsqueeze(g, -1)?, -1)
}

/// `det(A)`: `g det(A) A⁻ᵀ`.
pub(crate) fn det(name: &'static str) -> Derivative {
    derivative(name, &[Save::In(0), Save::Out(0)], |c| {
        let (a, y, g) = (c.input(0)?, c.output(0)?, c.grad()?);
        let scale = per_matrix(&o::mul(&g, &y)?)?;
        c.set(0, o::mul(&scale, &o::mt(&inv(&a)?)?)?);
        Ok(())
    })
}

/// `slogdet(A)` → `(sign, log|det A|)`, and `logdet(A)`: `g A⁻ᵀ` for the
/// logarithm (the sign has no gradient).
pub(crate) fn log_det(name: &'static str, output: usize) -> Derivative {
    derivative(name, &[Save::In(0)], move |c| {
        let Some(g) = c.grad_n(output) else {
            return Ok(());
        };
        let a = c.input(0)?;
        c.set(0, o::mul(&per_matrix(&g)?, &o::mt(&inv(&a)?)?)?);
        Ok(())
    })
}

/// `linalg_solve(A, B, left)`: `X = A⁻¹ B`; `gB = A⁻ᵀ g`, `gA = -gB Xᵀ`
/// (`B` a vector or a stack of matrices).
pub(crate) fn solve() -> Derivative {
    derivative(
        "LinalgSolveExBackward0",
        &[Save::In(0), Save::Out(0)],
        |c| {
            if !matches!(c.value(2), Value::Bool(true) | Value::None) {
                return Err(fxvm_tensor::TensorError::not_implemented(
                    "the derivative of 'linalg.solve' with left=False is not implemented.",
                ));
            }
            let (a, x, g) = (c.input(0)?, c.output(0)?, c.grad()?);
            let vector = x.ndim() == a.ndim() - 1;
            let gb = o::call(
                "linalg_solve",
                vec![Value::Tensor(o::mt(&a)?), Value::Tensor(g)],
                vec![],
            )?;
            if c.needs(0) {
                let d = if vector {
                    o::neg(&o::mul(&o::unsqueeze(&gb, -1)?, &o::unsqueeze(&x, -2)?)?)?
                } else {
                    o::neg(&o::matmul(&gb, &o::mt(&x)?)?)?
                };
                c.set(0, d);
            }
            if c.needs(1) {
                c.set(1, gb);
            }
            Ok(())
        },
    )
}

/// `cholesky(A, upper)`: for `A = L Lᵀ`, `S = L⁻ᵀ Φ(Lᵀ tril(gL)) L⁻¹`
/// and `gA = (S + Sᵀ) / 2` (PyTorch's: a gradient for the symmetric input),
/// `Φ` the lower triangle with its diagonal halved.
pub(crate) fn cholesky(name: &'static str) -> Derivative {
    derivative(name, &[Save::Out(0)], |c| {
        let upper = c.bool(1);
        let (mut l, mut g) = (c.output(0)?, c.grad()?);
        if upper {
            (l, g) = (o::mt(&l)?, o::mt(&g)?);
        }
        // Only L's lower triangle varies.
        let g = o::call("tril", vec![Value::Tensor(g)], vec![])?;
        let p = o::matmul(&o::mt(&l)?, &g)?;
        let lower = o::call(
            "tril",
            vec![Value::Tensor(p.clone()), Value::Int(-1)],
            vec![],
        )?;
        let diagonal = o::mul_s(
            &o::sub(
                &o::call("tril", vec![Value::Tensor(p), Value::Int(0)], vec![])?,
                &lower,
            )?,
            0.5,
        )?;
        let phi = o::add(&lower, &diagonal)?;
        let li = inv(&l)?;
        let s = o::matmul(&o::matmul(&o::mt(&li)?, &phi)?, &li)?;
        let d = o::mul_s(&o::add(&s, &o::mt(&s)?)?, 0.5)?;
        c.set(0, d);
        Ok(())
    })
}

/// The contracted dims of `tensordot(a, b, dims)`'s call, each side's.
fn contracted(
    c: &crate::autograd::Back<'_>,
    a: &Tensor,
    b: &Tensor,
) -> Result<(Vec<usize>, Vec<usize>)> {
    let wrap = |d: i64, n: usize| {
        if d < 0 {
            (d + n as i64) as usize
        } else {
            d as usize
        }
    };
    Ok(match c.value(2) {
        Value::Int(n) => {
            let n = *n as usize;
            ((a.ndim() - n..a.ndim()).collect(), (0..n).collect())
        }
        Value::Data(data) => {
            let v: Vec<i64> = data
                .clone()
                .into_tensor(Some(fxvm_tensor::DType::I64))?
                .to_vec();
            let half = v.len() / 2;
            (
                v[..half].iter().map(|&d| wrap(d, a.ndim())).collect(),
                v[half..].iter().map(|&d| wrap(d, b.ndim())).collect(),
            )
        }
        _ => (vec![], vec![]),
    })
}

/// The permutation undoing `order` (the dims of a tensor listed as laid out).
fn undo(order: &[usize]) -> Vec<i64> {
    let mut back = vec![0i64; order.len()];
    for (pos, &d) in order.iter().enumerate() {
        back[d] = pos as i64;
    }
    back
}

/// `tensordot(a, b, dims)` = `a` (free dims, then contracted) as rows times
/// `b` (contracted, then free) as columns; each gradient is the gradient
/// times the other side, laid back in its operand's dim order.
pub(crate) fn tensordot() -> Derivative {
    derivative("TensordotBackward0", BOTH, |c| {
        let (a, b, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let (da, db) = contracted(c, &a, &b)?;
        let free_a: Vec<usize> = (0..a.ndim()).filter(|d| !da.contains(d)).collect();
        let free_b: Vec<usize> = (0..b.ndim()).filter(|d| !db.contains(d)).collect();
        let size =
            |t: &Tensor, dims: &[usize]| dims.iter().map(|&d| t.shape()[d]).product::<usize>();
        let (rows, k, cols) = (size(&a, &free_a), size(&a, &da), size(&b, &free_b));
        let g2 = o::reshape(&g, &[rows, cols])?;
        let as_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
        let shape_of =
            |t: &Tensor, dims: &[usize]| dims.iter().map(|&d| t.shape()[d]).collect::<Vec<_>>();
        if c.needs(0) {
            let order = [free_b.clone(), db.clone()].concat();
            // bᵀ laid as [free_b, contracted]: g2 · that gives [rows, k].
            let bt = o::reshape(&o::permute(&b, &as_i64(&order))?, &[cols, k])?;
            let d = o::mm(&g2, &bt)?;
            let laid = [free_a.clone(), da.clone()].concat();
            let d = o::reshape(&d, &[shape_of(&a, &free_a), shape_of(&a, &da)].concat())?;
            c.set(0, o::permute(&d, &undo(&laid))?);
        }
        if c.needs(1) {
            let order = [da.clone(), free_a.clone()].concat();
            let at = o::reshape(&o::permute(&a, &as_i64(&order))?, &[k, rows])?;
            let d = o::mm(&at, &g2)?;
            let laid = [db.clone(), free_b.clone()].concat();
            let d = o::reshape(&d, &[shape_of(&b, &db), shape_of(&b, &free_b)].concat())?;
            c.set(1, o::permute(&d, &undo(&laid))?);
        }
        Ok(())
    })
}

/// `bilinear(x1, x2, W, b)`: `y_o = x1ᵀ W_o x2 + b_o`, so each input's
/// gradient contracts the other two with the output's (PyTorch composes
/// it of `_trilinear`, whose node it names).
pub(crate) fn bilinear() -> Derivative {
    derivative(
        "TrilinearBackward0",
        &[Save::In(0), Save::In(1), Save::In(2)],
        |c| {
            let (x1, x2, w, g) = (c.input(0)?, c.input(1)?, c.input(2)?, c.grad()?);
            let einsum = |eq: &str, a: &Tensor, b: &Tensor, d: &Tensor| {
                o::call(
                    "einsum",
                    vec![
                        Value::Str(eq.into()),
                        Value::Tensors(vec![a.clone(), b.clone(), d.clone()]),
                    ],
                    vec![],
                )
            };
            if c.needs(0) {
                c.set(0, einsum("...o,oij,...j->...i", &g, &w, &x2)?);
            }
            if c.needs(1) {
                c.set(1, einsum("...o,oij,...i->...j", &g, &w, &x1)?);
            }
            if c.needs(2) {
                c.set(2, einsum("...o,...i,...j->oij", &g, &x1, &x2)?);
            }
            if c.needs(3) {
                let lead: Vec<i64> = (0..g.ndim() as i64 - 1).collect();
                c.set(3, o::sum(&g, &lead, false)?);
            }
            Ok(())
        },
    )
}
