//! Dense linear algebra on the `faer` crate: inverse, determinant,
//! solve, Cholesky, symmetric eigendecomposition, SVD and the matrix
//! norms, each over any leading batch dims. Matrices are factored in double
//! precision and results returned in the input's dtype. Eigenvectors and
//! singular vectors are unique only up to sign; their signs may differ from
//! LAPACK's.

use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, Side};

use crate::error::{Result, TensorError, legacy_name};
use crate::tensor::Tensor;

/// A batch of matrices, row-major `rows × cols` each, in double precision.
struct Batch {
    lead: Vec<usize>,
    rows: usize,
    cols: usize,
    mats: Vec<Mat<f64>>,
}

fn batch(op: &'static str, t: &Tensor, square: bool) -> Result<Batch> {
    if t.ndim() < 2 {
        return Err(TensorError::runtime(
            op,
            format!("{op}: The input tensor A must have at least 2 dimensions."),
        ));
    }
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented(format!(
            "{op}: Expected a floating point or complex tensor as input. Got {}",
            legacy_name(t.dtype())
        )));
    }
    let n = t.ndim();
    let (rows, cols) = (t.shape()[n - 2], t.shape()[n - 1]);
    if square && rows != cols {
        return Err(TensorError::runtime(
            op,
            format!(
                "{op}: A must be batches of square matrices, but they are {rows} by {cols} matrices"
            ),
        ));
    }
    let data: Vec<f64> = t.to_vec();
    let size = rows * cols;
    let count = t.numel().checked_div(size).unwrap_or(0);
    let mats = (0..count)
        .map(|b| Mat::from_fn(rows, cols, |i, j| data[b * size + i * cols + j]))
        .collect();
    Ok(Batch {
        lead: t.shape()[..n - 2].to_vec(),
        rows,
        cols,
        mats,
    })
}

fn stack(lead: &[usize], tail: &[usize], parts: Vec<Vec<f64>>, like: &Tensor) -> Tensor {
    let mut shape = lead.to_vec();
    shape.extend(tail);
    Tensor::from_vec(parts.into_iter().flatten().collect::<Vec<f64>>(), &shape)
        .to_dtype(like.dtype())
}

fn entries(m: faer::MatRef<'_, f64>) -> Vec<f64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

/// The first zero pivot of a partial-pivoting LU (1-based), if any.
fn singular_at(lu: &faer::linalg::solvers::PartialPivLu<f64>) -> Option<usize> {
    let u = lu.U();
    (0..u.nrows().min(u.ncols()))
        .find(|&k| u[(k, k)] == 0.0)
        .map(|k| k + 1)
}

/// `linalg.inv`: refuses singular matrices as PyTorch does.
pub fn inv(a: &Tensor) -> Result<Tensor> {
    let b = batch("linalg.inv", a, true)?;
    let mut parts = Vec::with_capacity(b.mats.len());
    for m in &b.mats {
        let lu = m.partial_piv_lu();
        if let Some(k) = singular_at(&lu) {
            return Err(TensorError::linalg(format!(
                "linalg.inv: The diagonal element {k} is zero, the inversion could not be completed because the input matrix is singular."
            )));
        }
        parts.push(entries(lu.inverse().as_ref()));
    }
    Ok(stack(&b.lead, &[b.rows, b.cols], parts, a))
}

/// `linalg.det`.
pub fn det(a: &Tensor) -> Result<Tensor> {
    let b = batch("linalg.det", a, true)?;
    let parts = b.mats.iter().map(|m| vec![m.determinant()]).collect();
    Ok(stack(&b.lead, &[], parts, a))
}

/// `linalg.slogdet`: the sign and the log of the absolute determinant.
pub fn slogdet(a: &Tensor) -> Result<(Tensor, Tensor)> {
    let b = batch("linalg.slogdet", a, true)?;
    let (mut signs, mut logs) = (Vec::new(), Vec::new());
    for m in &b.mats {
        let d = m.determinant();
        signs.push(vec![if d > 0.0 {
            1.0
        } else if d < 0.0 {
            -1.0
        } else {
            0.0
        }]);
        logs.push(vec![d.abs().ln()]);
    }
    Ok((stack(&b.lead, &[], signs, a), stack(&b.lead, &[], logs, a)))
}

/// `linalg.solve(A, B, left)`: `A X = B` (or `X A = B`), with `B` a vector
/// (batched) or a matrix; batch dims broadcast.
pub fn solve(a: &Tensor, rhs: &Tensor, left: bool) -> Result<Tensor> {
    let op = "linalg.solve";
    let n = a.shape().last().copied().unwrap_or(0);
    batch(op, a, true)?;
    let vector = rhs.ndim() == 1
        || (rhs.ndim() == a.ndim() - 1
            && rhs.shape()[..rhs.ndim() - 1] == a.shape()[..a.ndim() - 2]);
    let rhs_m = if vector {
        crate::ops::shape::unsqueeze(rhs, -1)?
    } else {
        rhs.clone()
    };
    let (a, rhs_m) = if left {
        (a.clone(), rhs_m)
    } else {
        // X A = B  ⇔  Aᵀ Xᵀ = Bᵀ.
        (
            crate::ops::shape::transpose(a, -1, -2)?,
            crate::ops::shape::transpose(&rhs_m, -1, -2)?,
        )
    };
    if rhs_m.shape()[rhs_m.ndim() - 2] != n {
        return Err(TensorError::runtime(
            op,
            format!(
                "{op}: Incompatible shapes of A and B for the equation AX = B ({:?} and {:?})",
                a.shape(),
                rhs.shape()
            ),
        ));
    }
    let lead = crate::layout::broadcast_shapes(
        &a.shape()[..a.ndim() - 2],
        &rhs_m.shape()[..rhs_m.ndim() - 2],
    )
    .ok_or_else(|| TensorError::broadcast(a.shape(), rhs.shape()))?;
    let k = rhs_m.shape()[rhs_m.ndim() - 1];
    let expand = |t: &Tensor, r: usize, c: usize| -> Result<Tensor> {
        let mut s = lead.clone();
        s.extend([r, c]);
        Ok(t.broadcast_to(&s)?.contiguous())
    };
    let (a, rhs_m) = (expand(&a, n, n)?, expand(&rhs_m, n, k)?);
    let systems = batch(op, &a, true)?;
    let targets = batch(op, &rhs_m.to_dtype(a.dtype()), false)?;
    let mut parts = Vec::with_capacity(systems.mats.len());
    for (m, r) in systems.mats.iter().zip(&targets.mats) {
        let lu = m.partial_piv_lu();
        if singular_at(&lu).is_some() {
            return Err(TensorError::linalg(
                "torch.linalg.solve: The solver failed because the input matrix is singular.",
            ));
        }
        parts.push(entries(lu.solve(r).as_ref()));
    }
    let x = stack(&lead, &[n, k], parts, &a);
    let x = if left {
        x
    } else {
        crate::ops::shape::transpose(&x, -1, -2)?.contiguous()
    };
    if vector {
        crate::ops::shape::squeeze(&x, Some(&[-1]))
    } else {
        Ok(x)
    }
}

/// `linalg.cholesky(A, upper)`: `L` with `A = L Lᵀ` (or `U = Lᵀ`).
pub fn cholesky(a: &Tensor, upper: bool) -> Result<Tensor> {
    let b = batch("linalg.cholesky", a, true)?;
    let mut parts = Vec::with_capacity(b.mats.len());
    for m in &b.mats {
        let llt = m.llt(Side::Lower).map_err(|e| {
            let faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index } = e;
            TensorError::linalg(format!(
                "linalg.cholesky: The factorization could not be completed because the input is not positive-definite (the leading minor of order {} is not positive-definite).",
                index + 1
            ))
        })?;
        let l = llt.L();
        parts.push(if upper {
            entries(l.transpose())
        } else {
            entries(l)
        });
    }
    Ok(stack(&b.lead, &[b.rows, b.cols], parts, a))
}

/// `linalg.eigh(A, UPLO)`: ascending eigenvalues and orthonormal
/// eigenvectors (as columns) of a symmetric matrix, read from its lower
/// (`"L"`) or upper triangle.
pub fn eigh(a: &Tensor, upper: bool, vectors: bool) -> Result<(Tensor, Option<Tensor>)> {
    let op = if vectors {
        "linalg.eigh"
    } else {
        "linalg.eigvalsh"
    };
    let b = batch(op, a, true)?;
    let side = if upper { Side::Upper } else { Side::Lower };
    let (mut values, mut vecs) = (Vec::new(), Vec::new());
    for m in &b.mats {
        let e = m.self_adjoint_eigen(side).map_err(|_| {
            TensorError::runtime(op, format!("{op}: The algorithm failed to converge."))
        })?;
        let s = e.S();
        values.push((0..b.rows).map(|i| s[i]).collect::<Vec<f64>>());
        vecs.push(entries(e.U()));
    }
    let values = stack(&b.lead, &[b.rows], values, a);
    Ok((
        values,
        vectors.then(|| stack(&b.lead, &[b.rows, b.rows], vecs, a)),
    ))
}

/// `linalg.svd(A, full_matrices)`: `U`, descending singular values `S`
/// and `Vh` with `A = U diag(S) Vh`.
pub fn svd(a: &Tensor, full_matrices: bool) -> Result<(Tensor, Tensor, Tensor)> {
    let b = batch("linalg.svd", a, false)?;
    let k = b.rows.min(b.cols);
    let (ucols, vrows) = if full_matrices {
        (b.rows, b.cols)
    } else {
        (k, k)
    };
    let (mut us, mut ss, mut vs) = (Vec::new(), Vec::new(), Vec::new());
    for m in &b.mats {
        let d = if full_matrices { m.svd() } else { m.thin_svd() }.map_err(|_| {
            TensorError::runtime(
                "linalg.svd",
                "linalg.svd: The algorithm failed to converge.",
            )
        })?;
        us.push(entries(d.U()));
        let s = d.S();
        ss.push((0..k).map(|i| s[i]).collect::<Vec<f64>>());
        vs.push(entries(d.V().transpose()));
    }
    Ok((
        stack(&b.lead, &[b.rows, ucols], us, a),
        stack(&b.lead, &[k], ss, a),
        stack(&b.lead, &[vrows, b.cols], vs, a),
    ))
}

/// The singular values alone.
pub fn svdvals(a: &Tensor) -> Result<Tensor> {
    let b = batch("linalg.svdvals", a, false)?;
    let k = b.rows.min(b.cols);
    let mut ss = Vec::new();
    for m in &b.mats {
        let d = m.thin_svd().map_err(|_| {
            TensorError::runtime(
                "linalg.svdvals",
                "linalg.svd: The algorithm failed to converge.",
            )
        })?;
        let s = d.S();
        ss.push((0..k).map(|i| s[i]).collect::<Vec<f64>>());
    }
    Ok(stack(&b.lead, &[k], ss, a))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(data: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(data.to_vec(), shape)
    }

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-10)
    }

    #[test]
    fn inverse_determinant_and_solve_agree() {
        let a = m(&[4.0, 7.0, 2.0, 6.0], &[2, 2]);
        assert!(close(
            &inv(&a).unwrap().to_vec::<f64>(),
            &[0.6, -0.7, -0.2, 0.4]
        ));
        assert!(close(&det(&a).unwrap().to_vec::<f64>(), &[10.0]));
        let x = solve(&a, &m(&[1.0, 2.0], &[2]), true).unwrap();
        assert!(close(&x.to_vec::<f64>(), &[-0.8, 0.6]));
        let singular = m(&[1.0, 2.0, 2.0, 4.0], &[2, 2]);
        assert!(inv(&singular).unwrap_err().to_string().contains("singular"));
    }

    #[test]
    fn cholesky_eigh_and_svd_reconstruct() {
        let a = m(&[4.0, 2.0, 2.0, 3.0], &[2, 2]);
        let l = cholesky(&a, false).unwrap().to_vec::<f64>();
        assert!(close(
            &[l[0] * l[0], l[0] * l[2], l[2] * l[2] + l[3] * l[3]],
            &[4.0, 2.0, 3.0]
        ));
        assert_eq!(l[1], 0.0);
        let (w, _) = eigh(&a, false, false).unwrap();
        let w = w.to_vec::<f64>();
        assert!(close(&[w[0] + w[1], w[0] * w[1]], &[7.0, 8.0]) && w[0] < w[1]);
        let (_, s, _) = svd(&m(&[3.0, 0.0, 0.0, -2.0], &[2, 2]), true).unwrap();
        assert!(close(&s.to_vec::<f64>(), &[3.0, 2.0]));
        let err = cholesky(&m(&[1.0, 2.0, 2.0, 1.0], &[2, 2]), false).unwrap_err();
        assert!(err.to_string().contains("order 2"), "{err}");
    }
}
