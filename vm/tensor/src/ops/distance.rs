//! p-norm distances between rows: `pdist` (every pair within one set) and
//! `cdist` (every row of one set against every row of another, batched).

use num_traits::Float;

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::broadcast_shapes;
use crate::storage::Element;
use crate::tensor::Tensor;

/// How `cdist` computes Euclidean distances: directly, or as
/// `‖a‖² + ‖b‖² - 2a·b` by one matrix product (faster, less exact).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeMode {
    /// The product when either set has more than 25 rows (PyTorch's default).
    MatmulIfNecessary,
    Matmul,
    Direct,
}

impl ComputeMode {
    pub fn parse(mode: &str) -> Result<ComputeMode> {
        match mode {
            "use_mm_for_euclid_dist_if_necessary" => Ok(ComputeMode::MatmulIfNecessary),
            "use_mm_for_euclid_dist" => Ok(ComputeMode::Matmul),
            "donot_use_mm_for_euclid_dist" => Ok(ComputeMode::Direct),
            other => Err(TensorError::value(
                "cdist",
                format!("{other} is not a valid value for compute_mode"),
            )),
        }
    }
}

/// The p-norm of the difference of two rows; p = 0 counts differing
/// elements, p = ∞ takes the largest difference.
fn distance<F: Float>(a: &[F], b: &[F], p: F) -> F {
    let diffs = a.iter().zip(b).map(|(&x, &y)| (x - y).abs());
    if p == F::zero() {
        diffs.fold(F::zero(), |acc, d| {
            acc + if d != F::zero() { F::one() } else { F::zero() }
        })
    } else if p == F::one() {
        diffs.fold(F::zero(), |acc, d| acc + d)
    } else if p == F::one() + F::one() {
        diffs.fold(F::zero(), |acc, d| acc + d * d).sqrt()
    } else if p == F::infinity() {
        diffs.fold(F::zero(), F::max)
    } else {
        diffs
            .fold(F::zero(), |acc, d| acc + d.powf(p))
            .powf(p.recip())
    }
}

/// `torch.pdist(input, p)`: the distances between the rows of an `[N, M]`
/// matrix, pair (i, j) for i < j in row-major order.
pub fn pdist(input: &Tensor, p: f64) -> Result<Tensor> {
    let fail = |m: String| Err(TensorError::runtime("pdist", m));
    if input.ndim() != 2 {
        return fail(format!(
            "pdist only supports 2D tensors, got: {}D",
            input.ndim()
        ));
    }
    if !input.dtype().is_float() {
        return fail("pdist only supports floating-point dtypes".into());
    }
    if p < 0.0 {
        return fail("pdist only supports non-negative p values".into());
    }
    let (n, m) = (input.shape()[0], input.shape()[1]);
    fn run<F: Float + Element>(input: &Tensor, n: usize, m: usize, p: f64) -> Vec<F> {
        let x: Vec<F> = input.contiguous().to_vec();
        let p = F::from(p).unwrap();
        let mut out = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                out.push(distance(&x[i * m..(i + 1) * m], &x[j * m..(j + 1) * m], p));
            }
        }
        out
    }
    let len = [n * n.saturating_sub(1) / 2];
    Ok(match input.dtype() {
        DType::F32 => Tensor::from_vec(run::<f32>(input, n, m, p), &len),
        _ => Tensor::from_vec(run::<f64>(input, n, m, p), &len),
    })
}

/// `torch.cdist(x1, x2, p, compute_mode)`: `[..., P, M]` against
/// `[..., R, M]` (batch dims broadcast) gives `[..., P, R]`.
pub fn cdist(x1: &Tensor, x2: &Tensor, p: f64, mode: ComputeMode) -> Result<Tensor> {
    let fail = |m: String| Err(TensorError::runtime("cdist", m));
    for (name, x) in [("X1", x1), ("X2", x2)] {
        if !x.dtype().is_float() {
            return fail(format!(
                "cdist only supports floating-point dtypes, {name} got: {}",
                legacy_name(x.dtype())
            ));
        }
        if x.ndim() < 2 {
            return fail(format!(
                "cdist only supports at least 2D tensors, {name} got: {}D",
                x.ndim()
            ));
        }
    }
    let (s1, s2) = (x1.shape(), x2.shape());
    let m = s1[s1.len() - 1];
    if m != s2[s2.len() - 1] {
        return fail(format!(
            "X1 and X2 must have the same number of columns. X1: {m} X2: {}",
            s2[s2.len() - 1]
        ));
    }
    if x1.dtype() != x2.dtype() {
        return fail(format!(
            "X1 and X2 must have the same dtype. X1: {} X2: {}",
            legacy_name(x1.dtype()),
            legacy_name(x2.dtype())
        ));
    }
    if p < 0.0 {
        return fail("cdist only supports non-negative p values".into());
    }
    let (rows1, rows2) = (s1[s1.len() - 2], s2[s2.len() - 2]);
    let (b1, b2) = (&s1[..s1.len() - 2], &s2[..s2.len() - 2]);
    let batch = broadcast_shapes(b1, b2).ok_or_else(|| TensorError::broadcast(b1, b2))?;
    let expand = |x: &Tensor, rows: usize| -> Result<Tensor> {
        let mut shape = batch.clone();
        shape.extend([rows, m]);
        Ok(x.broadcast_to(&shape)?.contiguous())
    };
    let (a, b) = (expand(x1, rows1)?, expand(x2, rows2)?);
    let use_mm = p == 2.0
        && match mode {
            ComputeMode::MatmulIfNecessary => rows1 > 25 || rows2 > 25,
            ComputeMode::Matmul => true,
            ComputeMode::Direct => false,
        };
    let count: usize = batch.iter().product();
    let geometry = Sets {
        count,
        rows1,
        rows2,
        m,
    };
    let mut shape = batch.clone();
    shape.extend([rows1, rows2]);
    Ok(match x1.dtype() {
        DType::F32 => Tensor::from_vec(geometry.run::<f32>(&a, &b, p, use_mm), &shape),
        _ => Tensor::from_vec(geometry.run::<f64>(&a, &b, p, use_mm), &shape),
    })
}

struct Sets {
    count: usize,
    rows1: usize,
    rows2: usize,
    m: usize,
}

impl Sets {
    fn run<F: Float + Element>(&self, a: &Tensor, b: &Tensor, p: f64, use_mm: bool) -> Vec<F> {
        let (a, b): (Vec<F>, Vec<F>) = (a.to_vec(), b.to_vec());
        let p = F::from(p).unwrap();
        let m = self.m;
        let squared = |row: &[F]| row.iter().fold(F::zero(), |acc, &x| acc + x * x);
        let mut out = Vec::with_capacity(self.count * self.rows1 * self.rows2);
        for k in 0..self.count {
            let a = &a[k * self.rows1 * m..(k + 1) * self.rows1 * m];
            let b = &b[k * self.rows2 * m..(k + 1) * self.rows2 * m];
            // Squared norms only for the product form.
            let norms2: Vec<F> = if use_mm {
                b.chunks_exact(m.max(1)).map(squared).collect()
            } else {
                Vec::new()
            };
            for i in 0..self.rows1 {
                let x = &a[i * m..(i + 1) * m];
                let norm1 = if use_mm { squared(x) } else { F::zero() };
                for j in 0..self.rows2 {
                    let y = &b[j * m..(j + 1) * m];
                    out.push(if use_mm {
                        let two = F::one() + F::one();
                        let dot = x
                            .iter()
                            .zip(y)
                            .fold(F::zero(), |acc, (&u, &v)| acc + (-two * u) * v);
                        let norm2 = norms2.get(j).copied().unwrap_or(F::zero());
                        (dot + norm1 + norm2).max(F::from(1e-30).unwrap()).sqrt()
                    } else {
                        distance(x, y, p)
                    });
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(data: &[f64], n: usize) -> Tensor {
        Tensor::from_vec(data.to_vec(), &[n, data.len() / n])
    }

    #[test]
    fn pdist_lists_each_pair_once_in_row_major_order() {
        let x = rows(&[0., 0., 3., 4., 6., 8.], 3);
        assert_eq!(pdist(&x, 2.0).unwrap().to_vec::<f64>(), [5., 10., 5.]);
        assert_eq!(pdist(&x, 1.0).unwrap().to_vec::<f64>(), [7., 14., 7.]);
        assert_eq!(pdist(&x, 0.0).unwrap().to_vec::<f64>(), [2., 2., 2.]);
        assert_eq!(
            pdist(&x, f64::INFINITY).unwrap().to_vec::<f64>(),
            [4., 8., 4.]
        );
    }

    #[test]
    fn cdist_by_product_agrees_with_the_direct_distances() {
        let a = rows(&[0., 0., 1., 2., -3., 0.5], 3);
        let b = rows(&[1., 1., 2., -2.], 2);
        let direct = cdist(&a, &b, 2.0, ComputeMode::Direct)
            .unwrap()
            .to_vec::<f64>();
        let mm = cdist(&a, &b, 2.0, ComputeMode::Matmul)
            .unwrap()
            .to_vec::<f64>();
        for (d, m) in direct.iter().zip(&mm) {
            assert!((d - m).abs() < 1e-12, "{direct:?} vs {mm:?}");
        }
        assert_eq!(direct[0], 2f64.sqrt());
    }

    #[test]
    fn cdist_broadcasts_batches_and_checks_columns() {
        let a = Tensor::from_vec(vec![0f32; 2 * 3 * 4], &[2, 3, 4]);
        let b = Tensor::from_vec(vec![1f32; 5 * 4], &[5, 4]);
        let d = cdist(&a, &b, 1.0, ComputeMode::MatmulIfNecessary).unwrap();
        assert_eq!(d.shape(), [2, 3, 5]);
        assert!(d.to_vec::<f32>().iter().all(|&v| v == 4.0));
        let c = Tensor::from_vec(vec![1f32; 5 * 3], &[5, 3]);
        assert!(cdist(&a, &c, 2.0, ComputeMode::Direct).is_err());
    }
}
