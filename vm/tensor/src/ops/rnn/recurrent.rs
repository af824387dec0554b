//! The per-step product `h · Wᵀ` of a recurrent layer. One weight matrix
//! meets a small batch of hidden states at every time step, so it is packed
//! once per layer into column panels that a register-blocked kernel streams
//! through; a general gemm re-packs the whole matrix at every step, which
//! costs more than the product itself at these sizes.

use pulp::{Arch, Simd, WithSimd};
use rayon::prelude::*;

use crate::ops::lanes::Lanes;

/// Multiply-adds per step above which the panels are split between threads.
const PARALLEL_FMAS: usize = 1 << 19;

/// The shape of the kernel on this machine's widest SIMD target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tile {
    /// Elements per vector.
    lanes: usize,
    /// Rows of `h` per block: as many as keep `rows × 2` sums in registers.
    rows: usize,
}

struct TileOf<T>(std::marker::PhantomData<T>);

impl<T: Lanes> WithSimd for TileOf<T> {
    type Output = Tile;
    fn with_simd<S: Simd>(self, _: S) -> Tile {
        Tile {
            lanes: T::lanes::<S>(),
            rows: if S::REGISTER_COUNT >= 32 { 8 } else { 4 },
        }
    }
}

/// A `n × k` matrix `w` laid out for `h · wᵀ`: panel `q` holds columns
/// `q*width..(q+1)*width` of `wᵀ` (two vectors wide), row after row (`k`
/// rows), zero-padded past `n`.
pub(super) struct Packed<T> {
    data: Vec<T>,
    n: usize,
    k: usize,
    arch: Arch,
    tile: Tile,
}

impl<T: Lanes> Packed<T> {
    /// Packs a row-major `n × k` matrix for this machine's widest SIMD.
    pub fn new(w: &[T], n: usize, k: usize) -> Packed<T> {
        Packed::for_arch(w, n, k, Arch::new())
    }

    /// Packs a row-major `n × k` matrix for the kernels of `arch`.
    fn for_arch(w: &[T], n: usize, k: usize, arch: Arch) -> Packed<T> {
        assert_eq!(w.len(), n * k, "a packed matrix is n × k");
        let tile = arch.dispatch(TileOf::<T>(std::marker::PhantomData));
        let width = 2 * tile.lanes;
        let mut data = vec![T::zero(); n.div_ceil(width) * k * width];
        if k > 0 {
            for (q, panel) in data.chunks_mut(k * width).enumerate() {
                for (j, col) in (q * width..n.min((q + 1) * width)).enumerate() {
                    for (p, &v) in w[col * k..(col + 1) * k].iter().enumerate() {
                        panel[p * width + j] = v;
                    }
                }
            }
        }
        Packed {
            data,
            n,
            k,
            arch,
            tile,
        }
    }

    fn width(&self) -> usize {
        2 * self.tile.lanes
    }

    /// `dst = h · wᵀ` for a row-major `rows × k` `h` and `rows × n` `dst`.
    pub fn product(&self, h: &[T], rows: usize, dst: &mut [T]) {
        let (n, k, width) = (self.n, self.k, self.width());
        assert!(
            h.len() == rows * k && dst.len() == rows * n,
            "product operands do not match the packed matrix"
        );
        if rows == 0 || n == 0 {
            return;
        }
        let h = RowBlocks::new(h, rows, k, self.tile.rows);
        let panels = n.div_ceil(width);
        if rows * n * k < PARALLEL_FMAS {
            for q in 0..panels {
                self.panel_into(q, &h, dst, n, q * width);
            }
            return;
        }
        // Each panel writes its own columns of every row: each task fills a
        // private row-major block, then the columns go into place.
        let mut blocks = vec![T::zero(); panels * rows * width];
        blocks
            .par_chunks_mut(rows * width)
            .enumerate()
            .for_each(|(q, block)| self.panel_into(q, &h, block, width, 0));
        for (q, block) in blocks.chunks(rows * width).enumerate() {
            let first = q * width;
            let cols = width.min(n - first);
            for r in 0..rows {
                dst[r * n + first..r * n + first + cols]
                    .copy_from_slice(&block[r * width..r * width + cols]);
            }
        }
    }

    /// Panel `q`'s columns of `h · wᵀ`, written at column `first` of `out`
    /// (row stride `stride`).
    fn panel_into(&self, q: usize, h: &RowBlocks<T>, out: &mut [T], stride: usize, first: usize) {
        let (k, width) = (self.k, self.width());
        self.arch.dispatch(Panel {
            w: &self.data[q * k * width..(q + 1) * k * width],
            h,
            out: &mut out[first..],
            stride,
            cols: width.min(self.n - q * width),
        });
    }
}

/// The rows of `h` in blocks of the tile's rows, then halves of it for the
/// rest, each block stored sum-index-major (`k × R`) so the kernel reads
/// its `R` factors of one step of the sums side by side.
struct RowBlocks<T> {
    data: Vec<T>,
    /// Each block's first row and size; its data starts at `row * k`.
    blocks: Vec<(usize, usize)>,
    k: usize,
}

impl<T: Lanes> RowBlocks<T> {
    fn new(h: &[T], rows: usize, k: usize, most: usize) -> RowBlocks<T> {
        let mut data = Vec::with_capacity(rows * k);
        let mut blocks = Vec::new();
        let mut row = 0;
        while row < rows {
            let mut size = most;
            while size > rows - row {
                size /= 2;
            }
            for p in 0..k {
                data.extend((row..row + size).map(|r| h[r * k + p]));
            }
            blocks.push((row, size));
            row += size;
        }
        RowBlocks { data, blocks, k }
    }
}

/// One panel (`k` rows of two vectors) against every row block: `cols`
/// columns of `out` (row stride `stride`) for each row.
struct Panel<'a, T> {
    w: &'a [T],
    h: &'a RowBlocks<T>,
    out: &'a mut [T],
    stride: usize,
    cols: usize,
}

impl<T: Lanes> WithSimd for Panel<'_, T> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let w = T::vectors::<S>(self.w);
        let h = self.h;
        for &(row, size) in &h.blocks {
            let x = &h.data[row * h.k..(row + size) * h.k];
            let dst = &mut self.out[row * self.stride..];
            let (stride, cols) = (self.stride, self.cols);
            match size {
                8 => rows_block::<S, T, 8>(simd, w, x, dst, stride, cols),
                4 => rows_block::<S, T, 4>(simd, w, x, dst, stride, cols),
                2 => rows_block::<S, T, 2>(simd, w, x, dst, stride, cols),
                _ => rows_block::<S, T, 1>(simd, w, x, dst, stride, cols),
            }
        }
    }
}

/// `R` rows (`x`, `k × R`) against one panel (`w`, `k` pairs of vectors),
/// the `R × 2` vector sums held in registers; sums run over `k` in order.
#[inline(always)]
fn rows_block<S: Simd, T: Lanes, const R: usize>(
    simd: S,
    w: &[T::V<S>],
    x: &[T],
    dst: &mut [T],
    stride: usize,
    cols: usize,
) {
    let mut acc = [[T::zeros(simd); 2]; R];
    for (pair, xs) in w.chunks_exact(2).zip(x.chunks_exact(R)) {
        let xs: &[T; R] = xs.try_into().expect("chunks are R wide");
        let (w0, w1) = (pair[0], pair[1]);
        for (sums, &x) in acc.iter_mut().zip(xs) {
            let x = T::splat(simd, x);
            sums[0] = T::fused(simd, x, w0, sums[0]);
            sums[1] = T::fused(simd, x, w1, sums[1]);
        }
    }
    let lanes = T::lanes::<S>();
    for (r, sums) in acc.iter().enumerate() {
        let row = &mut dst[r * stride..r * stride + cols];
        let (low, high) = row.split_at_mut(cols.min(lanes));
        T::store(simd, low, sums[0]);
        if !high.is_empty() {
            T::store(simd, high, sums[1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::lanes::testing::{arches, assert_close, cast, values};

    /// `h · wᵀ` by the definition, in f64.
    fn naive(w: &[f64], n: usize, k: usize, h: &[f64], rows: usize) -> Vec<f64> {
        let mut out = vec![0.0; rows * n];
        for r in 0..rows {
            for j in 0..n {
                out[r * n + j] = (0..k).map(|p| h[r * k + p] * w[j * k + p]).sum();
            }
        }
        out
    }

    fn product<T: Lanes>(
        arch: Arch,
        w: &[f64],
        n: usize,
        k: usize,
        h: &[f64],
        rows: usize,
    ) -> Vec<T> {
        let mut got = vec![T::nan(); rows * n];
        Packed::for_arch(&cast::<T>(w), n, k, arch).product(&cast::<T>(h), rows, &mut got);
        got
    }

    #[test]
    fn packed_products_match_the_definition_for_ragged_shapes() {
        // Rows cover every block size (8, 4, 2, 1) and columns a partial
        // panel; the largest case takes the parallel path.
        for arch in arches() {
            for &(rows, n, k) in &[
                (1, 1, 1),
                (3, 5, 7),
                (8, 32, 16),
                (15, 70, 33),
                (8, 1024, 256),
            ] {
                let (w, h) = (values(n * k, 7), values(rows * k, 11));
                let want = naive(&w, n, k, &h, rows);
                assert_close(
                    &product::<f64>(arch, &w, n, k, &h, rows),
                    &want,
                    1e-9,
                    "f64",
                );
                assert_close(
                    &product::<f32>(arch, &w, n, k, &h, rows),
                    &want,
                    1e-4,
                    "f32",
                );
            }
        }
    }

    #[test]
    fn an_empty_inner_dimension_gives_zeros() {
        let mut got = vec![1.0f32; 6];
        Packed::new(&[], 3, 0).product(&[], 2, &mut got);
        assert_eq!(got, vec![0.0; 6]);
    }
}
