//! Products of a few rows with a weight stored by rows, `x · wᵀ` for an
//! `m × k` `x` with `m` small and an `n × k` `w` (what `nn.Linear` does to a
//! small batch). A general gemm packs `w` on every call, which at these
//! shapes costs more than the arithmetic; here each output is a dot product
//! of two contiguous rows, `R` rows of `x` against `C` rows of `w` at a
//! time with the `R × C` partial sums in vector registers, so `w` is read
//! once, in place.

use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;

use crate::ops::lanes::Lanes;

/// Whether an `m × k` by `k × n` product is better done here than by the
/// gemm, which packs this layout of `w` slowly when rows are long
/// (measured: up to 32 rows always — 32 × 768 by 768 × 768 in 0.12 ms
/// instead of 0.25, 17 × 512 by 512 × 2048 in 0.23 instead of 0.53, at 64
/// rows the gemm is faster; up to 128 when rows reach 1024 — the mnist
/// Net's 64 × 9216 by 9216 × 128 in 0.9 ms instead of 4.7, 128 × 1024 by
/// 1024 × 4096 in 10.6 instead of 12.8; from 256 rows the gemm wins).
pub(crate) fn suits(m: usize, n: usize, k: usize) -> bool {
    n >= 16 && k >= 16 && (m <= 32 || (m <= 128 && k >= 1024))
}
/// Multiply-adds above which the columns are split between threads.
const PARALLEL_FMAS: usize = 1 << 18;
/// Columns per task: a multiple of the column block.
const TASK_COLUMNS: usize = 64;

/// A row-major operand: row `i` starts at `data[i * stride]`.
#[derive(Clone, Copy)]
pub(crate) struct Rows<'a, T> {
    pub data: &'a [T],
    pub stride: usize,
}

impl<T> Rows<'_, T> {
    fn row(&self, i: usize, k: usize) -> &[T] {
        &self.data[i * self.stride..i * self.stride + k]
    }
}

/// `dst (m × n, row-major) = x · wᵀ` for `m` rows of `x` and `n` rows of
/// `w`, each `k` long; with `accumulate`, `dst += x · wᵀ`.
pub(crate) fn times_rows<T: Lanes>(
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [T],
    x: Rows<T>,
    w: Rows<T>,
    accumulate: bool,
) {
    times_rows_on(Arch::new(), m, n, k, dst, x, w, accumulate);
}

/// `times_rows` with the kernels of `arch`.
#[allow(clippy::too_many_arguments)] // times_rows's and the target
fn times_rows_on<T: Lanes>(
    arch: Arch,
    m: usize,
    n: usize,
    k: usize,
    dst: &mut [T],
    x: Rows<T>,
    w: Rows<T>,
    accumulate: bool,
) {
    assert!(
        dst.len() == m * n
            && (m == 0 || (m - 1) * x.stride + k <= x.data.len())
            && (n == 0 || (n - 1) * w.stride + k <= w.data.len()),
        "skinny product operands out of bounds"
    );
    if m == 0 || n == 0 {
        return;
    }
    // Each task fills a block of whole columns, stored column-major
    // (`columns × m`), so tasks write disjoint slices; then the block is
    // placed into the row-major result.
    let mut columns = vec![T::zero(); n * m];
    let task = |(t, out): (usize, &mut [T])| {
        let first = t * TASK_COLUMNS;
        arch.dispatch(Block {
            x,
            w,
            k,
            m,
            first,
            count: out.len() / m,
            out,
        });
    };
    if m * n * k >= PARALLEL_FMAS {
        columns
            .par_chunks_mut(TASK_COLUMNS * m)
            .enumerate()
            .for_each(task);
    } else {
        columns
            .chunks_mut(TASK_COLUMNS * m)
            .enumerate()
            .for_each(task);
    }
    for (j, col) in columns.chunks(m).enumerate() {
        for (i, &v) in col.iter().enumerate() {
            let d = &mut dst[i * n + j];
            *d = if accumulate { *d + v } else { v };
        }
    }
}

/// Columns `first..first + count` of the product, column-major in `out`.
struct Block<'a, T> {
    x: Rows<'a, T>,
    w: Rows<'a, T>,
    k: usize,
    m: usize,
    first: usize,
    count: usize,
    out: &'a mut [T],
}

impl<T: Lanes> WithSimd for Block<'_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Block {
            x,
            w,
            k,
            m,
            first,
            count,
            out,
        } = self;
        let wide = S::REGISTER_COUNT >= 32;
        let mut j = 0;
        while j < count {
            let c = if count - j >= 4 { 4 } else { 1 };
            let mut i = 0;
            while i < m {
                let left = m - i;
                let r = if left >= 4 && wide {
                    4
                } else if left >= 2 {
                    2
                } else {
                    1
                };
                match (r, c) {
                    (4, 4) => tile::<S, T, 4, 4>(simd, x, w, k, i, first + j, j, m, out),
                    (2, 4) => tile::<S, T, 2, 4>(simd, x, w, k, i, first + j, j, m, out),
                    (1, 4) => tile::<S, T, 1, 4>(simd, x, w, k, i, first + j, j, m, out),
                    (4, _) => tile::<S, T, 4, 1>(simd, x, w, k, i, first + j, j, m, out),
                    (2, _) => tile::<S, T, 2, 1>(simd, x, w, k, i, first + j, j, m, out),
                    _ => tile::<S, T, 1, 1>(simd, x, w, k, i, first + j, j, m, out),
                }
                i += r;
            }
            j += c;
        }
    }
}

/// Rows `i..i + R` of `x` against rows `col..col + C` of `w`: the `R × C`
/// dot products, written at `out[(local + c) * m + i + r]`.
#[allow(clippy::too_many_arguments)] // the coordinates of one tile
#[inline(always)]
fn tile<S: Simd, T: Lanes, const R: usize, const C: usize>(
    simd: S,
    x: Rows<T>,
    w: Rows<T>,
    k: usize,
    i: usize,
    col: usize,
    local: usize,
    m: usize,
    out: &mut [T],
) {
    let xs: [&[T]; R] = std::array::from_fn(|r| x.row(i + r, k));
    let ws: [&[T]; C] = std::array::from_fn(|c| w.row(col + c, k));
    let xv: [&[T::V<S>]; R] = std::array::from_fn(|r| T::vectors::<S>(xs[r]));
    let wv: [&[T::V<S>]; C] = std::array::from_fn(|c| T::vectors::<S>(ws[c]));
    let mut acc = [[T::zeros(simd); C]; R];
    for p in 0..xv[0].len() {
        let a: [T::V<S>; R] = std::array::from_fn(|r| xv[r][p]);
        let b: [T::V<S>; C] = std::array::from_fn(|c| wv[c][p]);
        for r in 0..R {
            for c in 0..C {
                acc[r][c] = T::fused(simd, a[r], b[c], acc[r][c]);
            }
        }
    }
    let done = xv[0].len() * T::lanes::<S>();
    for r in 0..R {
        for c in 0..C {
            let tail = xs[r][done..]
                .iter()
                .zip(&ws[c][done..])
                .fold(T::zero(), |s, (&a, &b)| a.mul_add(b, s));
            out[(local + c) * m + i + r] = T::reduce_sum(simd, acc[r][c]) + tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::lanes::testing::{arches, assert_close, cast, values};

    #[allow(clippy::too_many_arguments)] // one product's shape and operands
    fn product<T: Lanes>(
        arch: Arch,
        m: usize,
        n: usize,
        k: usize,
        x: &[f64],
        stride: usize,
        w: &[f64],
    ) -> Vec<T> {
        let (x, w) = (cast::<T>(x), cast::<T>(w));
        let mut got = vec![T::nan(); m * n];
        let x = Rows { data: &x, stride };
        let w = Rows {
            data: &w,
            stride: k,
        };
        times_rows_on(arch, m, n, k, &mut got, x, w, false);
        // Adding onto a bias gives the same product plus the bias.
        let mut onto: Vec<T> = (0..m * n).map(|v| T::from(v % 7).expect("small")).collect();
        times_rows_on(arch, m, n, k, &mut onto, x, w, true);
        for (v, (&sum, &product)) in onto.iter().zip(&got).enumerate() {
            let bias = T::from(v % 7).expect("small");
            let tolerance = T::epsilon() * T::from(64).expect("small") * (product.abs() + bias);
            assert!(
                (sum - (product + bias)).abs() <= tolerance,
                "added onto a bias at {v}"
            );
        }
        got
    }

    #[test]
    fn products_match_the_definition_for_ragged_shapes_and_strides() {
        // Rows 1..=16 cover every tile, columns a partial block and several
        // tasks, k a vector tail; the last cases are parallel.
        for arch in arches() {
            for &(m, n, k) in &[
                (1, 1, 1),
                (3, 5, 7),
                (7, 70, 33),
                (16, 130, 17),
                (8, 300, 256),
                // Many rows of long rows (taken from the gemm up to 128).
                (77, 40, 1030),
            ] {
                // x rows padded to a stride of k + 3, as a view of a wider tensor.
                let stride = k + 3;
                let (x, w) = (values(m * stride, 3), values(n * k, 5));
                let mut want = vec![0.0; m * n];
                for i in 0..m {
                    for j in 0..n {
                        want[i * n + j] = (0..k).map(|p| x[i * stride + p] * w[j * k + p]).sum();
                    }
                }
                let what = format!("{m}x{n}x{k}");
                assert_close(
                    &product::<f64>(arch, m, n, k, &x, stride, &w),
                    &want,
                    1e-9,
                    &what,
                );
                assert_close(
                    &product::<f32>(arch, m, n, k, &x, stride, &w),
                    &want,
                    1e-3,
                    &what,
                );
            }
        }
    }
}
