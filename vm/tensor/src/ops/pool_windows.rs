//! Max pooling of one plane in windows wholly inside it (no padding,
//! dilation or ceil overhang — what models ask for): the values alone, and
//! the values with the flat position each came from (what training saves
//! for the backward). Both compiled for each SIMD level; of equal values
//! the first in the window wins and a NaN wins and stays, as in PyTorch.

/// Windows wholly inside a 2-d plane `width` wide: `(stride, kernel)` down
/// and across, `outputs` per output row.
pub(super) struct Windows {
    pub width: usize,
    pub y: (usize, usize),
    pub x: (usize, usize),
    pub outputs: usize,
}

/// Max-pools one plane in such windows: 2×2 windows straight from their
/// two input rows; others, for each output row, the elementwise max of the
/// window's input rows first (whole rows, which vectorise), then the max of
/// each window along that row. Compiled for each SIMD level (the crate's
/// baseline is SSE2, without the blends a branchless max needs).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub(super) fn pool_inside<F: num_traits::Float>(w: &Windows, src: &[F], dst: &mut [F]) {
    let ((sy, ky), (sx, kx), width) = (w.y, w.x, w.width);
    if (sy, ky, sx, kx) == (2, 2, 2, 2) {
        // The common 2×2 pool straight from the two input rows (pairs
        // vectorise as shuffles), maxed in PyTorch's window order.
        for (oy, out) in dst.chunks_mut(w.outputs).enumerate() {
            let top = &src[2 * oy * width..(2 * oy + 1) * width];
            let bottom = &src[(2 * oy + 1) * width..(2 * oy + 2) * width];
            for ((m, a), b) in out
                .iter_mut()
                .zip(top.chunks_exact(2))
                .zip(bottom.chunks_exact(2))
            {
                *m = nan_max(nan_max(a[0], a[1]), nan_max(b[0], b[1]));
            }
        }
        return;
    }
    let mut rows = vec![F::neg_infinity(); width];
    for (oy, out) in dst.chunks_mut(w.outputs).enumerate() {
        let first = oy * sy;
        rows.copy_from_slice(&src[first * width..(first + 1) * width]);
        for r in first + 1..first + ky {
            for (m, &v) in rows.iter_mut().zip(&src[r * width..(r + 1) * width]) {
                *m = nan_max(*m, v);
            }
        }
        if (sx, kx) == (2, 2) {
            // Windows two wide at stride two (of another height or step down): pairs,
            // which vectorise as shuffles.
            for (m, pair) in out.iter_mut().zip(rows.chunks_exact(2)) {
                *m = nan_max(pair[0], pair[1]);
            }
        } else {
            for (ox, m) in out.iter_mut().enumerate() {
                let window = &rows[ox * sx..ox * sx + kx];
                *m = window.iter().fold(F::neg_infinity(), |m, &v| nan_max(m, v));
            }
        }
    }
}

/// [`pool_inside`] with each maximum's flat position in the plane. The
/// taps are visited in PyTorch's order (down, then across), so which of
/// equal values wins is PyTorch's; every comparison is a select, and 2×2
/// windows read straight from their two rows.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub(super) fn pool_inside_indexed<F: num_traits::Float>(
    w: &Windows,
    src: &[F],
    dst: &mut [F],
    idx: &mut [i64],
) {
    let ((sy, ky), (sx, kx), width) = (w.y, w.x, w.width);
    let rows = dst.chunks_mut(w.outputs).zip(idx.chunks_mut(w.outputs));
    if (sy, ky, sx, kx) == (2, 2, 2, 2) {
        for (oy, (out, at)) in rows.enumerate() {
            let top = 2 * oy * width;
            let (upper, lower) = src[top..top + 2 * width].split_at(width);
            let windows = upper.chunks_exact(2).zip(lower.chunks_exact(2));
            for (ox, ((m, i), (a, b))) in out.iter_mut().zip(at.iter_mut()).zip(windows).enumerate()
            {
                let left = (top + 2 * ox) as i64;
                let best = (a[0], left);
                let best = take(best, a[1], left + 1);
                let best = take(best, b[0], left + width as i64);
                let best = take(best, b[1], left + width as i64 + 1);
                (*m, *i) = best;
            }
        }
        return;
    }
    for (oy, (out, at)) in rows.enumerate() {
        for (ox, (m, i)) in out.iter_mut().zip(at.iter_mut()).enumerate() {
            let corner = oy * sy * width + ox * sx;
            let mut best = (src[corner], corner as i64);
            for dy in 0..ky {
                let row = corner + dy * width;
                for (dx, &v) in src[row..row + kx].iter().enumerate() {
                    best = take(best, v, (row + dx) as i64);
                }
            }
            (*m, *i) = best;
        }
    }
}

/// The larger of `m` and `v`, NaN if either is (a select, no branch).
#[inline(always)]
pub(super) fn nan_max<F: num_traits::Float>(m: F, v: F) -> F {
    if v > m || v.is_nan() { v } else { m }
}

/// `best` or the candidate `(v, at)`: a larger value, or a NaN where the
/// best so far is not one (a select, no branch).
#[inline(always)]
fn take<F: num_traits::Float>(best: (F, i64), v: F, at: i64) -> (F, i64) {
    if v > best.0 || (v.is_nan() && !best.0.is_nan()) {
        (v, at)
    } else {
        best
    }
}
