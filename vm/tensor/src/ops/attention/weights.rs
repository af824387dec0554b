//! A run of one head's query rows turned into attention weights: scores
//! by one product, each row scaled, masked and soft-maxed over the keys it
//! sees — what the forward writes its log-sum-exp from and the backward
//! recomputes from it.

use std::ops::Range;

use super::heads::{Heads, rows};
use super::{Flash, MaskView, Sizes};
use crate::ops::linalg::{Matrix, Real, gemm_into};
use crate::ops::reduce::ExpShifted;

/// Each query's log-sum-exp of its scaled scores: written by the forward,
/// read by the backward to recompute the weights without their sums.
pub(super) enum Lse<'a, T> {
    Write(&'a mut [T]),
    Read(&'a [T]),
}

/// Query rows a causal head takes at a time: short runs skip more keys,
/// long ones make larger products (16 measured slower than 32 on heads of
/// 64 queries).
const CAUSAL_ROWS: usize = 32;

/// The runs of query rows a head is taken in, each with the keys it reads:
/// the whole head at once, or (causal) runs that skip the keys none of
/// their rows sees.
pub(super) fn runs(z: &Sizes, a: &Flash) -> impl Iterator<Item = (Range<usize>, usize)> {
    let (l, s, causal, run) = (z.l, z.s, a.causal, longest_run(z, a));
    (0..l).step_by(run).map(move |first| {
        let rows = first..(first + run).min(l);
        let keys = if causal { rows.end.min(s) } else { s };
        (rows, keys)
    })
}

/// The most rows a run of [`runs`] holds.
pub(super) fn longest_run(z: &Sizes, a: &Flash) -> usize {
    if a.causal { CAUSAL_ROWS.min(z.l) } else { z.l }
}

/// Which rows of which head: query head `h` of batch `b` (key head `kh`),
/// rows `rows`, against the first `keys` keys.
pub(super) struct Block {
    pub b: usize,
    pub h: usize,
    pub kh: usize,
    pub rows: Range<usize>,
    pub keys: usize,
}

impl Block {
    /// The keys query row `i` sees: all of them, or (causal) up to itself.
    fn seen(&self, i: usize, a: &Flash) -> usize {
        if a.causal {
            (i + 1).min(self.keys)
        } else {
            self.keys
        }
    }
}

/// The block's weights into `p` [rows, keys] (`scores` is scratch): each
/// row's softmax over the keys it sees, zeros after them and for a row
/// that sees none (whose log-sum-exp is 0). Each row is scaled, masked and
/// shifted (by its max, or by the log-sum-exp read back), the keys it does
/// not see set to -inf, and then the whole block goes through one `exp` —
/// per-row calls on rows of a few dozen keys cost more than the exps.
#[allow(clippy::too_many_arguments)] // one block's operands and where it sits
pub(super) fn weights<T: Real + ExpShifted>(
    [p, scores]: [&mut [T]; 2],
    q: &Heads<T>,
    k: &Heads<T>,
    z: &Sizes,
    at: &Block,
    a: &Flash,
    mask: Option<&MaskView<T>>,
    lse: Lse<'_, T>,
) {
    let (m, n) = (at.rows.len(), at.keys);
    let (p, scores) = (&mut p[..m * n], &mut scores[..m * n]);
    gemm_into(
        m,
        n,
        z.e,
        scores,
        q.rows(at.b, at.h, at.rows.start),
        k.transposed(at.b, at.kh),
        false,
        false,
    );
    let scale = T::from(a.scale).expect("a scale");
    let mut shifts = vec![T::zero(); m];
    for (r, (x, shift)) in scores.chunks_mut(n).zip(&mut shifts).enumerate() {
        let i = at.rows.start + r;
        let (x, unseen) = x.split_at_mut(at.seen(i, a));
        scale_and_mask(x, scale, mask, (at.b, at.h, i));
        *shift = match &lse {
            Lse::Read(lse) => lse[r],
            // A row of -inf (or none) keeps its -inf: its sum is 0.
            Lse::Write(_) => Some(row_max(x))
                .filter(|v| v.is_finite())
                .unwrap_or(T::zero()),
        };
        x.iter_mut().for_each(|v| *v = *v - *shift);
        unseen.fill(T::neg_infinity());
    }
    T::exp_shifted(scores, T::zero(), p);
    let Lse::Write(lse) = lse else { return };
    for (r, ((p, shift), lse)) in p.chunks_mut(n).zip(shifts).zip(lse.iter_mut()).enumerate() {
        let p = &mut p[..at.seen(at.rows.start + r, a)];
        let sum = p.iter().fold(T::zero(), |s, &v| s + v);
        if sum == T::zero() {
            p.fill(T::zero());
            *lse = T::zero();
        } else {
            let inv = T::one() / sum;
            p.iter_mut().for_each(|v| *v = *v * inv);
            *lse = sum.ln() + shift;
        }
    }
}

/// The largest of a row (NaNs passed over, -inf for an empty row), in
/// lanes so it vectorises.
fn row_max<T: Real>(x: &[T]) -> T {
    const LANES: usize = 16;
    let mut acc = [T::neg_infinity(); LANES];
    let (whole, tail) = x.as_chunks::<LANES>();
    for c in whole {
        for j in 0..LANES {
            acc[j] = if c[j] > acc[j] { c[j] } else { acc[j] };
        }
    }
    let fold = |m: T, &v: &T| if v > m { v } else { m };
    let m = acc.iter().fold(T::neg_infinity(), fold);
    tail.iter().fold(m, fold)
}

/// The block's weights as a dense matrix (for products with them).
pub(super) fn as_rows<'a, T>(p: &'a [T], at: &Block) -> Matrix<'a, T> {
    rows(&p[..at.rows.len() * at.keys], at.keys)
}

/// A row of scores scaled, plus its row of the mask; compiled per SIMD
/// level, as the row's softmax is.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn scale_and_mask<T: Real>(
    row: &mut [T],
    scale: T,
    mask: Option<&MaskView<T>>,
    (b, h, i): (usize, usize, usize),
) {
    match mask {
        Some(m) => match m.row(b, h, i) {
            (values, 1) => {
                for (x, &v) in row.iter_mut().zip(values) {
                    *x = *x * scale + v;
                }
            }
            (values, stride) => {
                for (j, x) in row.iter_mut().enumerate() {
                    *x = *x * scale + values[j * stride];
                }
            }
        },
        None => row.iter_mut().for_each(|x| *x = *x * scale),
    }
}
