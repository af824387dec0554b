//! Matrix decompositions (`eigh`, `svd`, `qr`) and the pseudo-inverse:
//! real matrices, batched, with distinct eigen/singular values (where the
//! decomposition is differentiable at all).

use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Save, derivative};
use crate::value::Value;

fn diag_embed(v: &Tensor) -> Result<Tensor> {
    o::call("diag_embed", vec![o::value(v)], vec![])
}

/// `1 / (d_j - d_i)` off the diagonal, 0 on it, for the values `d` (…, k).
fn inverse_gaps(d: &Tensor) -> Result<Tensor> {
    let eye = diag_embed(&o::add_s(&o::mul_s(d, 0.0)?, 1.0)?)?;
    let gaps = o::sub(&o::unsqueeze(d, -2)?, &o::unsqueeze(d, -1)?)?;
    let off = o::add_s(&o::neg(&eye)?, 1.0)?;
    o::div(&off, &o::add(&gaps, &eye)?)
}

/// `x - xᵀ`, the part of `x` a gauge change (an orthogonal rotation within
/// the decomposition) cannot see.
fn skew(x: &Tensor) -> Result<Tensor> {
    o::sub(x, &o::mt(x)?)
}

/// `V · inner · Vᵀ`.
fn sandwich(v: &Tensor, inner: &Tensor, wt: &Tensor) -> Result<Tensor> {
    o::matmul(&o::matmul(v, inner)?, wt)
}

/// `linalg.eigh`'s gradient from its outputs' (`A = V diag(L) Vᵀ`):
/// `V (diag(gL) + F ∘ (VᵀgV - gVᵀV) / 2) Vᵀ`.
fn eigh_grad(l: &Tensor, v: &Tensor, gl: Option<Tensor>, gv: Option<Tensor>) -> Result<Tensor> {
    let mut inner = match &gl {
        Some(gl) => diag_embed(gl)?,
        None => o::mul_s(&diag_embed(l)?, 0.0)?,
    };
    if let Some(gv) = gv {
        let rotation = o::mul_s(&skew(&o::matmul(&o::mt(v)?, &gv)?)?, 0.5)?;
        inner = o::add(&inner, &o::mul(&inverse_gaps(l)?, &rotation)?)?;
    }
    sandwich(v, &inner, &o::mt(v)?)
}

/// `linalg_eigh(A, UPLO)`: eigenvalues and eigenvectors.
pub(crate) fn eigh() -> Derivative {
    derivative("LinalgEighBackward0", &[Save::Out(0), Save::Out(1)], |c| {
        let d = eigh_grad(&c.output(0)?, &c.output(1)?, c.grad_n(0), c.grad_n(1))?;
        c.set(0, d);
        Ok(())
    })
}

/// `linalg_eigvalsh(A, UPLO)`: the eigenvectors found again.
pub(crate) fn eigvalsh() -> Derivative {
    derivative("LinalgEighBackward0", &[Save::In(0)], |c| {
        let (l, v) = decomposed(
            "linalg_eigh",
            vec![o::value(&c.input(0)?), c.value(1).clone()],
        )?;
        let d = eigh_grad(&l[0], &v, Some(c.grad()?), None)?;
        c.set(0, d);
        Ok(())
    })
}

/// A decomposition row's outputs: all but the last, and the last.
fn decomposed(row: &str, args: Vec<Value>) -> Result<(Vec<Tensor>, Tensor)> {
    let mut parts: Vec<Tensor> = match o::call_value(row, args, vec![])? {
        Value::Tuple(items) | Value::ReturnType(_, items) => items
            .into_iter()
            .filter_map(|v| match v {
                Value::Tensor(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let last = parts
        .pop()
        .ok_or_else(|| TensorError::runtime("backward", format!("{row} returned nothing")))?;
    Ok((parts, last))
}

/// The SVD's gradient (`A = U diag(S) Vᵀ`, `U` m×k, `V` n×k) from its
/// outputs' (`gv` for `V`, not `Vh`):
/// `U (diag(gS) + J S + S K) Vᵀ` with `J = F ∘ (UᵀgU - gUᵀU)`,
/// `K = F ∘ (VᵀgV - gVᵀV)`, `F = 1 / (s_j² - s_i²)`; plus, for non-square
/// `A`, what `gU` and `gV` say outside the spans of `U` and `V`.
fn svd_grad(
    u: &Tensor,
    s: &Tensor,
    v: &Tensor,
    gu: Option<Tensor>,
    gs: Option<Tensor>,
    gv: Option<Tensor>,
) -> Result<Tensor> {
    let (m, n, k) = (
        u.shape()[u.ndim() - 2],
        v.shape()[v.ndim() - 2],
        s.shape()[s.ndim() - 1],
    );
    let sm = diag_embed(s)?;
    let mut inner = match &gs {
        Some(gs) => diag_embed(gs)?,
        None => o::mul_s(&sm, 0.0)?,
    };
    let f = inverse_gaps(&o::mul(s, s)?)?;
    let (ut, vt) = (o::mt(u)?, o::mt(v)?);
    let inv_s = diag_embed(&o::unary("reciprocal", s)?)?;
    let mut outside = Vec::new();
    if let Some(gu) = &gu {
        let j = o::mul(&f, &skew(&o::matmul(&ut, gu)?)?)?;
        inner = o::add(&inner, &o::matmul(&j, &sm)?)?;
        if m > k {
            let rest = o::sub(gu, &o::matmul(u, &o::matmul(&ut, gu)?)?)?;
            outside.push(sandwich(&rest, &inv_s, &vt)?);
        }
    }
    if let Some(gv) = &gv {
        let kk = o::mul(&f, &skew(&o::matmul(&vt, gv)?)?)?;
        inner = o::add(&inner, &o::matmul(&sm, &kk)?)?;
        if n > k {
            let rest = o::sub(gv, &o::matmul(v, &o::matmul(&vt, gv)?)?)?;
            outside.push(sandwich(u, &inv_s, &o::mt(&rest)?)?);
        }
    }
    outside
        .iter()
        .try_fold(sandwich(u, &inner, &vt)?, |acc, t| o::add(&acc, t))
}

/// The first `k` columns of `t` (a full decomposition's factor narrowed to
/// the reduced one's).
fn columns(t: Tensor, k: usize) -> Result<Tensor> {
    if t.shape()[t.ndim() - 1] == k {
        return Ok(t);
    }
    o::narrow(&t, -1, 0, k)
}

/// `linalg_svd(A, full_matrices)`: outputs `U`, `S`, `Vh`. A full
/// decomposition differentiates as the reduced one (the extra columns
/// carry no information about `A`).
pub(crate) fn linalg_svd() -> Derivative {
    derivative(
        "LinalgSvdBackward0",
        &[Save::Out(0), Save::Out(1), Save::Out(2)],
        |c| {
            let s = c.output(1)?;
            let k = s.shape()[s.ndim() - 1];
            let u = columns(c.output(0)?, k)?;
            let v = columns(o::mt(&c.output(2)?)?, k)?;
            let gu = c.grad_n(0).map(|g| columns(g, k)).transpose()?;
            let gv = c.grad_n(2).map(|g| columns(o::mt(&g)?, k)).transpose()?;
            let d = svd_grad(&u, &s, &v, gu, c.grad_n(1), gv)?;
            c.set(0, d);
            Ok(())
        },
    )
}

/// The legacy `svd(input, some, compute_uv)`: outputs `U`, `S`, `V`;
/// without `compute_uv` only `S` has a gradient.
pub(crate) fn svd() -> Derivative {
    derivative(
        "LinalgSvdBackward0",
        &[Save::In(0), Save::Out(0), Save::Out(1), Save::Out(2)],
        |c| {
            let s = c.output(1)?;
            let k = s.shape()[s.ndim() - 1];
            let d = if c.bool(2) {
                let u = columns(c.output(0)?, k)?;
                let v = columns(c.output(2)?, k)?;
                let gu = c.grad_n(0).map(|g| columns(g, k)).transpose()?;
                let gv = c.grad_n(2).map(|g| columns(g, k)).transpose()?;
                svd_grad(&u, &s, &v, gu, c.grad_n(1), gv)?
            } else {
                svdvals_grad(&c.input(0)?, c.grad_n(1))?
            };
            c.set(0, d);
            Ok(())
        },
    )
}

/// `U diag(gS) Vh` from a reduced SVD of `a` made again.
fn svdvals_grad(a: &Tensor, gs: Option<Tensor>) -> Result<Tensor> {
    let Some(gs) = gs else {
        return o::mul_s(a, 0.0);
    };
    let (parts, vh) = decomposed("linalg_svd", vec![o::value(a), Value::Bool(false)])?;
    sandwich(&parts[0], &diag_embed(&gs)?, &vh)
}

/// `linalg_svdvals(A)`.
pub(crate) fn svdvals() -> Derivative {
    derivative("LinalgSvdBackward0", &[Save::In(0)], |c| {
        let d = svdvals_grad(&c.input(0)?, c.grad_n(0))?;
        c.set(0, d);
        Ok(())
    })
}

/// `X R⁻ᵀ` for upper-triangular `R`.
fn times_inverse_transpose(x: &Tensor, r: &Tensor) -> Result<Tensor> {
    let solved = o::call(
        "linalg_solve",
        vec![o::value(r), o::value(&o::mt(x)?)],
        vec![],
    )?;
    o::mt(&solved)
}

/// The QR gradient of a square or tall `A = QR`:
/// `(gQ + Q copyltu(M)) R⁻ᵀ`, `M = R gRᵀ - gQᵀ Q`.
fn qr_tall(q: &Tensor, r: &Tensor, gq: &Tensor, gr: &Tensor) -> Result<Tensor> {
    let m = o::sub(&o::matmul(r, &o::mt(gr)?)?, &o::matmul(&o::mt(gq)?, q)?)?;
    let lower = o::call("tril", vec![o::value(&m), Value::Int(-1)], vec![])?;
    let diagonal = o::call("tril", vec![o::value(&m)], vec![])?;
    let copied = o::add(&diagonal, &o::mt(&lower)?)?;
    times_inverse_transpose(&o::add(gq, &o::matmul(q, &copied)?)?, r)
}

/// `linalg_qr(A, mode)`: a wide `A = Q [R₁ R₂]` differentiates its square
/// part as above, with `R₂`'s gradient folded into `Q`'s.
pub(crate) fn qr() -> Derivative {
    derivative(
        "LinalgQrBackward0",
        &[Save::In(0), Save::Out(0), Save::Out(1)],
        |c| {
            let fail = |m: &str| Err(TensorError::runtime("linalg_qr", m));
            let mode = match c.value(1) {
                Value::Str(s) => s.clone(),
                _ => "reduced".to_owned(),
            };
            let a = c.input(0)?;
            let (rows, cols) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
            if mode == "r" {
                return fail(
                    "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.",
                );
            }
            if mode == "complete" && rows > cols {
                return fail(
                    "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.",
                );
            }
            let (q, r) = (c.output(0)?, c.output(1)?);
            let gq = c.grad_or_zeros(0)?;
            let gr = c.grad_or_zeros(1)?;
            let d = if rows >= cols {
                qr_tall(&q, &r, &gq, &gr)?
            } else {
                let r1 = o::narrow(&r, -1, 0, rows)?;
                let gr1 = o::narrow(&gr, -1, 0, rows)?;
                let gr2 = o::narrow(&gr, -1, rows, cols - rows)?;
                let y = o::narrow(&a, -1, rows, cols - rows)?;
                let gq = o::add(&gq, &o::matmul(&y, &o::mt(&gr2)?)?)?;
                let gx = qr_tall(&q, &r1, &gq, &gr1)?;
                o::cat(&[gx, o::matmul(&q, &gr2)?], -1)?
            };
            c.set(0, d);
            Ok(())
        },
    )
}

/// `linalg.pinv` (and `pinverse`), `P = A⁺`, at constant rank:
/// `-Pᵀ gP Pᵀ + (I - A P) gPᵀ P Pᵀ + Pᵀ P gPᵀ (I - P A)`.
pub(crate) fn pinv() -> Derivative {
    derivative("LinalgPinvBackward0", &[Save::In(0), Save::Out(0)], |c| {
        let (a, p, g) = (c.input(0)?, c.output(0)?, c.grad()?);
        let (pt, gt) = (o::mt(&p)?, o::mt(&g)?);
        let first = o::neg(&sandwich(&pt, &g, &pt)?)?;
        let left = o::sub(&gt, &o::matmul(&a, &o::matmul(&p, &gt)?)?)?;
        let second = sandwich(&left, &p, &pt)?;
        let right = o::sub(&gt, &o::matmul(&o::matmul(&gt, &p)?, &a)?)?;
        let third = sandwich(&pt, &p, &right)?;
        c.set(0, o::add(&o::add(&first, &second)?, &third)?);
        Ok(())
    })
}
