//! Scaled dot-product attention on f32 without a mask tensor or dropout —
//! what transformer blocks call (`is_causal=True` included) — fused: per
//! (batch, head) one product for the scores, each row's softmax over the
//! keys it may see, one product with the values. The heads run in
//! parallel when there is enough work, each product on one thread (small
//! products split over threads spend more on the hand-off than they gain).
//! Other cases take the composed path in
//! [`super::nn::scaled_dot_product_attention`].

use rayon::prelude::*;

use super::fastmath;
use super::linalg::{Matrix, gemm_into};
use crate::dtype::DType;
use crate::tensor::Tensor;

/// Heads run in parallel from this many multiply-adds: below it, waking
/// the other threads costs more than the heads (measured: 4 heads of 16
/// queries, 32 dims, 15–45 µs in parallel against 6 alone).
const PARALLEL_HEADS: usize = 1 << 20;

/// `softmax(q @ kᵀ · scale [causal]) @ v` for f32 `q` [..., L, E], `k`
/// [..., S, E], `v` [..., S, Ev] with the same leading dims; `None` when
/// the inputs are not of that form.
pub(crate) fn fused(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scale: f64,
    causal: bool,
) -> Option<Tensor> {
    let r = q.ndim();
    let same_batch = k.ndim() == r
        && v.ndim() == r
        && q.shape()[..r - 2] == k.shape()[..r - 2]
        && q.shape()[..r - 2] == v.shape()[..r - 2];
    let f32s = [q, k, v].iter().all(|t| t.dtype() == DType::F32);
    if r < 2 || !same_batch || !f32s {
        return None;
    }
    let (l, e) = (q.shape()[r - 2], q.shape()[r - 1]);
    let (s, ev) = (k.shape()[r - 2], v.shape()[r - 1]);
    if k.shape()[r - 1] != e || v.shape()[r - 2] != s {
        return None;
    }
    let batch: usize = q.shape()[..r - 2].iter().product();
    let mut shape = q.shape()[..r - 1].to_vec();
    shape.push(ev);
    if batch * l * ev == 0 {
        return Some(Tensor::zeros(&shape, DType::F32));
    }
    let (q, k, v) = (q.contiguous(), k.contiguous(), v.contiguous());
    let scale = scale as f32;
    let mut out = vec![0f32; batch * l * ev];
    q.with_slice(|q: &[f32]| {
        k.with_slice(|k: &[f32]| {
            v.with_slice(|v: &[f32]| {
                let one = |(b, out): (usize, &mut [f32])| {
                    let (q, k, v) = (
                        &q[b * l * e..(b + 1) * l * e],
                        &k[b * s * e..(b + 1) * s * e],
                        &v[b * s * ev..(b + 1) * s * ev],
                    );
                    head(q, k, v, out, [l, s, e, ev], scale, causal);
                };
                if batch * l * s * (e + ev) >= PARALLEL_HEADS {
                    out.par_chunks_mut(l * ev).enumerate().for_each(one);
                } else {
                    out.chunks_mut(l * ev).enumerate().for_each(one);
                }
            })
        })
    });
    Some(Tensor::from_vec(out, &shape))
}

/// One (batch, head): `out` [L, Ev] from `q` [L, E], `k` [S, E], `v` [S, Ev].
fn head(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    out: &mut [f32],
    [l, s, e, ev]: [usize; 4],
    scale: f32,
    causal: bool,
) {
    let mut scores = vec![0f32; l * s];
    let rows = |data, stride| Matrix {
        data,
        row_stride: stride,
        col_stride: 1,
    };
    // kᵀ read in place: element (j, i) of kᵀ is k[i·E + j].
    let kt = Matrix {
        data: k,
        row_stride: 1,
        col_stride: e,
    };
    gemm_into(l, s, e, &mut scores, rows(q, e), kt, false, false);
    let mut probs = vec![0f32; s];
    for (i, row) in scores.chunks_mut(s).enumerate() {
        // Causal attention is aligned to the top left: query i sees keys
        // 0..=i.
        let seen = if causal { (i + 1).min(s) } else { s };
        for x in &mut row[..seen] {
            *x *= scale;
        }
        let max = row[..seen].iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
        fastmath::exp_shifted(&row[..seen], max, &mut probs[..seen]);
        let inv = 1.0 / probs[..seen].iter().sum::<f32>();
        for (x, p) in row[..seen].iter_mut().zip(&probs[..seen]) {
            *x = p * inv;
        }
        row[seen..].fill(0.0);
    }
    gemm_into(l, ev, s, out, rows(&scores, s), rows(v, ev), false, false);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The composed reference: scores, mask, softmax, product, in f64.
    fn reference(
        q: &[f32],
        k: &[f32],
        v: &[f32],
        [l, s, e, ev]: [usize; 4],
        causal: bool,
    ) -> Vec<f64> {
        let scale = 1.0 / (e as f64).sqrt();
        let mut out = vec![0.0; l * ev];
        for i in 0..l {
            let seen = if causal { (i + 1).min(s) } else { s };
            let scores: Vec<f64> = (0..seen)
                .map(|j| {
                    (0..e)
                        .map(|c| f64::from(q[i * e + c]) * f64::from(k[j * e + c]))
                        .sum::<f64>()
                        * scale
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
            let total: f64 = w.iter().sum();
            for (j, wj) in w.iter().enumerate() {
                for c in 0..ev {
                    out[i * ev + c] += wj / total * f64::from(v[j * ev + c]);
                }
            }
        }
        out
    }

    #[test]
    fn fused_attention_matches_the_composed_one() {
        let data = |n: usize, seed: usize| -> Vec<f32> {
            (0..n)
                .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f32 / 1001.5 - 1.0) * 2.0)
                .collect()
        };
        for (l, s, e, ev, causal) in [
            (16, 16, 32, 32, true),
            (5, 9, 8, 3, false),
            (9, 5, 4, 6, true),
            (1, 1, 1, 1, true),
        ] {
            let heads = 3;
            let (q, k, v) = (
                data(heads * l * e, 1),
                data(heads * s * e, 2),
                data(heads * s * ev, 3),
            );
            let t = |d: &Vec<f32>, rows, cols| Tensor::from_vec(d.clone(), &[1, heads, rows, cols]);
            let got = fused(
                &t(&q, l, e),
                &t(&k, s, e),
                &t(&v, s, ev),
                1.0 / (e as f64).sqrt(),
                causal,
            )
            .expect("fused form")
            .to_vec::<f64>();
            for h in 0..heads {
                let want = reference(
                    &q[h * l * e..][..l * e],
                    &k[h * s * e..][..s * e],
                    &v[h * s * ev..][..s * ev],
                    [l, s, e, ev],
                    causal,
                );
                for (g, w) in got[h * l * ev..][..l * ev].iter().zip(&want) {
                    assert!(
                        (g - w).abs() < 1e-5,
                        "{l}x{s}x{e}x{ev} causal={causal}: {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn other_forms_are_left_to_the_composed_path() {
        let f = |shape: &[usize], dtype| Tensor::zeros(shape, dtype);
        let q = f(&[2, 4, 8], DType::F32);
        assert!(
            fused(
                &q,
                &f(&[1, 4, 8], DType::F32),
                &f(&[2, 4, 8], DType::F32),
                1.0,
                false
            )
            .is_none()
        );
        assert!(fused(&f(&[2, 4, 8], DType::F64), &q, &q, 1.0, false).is_none());
    }
}
