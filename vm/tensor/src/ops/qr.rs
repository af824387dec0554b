//! QR decomposition by Householder reflections with LAPACK's conventions
//! (`geqrf`/`orgqr`: each reflection sends its column to `-sign(a)·‖x‖`), so
//! `torch.linalg.qr` gives PyTorch's signs, not merely a valid factorisation.

use crate::error::{Result, TensorError};
use crate::layout::Layout;
use crate::tensor::Tensor;

/// Which factors `linalg.qr` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QrMode {
    /// `Q` is m×k and `R` k×n, `k = min(m, n)`.
    Reduced,
    /// `Q` is m×m and `R` m×n.
    Complete,
    /// Only `R` (k×n); `Q` is empty.
    R,
}

impl QrMode {
    pub fn parse(mode: &str) -> Result<QrMode> {
        match mode {
            "reduced" => Ok(QrMode::Reduced),
            "complete" => Ok(QrMode::Complete),
            "r" => Ok(QrMode::R),
            _ => Err(TensorError::runtime(
                "linalg_qr",
                format!(
                    "qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or 'complete'"
                ),
            )),
        }
    }
}

/// Factors one row-major m×n matrix: `(Q, R)` as row-major vectors.
fn factor(a: &[f64], m: usize, n: usize, mode: QrMode) -> (Vec<f64>, Vec<f64>) {
    let k = m.min(n);
    let mut r = a.to_vec();
    let at = |i: usize, j: usize| i * n + j;
    // Householder vectors (v[0] = 1 implied) and their scales.
    let mut reflections: Vec<(Vec<f64>, f64)> = Vec::with_capacity(k);
    for c in 0..k {
        let alpha = r[at(c, c)];
        let xnorm = (c + 1..m)
            .map(|i| r[at(i, c)] * r[at(i, c)])
            .sum::<f64>()
            .sqrt();
        if xnorm == 0.0 {
            reflections.push((vec![0.0; m - c - 1], 0.0));
            continue;
        }
        let beta = -alpha.signum() * alpha.hypot(xnorm);
        let tau = (beta - alpha) / beta;
        let scale = 1.0 / (alpha - beta);
        let v: Vec<f64> = (c + 1..m).map(|i| r[at(i, c)] * scale).collect();
        r[at(c, c)] = beta;
        for i in c + 1..m {
            r[at(i, c)] = 0.0;
        }
        // Apply H = I - tau·[1; v][1; v]ᵀ to the columns on the right.
        for j in c + 1..n {
            let dot = r[at(c, j)]
                + v.iter()
                    .zip(c + 1..m)
                    .map(|(vi, i)| vi * r[at(i, j)])
                    .sum::<f64>();
            let f = tau * dot;
            r[at(c, j)] -= f;
            for (vi, i) in v.iter().zip(c + 1..m) {
                r[at(i, j)] -= f * vi;
            }
        }
        reflections.push((v, tau));
    }
    let q_cols = match mode {
        QrMode::Complete => m,
        QrMode::Reduced => k,
        QrMode::R => 0,
    };
    // Q = H_1 ⋯ H_k applied to the first q_cols columns of the identity,
    // the reflections taken last to first.
    let mut q = vec![0.0; m * q_cols];
    for d in 0..q_cols.min(m) {
        q[d * q_cols + d] = 1.0;
    }
    for (c, (v, tau)) in reflections.iter().enumerate().rev() {
        if *tau == 0.0 {
            continue;
        }
        for j in 0..q_cols {
            let dot = q[c * q_cols + j]
                + v.iter()
                    .zip(c + 1..m)
                    .map(|(vi, i)| vi * q[i * q_cols + j])
                    .sum::<f64>();
            let f = tau * dot;
            q[c * q_cols + j] -= f;
            for (vi, i) in v.iter().zip(c + 1..m) {
                q[i * q_cols + j] -= f * vi;
            }
        }
    }
    let r_rows = if mode == QrMode::Complete { m } else { k };
    (q, r[..r_rows * n].to_vec())
}

/// `torch.linalg.qr` over the last two dims (batched over the rest).
pub fn qr(a: &Tensor, mode: QrMode) -> Result<(Tensor, Tensor)> {
    if a.ndim() < 2 {
        return Err(TensorError::runtime(
            "linalg_qr",
            "linalg.qr: The input tensor A must have at least 2 dimensions.",
        ));
    }
    if !a.dtype().is_float() {
        return Err(TensorError::not_implemented(format!(
            "linalg.qr: Expected a floating point or complex tensor as input. Got {}",
            crate::error::legacy_name(a.dtype())
        )));
    }
    let r = a.ndim();
    let (m, n) = (a.shape()[r - 2], a.shape()[r - 1]);
    let k = m.min(n);
    let batch = &a.shape()[..r - 2];
    let data: Vec<f64> = a.contiguous().to_vec();
    let (mut qs, mut rs) = (Vec::new(), Vec::new());
    for mat in data.chunks(m * n).take(batch.iter().product()) {
        let (q, r) = factor(mat, m, n, mode);
        qs.extend(q);
        rs.extend(r);
    }
    let with = |rows: usize, cols: usize| {
        let mut s = batch.to_vec();
        s.extend([rows, cols]);
        s
    };
    let q_shape = match mode {
        QrMode::Complete => with(m, m),
        QrMode::Reduced => with(m, k),
        QrMode::R => vec![0],
    };
    let r_shape = with(if mode == QrMode::Complete { m } else { k }, n);
    let make = |v: Vec<f64>, shape: &[usize]| {
        Tensor::from_vec(v, &[shape.iter().product()])
            .with_layout(Layout::contiguous(shape))
            .to_dtype(a.dtype())
    };
    Ok((make(qs, &q_shape), make(rs, &r_shape)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_with_lapacks_signs() {
        // PyTorch 2.15: linalg.qr([[1, 2], [3, 4], [5, 6]]).
        let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
        let (q, r) = qr(&a, QrMode::Reduced).unwrap();
        let (q, r) = (q.to_vec::<f64>(), r.to_vec::<f64>());
        let want_q = [-0.1690, 0.8971, -0.5071, 0.2760, -0.8452, -0.3450];
        let want_r = [-5.9161, -7.4374, 0.0, 0.8281];
        assert!(
            q.iter().zip(want_q).all(|(a, b)| (a - b).abs() < 1e-4),
            "{q:?}"
        );
        assert!(
            r.iter().zip(want_r).all(|(a, b)| (a - b).abs() < 1e-4),
            "{r:?}"
        );
        // Q·R gives A back.
        for i in 0..3 {
            for j in 0..2 {
                let v: f64 = (0..2).map(|t| q[i * 2 + t] * r[t * 2 + j]).sum();
                assert!((v - (i * 2 + j + 1) as f64).abs() < 1e-12);
            }
        }
    }
}
