//! The per-row kernels of layer and RMS norm over the trailing dims, on
//! float32/64 elements in place (no widened copy of the tensor), computed
//! in the element type as PyTorch's CPU kernels compute them. Sums run in
//! sixteen lanes, so the loops vectorise; each kernel is compiled for every
//! SIMD level.

/// Lanes each row's sums run in.
const LANES: usize = 16;

/// The float types the kernels run on.
pub(super) trait Float: crate::storage::Element + num_traits::Float {}
impl Float for f32 {}
impl Float for f64 {}

/// A row's statistics: its mean (zero for RMS norm) and `1/√(var + eps)`
/// (the mean square in place of the variance for RMS norm).
#[inline(always)]
fn stats<F: Float>(x: &[F], eps: F, rms: bool) -> (F, F) {
    let n = F::from_f64(x.len().max(1) as f64);
    let mean = if rms {
        F::zero()
    } else {
        sum_lanes(x, |v| v) / n
    };
    let spread = sum_lanes(x, |v| (v - mean) * (v - mean)) / n;
    (mean, F::one() / (spread + eps).sqrt())
}

/// `Σ f(x)` over the row, in lanes.
#[inline(always)]
fn sum_lanes<F: Float>(x: &[F], f: impl Fn(F) -> F) -> F {
    let mut acc = [F::zero(); LANES];
    let (whole, tail) = x.as_chunks::<LANES>();
    for c in whole {
        for j in 0..LANES {
            acc[j] = acc[j] + f(c[j]);
        }
    }
    let tail = tail.iter().fold(F::zero(), |s, &v| s + f(v));
    acc.iter().fold(F::zero(), |s, &a| s + a) + tail
}

/// `(Σ g·w, Σ g·w·x̂)` over a row, its gradient and the weight, in lanes
/// (`x̂ = (x - mean)·rstd`, summed as `rstd·(Σ g·w·x - mean·Σ g·w)`, as
/// PyTorch's kernel sums it).
#[inline(always)]
fn weighted_sums<F: Float>(x: &[F], g: &[F], w: &[F], (mean, rstd): (F, F)) -> (F, F) {
    let (mut a, mut b) = ([F::zero(); LANES], [F::zero(); LANES]);
    let (xs, xt) = x.as_chunks::<LANES>();
    let (gs, gt) = g[..x.len()].as_chunks::<LANES>();
    let (ws, wt) = w[..x.len()].as_chunks::<LANES>();
    for k in 0..xs.len() {
        let (x, g, w) = (&xs[k], &gs[k], &ws[k]);
        for j in 0..LANES {
            let gw = g[j] * w[j];
            a[j] = a[j] + gw;
            b[j] = b[j] + gw * x[j];
        }
    }
    let (mut ta, mut tb) = (F::zero(), F::zero());
    for ((&x, &g), &w) in xt.iter().zip(gt).zip(wt) {
        ta = ta + g * w;
        tb = tb + g * w * x;
    }
    let total = |v: [F; LANES]| v.iter().fold(F::zero(), |s, &a| s + a);
    let (a, b) = (total(a) + ta, total(b) + tb);
    (a, rstd * (b - mean * a))
}

/// Normalises rows of `x` into `out`: `(x - mean)·rstd·w + b` (`w` ones
/// and `b` zeros when absent, each a row long).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub(super) fn normalise<F: Float>(x: &[F], out: &mut [F], w: &[F], b: &[F], eps: F, rms: bool) {
    let row = w.len();
    for (x, out) in x.chunks_exact(row).zip(out.chunks_exact_mut(row)) {
        let (mean, rstd) = stats(x, eps, rms);
        for (((o, &v), &w), &b) in out.iter_mut().zip(x).zip(w).zip(b) {
            *o = (v - mean) * rstd * w + b;
        }
    }
}

/// Layer norm's backward over rows of `x` and their gradients `g`: the
/// input's gradient into `dx`, and `Σ g·x̂` and `Σ g` per feature added
/// into `dw` and `db` (`w` ones when the norm has no weight).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub(super) fn backward<F: Float>(
    x: &[F],
    g: &[F],
    dx: &mut [F],
    w: &[F],
    eps: F,
    (dw, db): (&mut [F], &mut [F]),
) {
    let row = w.len();
    let n = F::from_f64(row as f64);
    let rows = x.chunks_exact(row).zip(g.chunks_exact(row));
    for ((x, g), dx) in rows.zip(dx.chunks_exact_mut(row)) {
        let (mean, rstd) = stats(x, eps, false);
        // With ĝ = g·w: mean(ĝ) and mean(ĝ·x̂).
        let (a, b) = weighted_sums(x, g, w, (mean, rstd));
        let (a, b) = (a / n, b / n);
        let features = dw.iter_mut().zip(db.iter_mut()).zip(w);
        for ((d, (&x, &g)), ((dw, db), &w)) in dx.iter_mut().zip(x.iter().zip(g)).zip(features) {
            let xhat = (x - mean) * rstd;
            *dw = *dw + g * xhat;
            *db = *db + g;
            *d = rstd * (g * w - a - xhat * b);
        }
    }
}
