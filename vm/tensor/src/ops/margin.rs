//! Multi-class margin losses (`multi_margin_loss`, `multilabel_margin_loss`):
//! per sample, hinge terms between the target classes' scores and the
//! others', averaged over the classes.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

fn fail<T>(op: &'static str, message: impl Into<String>) -> Result<T> {
    Err(TensorError::runtime(op, message))
}

/// `(rows, classes)` of a 1-d (one sample) or 2-d input.
fn frames(op: &'static str, input: &Tensor) -> Result<(usize, usize)> {
    match input.shape() {
        [c] if *c > 0 => Ok((1, *c)),
        [n, c] if *c > 0 => Ok((*n, *c)),
        s => fail(
            op,
            format!(
                "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {s:?}"
            ),
        ),
    }
}

/// One loss per sample: shaped `[n]`, or `[]` for a 1-d input.
fn per_sample(input: &Tensor, losses: Vec<f64>) -> Tensor {
    let shape: Vec<usize> = if input.ndim() == 2 {
        vec![losses.len()]
    } else {
        vec![]
    };
    Tensor::from_vec(losses, &shape).to_dtype(input.dtype())
}

/// `Σ_{j≠y} max(0, margin - x[y] + x[j])^p · weight[y] / C` per sample.
pub fn multi_margin(
    input: &Tensor,
    target: &Tensor,
    p: i64,
    margin: f64,
    weight: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "multi_margin_loss";
    if p != 1 && p != 2 {
        return fail(op, "only p == 1 and p == 2 supported");
    }
    let (n, c) = frames(op, input)?;
    let targets: Vec<i64> = target.contiguous().to_dtype(DType::I64).to_vec();
    if targets.len() != n || target.ndim() > 1 {
        return fail(
            op,
            format!(
                "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). Expected target size [{n}], but got {:?}. Input has shape {:?}.",
                target.shape(),
                input.shape()
            ),
        );
    }
    let w: Option<Vec<f64>> = match weight {
        Some(w) if w.numel() != c => {
            return fail(
                op,
                format!(
                    "inconsistent weight size, expected {c} but got {:?}",
                    w.shape()
                ),
            );
        }
        w => w.map(|w| w.contiguous().to_vec()),
    };
    let x: Vec<f64> = input.contiguous().to_vec();
    let mut losses = Vec::with_capacity(n);
    for (row, &y) in x.chunks(c).zip(&targets) {
        if !(0..c as i64).contains(&y) {
            return fail(op, "target out of range");
        }
        let y = y as usize;
        let mut sum = 0.0;
        for (d, &v) in row.iter().enumerate() {
            let z = margin - row[y] + v;
            if d != y && z > 0.0 {
                let h = if p == 1 { z } else { z * z };
                sum += h * w.as_ref().map_or(1.0, |w| w[y]);
            }
        }
        losses.push(sum / c as f64);
    }
    Ok(per_sample(input, losses))
}

/// `Σ_{j ∈ targets} Σ_{i ∉ targets} max(0, 1 - (x[j] - x[i])) / C` per
/// sample; each target row lists class indices up to the first -1.
pub fn multilabel_margin(input: &Tensor, target: &Tensor) -> Result<Tensor> {
    let op = "multilabel_margin_loss";
    let (n, c) = frames(op, input)?;
    if target.shape() != input.shape() {
        return fail(
            op,
            format!(
                "inconsistent target size: {:?} for input of size: {:?}",
                target.shape(),
                input.shape()
            ),
        );
    }
    let x: Vec<f64> = input.contiguous().to_vec();
    let t: Vec<i64> = target.contiguous().to_dtype(DType::I64).to_vec();
    let mut losses = Vec::with_capacity(n);
    for (row, labels) in x.chunks(c).zip(t.chunks(c)) {
        let labels: Vec<usize> = labels
            .iter()
            .take_while(|&&l| l >= 0)
            .map(|&l| usize::try_from(l).ok().filter(|&l| l < c))
            .collect::<Option<_>>()
            .map_or_else(|| fail(op, "target index is out of bounds"), Ok)?;
        let mut is_target = vec![false; c];
        labels.iter().for_each(|&l| is_target[l] = true);
        let mut sum = 0.0;
        for &j in &labels {
            for (i, &v) in row.iter().enumerate() {
                let z = 1.0 - row[j] + v;
                if !is_target[i] && z > 0.0 {
                    sum += z;
                }
            }
        }
        losses.push(sum / c as f64);
    }
    Ok(per_sample(input, losses))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hinge_terms_average_over_classes() {
        let x = Tensor::from_vec(vec![0.1f64, 0.2, 0.4, 0.8], &[1, 4]);
        // Target 3: max(0, 1 - 0.8 + x_j) for j = 0, 1, 2 → 0.3 + 0.4 + 0.6.
        let y = Tensor::from_vec(vec![3i64], &[1]);
        let l = multi_margin(&x, &y, 1, 1.0, None).unwrap().to_vec::<f64>()[0];
        assert!((l - 1.3 / 4.0).abs() < 1e-12);
        // Targets {3, 0}: PyTorch's documented example gives 0.85.
        let t = Tensor::from_vec(vec![3i64, 0, -1, 1], &[1, 4]);
        let l = multilabel_margin(&x, &t).unwrap().to_vec::<f64>()[0];
        assert!((l - 0.85).abs() < 1e-12);
    }
}
