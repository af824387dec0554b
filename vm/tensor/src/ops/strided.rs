//! Pairwise maps over two views of one shape with any strides (broadcast
//! operands, transposes, slices), row by row: dims are merged where both
//! operands step evenly, each innermost run is a slice loop — stride 1 or 0
//! on either side vectorises — and rows go to threads for large outputs.
//! (Walking both views element by element costs ~70× PyTorch's time for a
//! broadcast bias add.)

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::layout::Layout;
use crate::storage::Element;

use super::PARALLEL_MIN;

/// Elements per parallel task, in whole rows.
const TASK: usize = 1 << 14;

/// `(size, stride in a, stride in b)` per dim, size-1 dims dropped and
/// neighbours merged where both operands step evenly across them.
fn merged_dims(a: &Layout, b: &Layout) -> Vec<(usize, usize, usize)> {
    let mut dims: Vec<(usize, usize, usize)> = Vec::with_capacity(a.shape.len());
    for ((&size, &sa), &sb) in a.shape.iter().zip(&a.strides).zip(&b.strides) {
        if size == 1 {
            continue;
        }
        match dims.last_mut() {
            Some(last) if last.1 == sa * size && last.2 == sb * size => {
                *last = (last.0 * size, sa, sb);
            }
            _ => dims.push((size, sa, sb)),
        }
    }
    dims
}

/// The storage offsets where row `r` of `outer` (merged dims, innermost
/// last) starts in each operand.
fn row_start(
    outer: &[(usize, usize, usize)],
    start: (usize, usize),
    mut r: usize,
) -> (usize, usize) {
    let (mut oa, mut ob) = start;
    for &(size, da, db) in outer.iter().rev() {
        let i = r % size;
        r /= size;
        oa += i * da;
        ob += i * db;
    }
    (oa, ob)
}

/// A new vector of `n` elements in rows of `len`, each written by
/// `fill(row, col, dst)` — the row's elements from column `col`, as many as
/// `dst` holds, every one of which it must write. Short rows are grouped
/// into tasks of about `TASK` elements, long ones cut into pieces of
/// `TASK` (a single long row, as of a 1-d slice, still uses every thread).
fn build_rows_strided<U: Element>(
    n: usize,
    len: usize,
    fill: impl Fn(usize, usize, &mut [MaybeUninit<U>]) + Sync + Send,
) -> Vec<U> {
    crate::alloc::ensure::<U>(n);
    let mut out: Vec<U> = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let dst = &mut out.spare_capacity_mut()[..n];
    let parallel = n >= PARALLEL_MIN;
    if len > TASK {
        let row = |(r, row): (usize, &mut [MaybeUninit<U>])| {
            let piece = |(p, dst): (usize, &mut [MaybeUninit<U>])| fill(r, p * TASK, dst);
            if parallel {
                row.par_chunks_mut(TASK).enumerate().for_each(piece);
            } else {
                row.chunks_mut(TASK).enumerate().for_each(piece);
            }
        };
        if parallel {
            dst.par_chunks_mut(len).enumerate().for_each(row);
        } else {
            dst.chunks_mut(len).enumerate().for_each(row);
        }
    } else {
        let rows_per_task = (TASK / len).max(1);
        let task = |(t, chunk): (usize, &mut [MaybeUninit<U>])| {
            for (i, row) in chunk.chunks_mut(len).enumerate() {
                fill(t * rows_per_task + i, 0, row);
            }
        };
        if parallel {
            dst.par_chunks_mut(rows_per_task * len)
                .enumerate()
                .for_each(task);
        } else {
            dst.chunks_mut(rows_per_task * len)
                .enumerate()
                .for_each(task);
        }
    }
    // SAFETY: the tasks' chunks cover `out[..n]` in whole rows of `len` or
    // pieces of them, and both callers' `fill` write every slot they are
    // given (each arm zips `dst` with a source run at least as long, or
    // walks all of `dst`).
    unsafe { out.set_len(n) };
    out
}

/// `f(a[i], b[i])` for every index of the common shape, in row-major order.
/// `xa`/`xb` are the storages the layouts index.
pub(crate) fn zip_strided<T: Element, U: Element>(
    a: &Layout,
    xa: &[T],
    b: &Layout,
    xb: &[T],
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Vec<U> {
    assert_eq!(a.shape, b.shape, "zip_strided: operands of one shape");
    let n: usize = a.shape.iter().product();
    let dims = merged_dims(a, b);
    let (len, sa, sb) = dims.last().copied().unwrap_or((1, 0, 0));
    let outer = &dims[..dims.len().saturating_sub(1)];
    build_rows_strided(n, len, |row, col, dst| {
        let (oa, ob) = row_start(outer, (a.offset, b.offset), row);
        let (oa, ob, k) = (oa + col * sa, ob + col * sb, dst.len());
        match (sa, sb) {
            (1, 1) => {
                let pairs = xa[oa..oa + k].iter().zip(&xb[ob..ob + k]);
                for (slot, (&x, &y)) in dst.iter_mut().zip(pairs) {
                    slot.write(f(x, y));
                }
            }
            (1, 0) => {
                let y = xb[ob];
                for (slot, &x) in dst.iter_mut().zip(&xa[oa..oa + k]) {
                    slot.write(f(x, y));
                }
            }
            (0, 1) => {
                let x = xa[oa];
                for (slot, &y) in dst.iter_mut().zip(&xb[ob..ob + k]) {
                    slot.write(f(x, y));
                }
            }
            _ => {
                for (j, slot) in dst.iter_mut().enumerate() {
                    slot.write(f(xa[oa + j * sa], xb[ob + j * sb]));
                }
            }
        }
    })
}

/// `f(x[i])` for every index of a view of any strides, in row-major order.
pub(crate) fn map_strided<T: Element, U: Element>(
    layout: &Layout,
    xs: &[T],
    f: impl Fn(T) -> U + Sync + Send,
) -> Vec<U> {
    let dims = merged_dims(layout, layout);
    if let [outer @ .., (rows, 1, _), (cols, step, _)] = dims.as_slice()
        && *step != 1
        && rows * cols >= BAND * TILE
    {
        return map_transposed(layout.offset, outer, *rows, *cols, *step, xs, f);
    }
    let n: usize = layout.shape.iter().product();
    let (len, step, _) = dims.last().copied().unwrap_or((1, 0, 0));
    let outer = &dims[..dims.len().saturating_sub(1)];
    build_rows_strided(n, len, |row, col, dst| {
        let o = row_start(outer, (layout.offset, 0), row).0 + col * step;
        let k = dst.len();
        match step {
            1 => {
                for (slot, &x) in dst.iter_mut().zip(&xs[o..o + k]) {
                    slot.write(f(x));
                }
            }
            0 => dst.iter_mut().for_each(|slot| {
                slot.write(f(xs[o]));
            }),
            _ => {
                // Runs of `step` (the last one shorter): a simpler loop
                // than `step_by`, whose remaining-count upkeep cost half
                // the time of a stride-2 copy.
                let run = &xs[o..=o + (k - 1) * step];
                for (slot, c) in dst.iter_mut().zip(run.chunks(step)) {
                    slot.write(f(c[0]));
                }
            }
        }
    })
}

/// Result rows a transpose is copied in at a time (one task's band).
const BAND: usize = 64;
/// Result columns at a time: source lines read side by side, few enough
/// to share one cache set (a row stride of a power of two maps them all to
/// one).
const TILE: usize = 8;

/// [`map_strided`] of a (batched) transpose — the last dim strided, the one
/// before it dense — in tiles of `BAND` result rows by `TILE` columns: the
/// source is read along its rows, `TILE` lines at a time, each line used
/// for `BAND` elements before it leaves the cache (walking the result in
/// order reads one element per line).
fn map_transposed<T: Element, U: Element>(
    offset: usize,
    outer: &[(usize, usize, usize)],
    rows: usize,
    cols: usize,
    step: usize,
    xs: &[T],
    f: impl Fn(T) -> U + Sync + Send,
) -> Vec<U> {
    let matrix = rows * cols;
    let batches: usize = outer.iter().map(|d| d.0).product();
    crate::alloc::ensure::<U>(batches * matrix);
    let mut out = vec![U::default(); batches * matrix];
    // The storage offset of matrix `b`.
    let start = |mut b: usize| {
        let mut o = offset;
        for &(size, stride, _) in outer.iter().rev() {
            o += (b % size) * stride;
            b /= size;
        }
        o
    };
    for (b, m) in out.chunks_mut(matrix).enumerate() {
        let base = start(b);
        // One band: up to BAND result rows, filled TILE columns at a time.
        let band = |(i, dst): (usize, &mut [U])| {
            for c0 in (0..cols).step_by(TILE) {
                for (r, line) in dst.chunks_exact_mut(cols).enumerate() {
                    let from = base + i * BAND + r;
                    for (c, v) in line.iter_mut().enumerate().skip(c0).take(TILE) {
                        *v = f(xs[from + c * step]);
                    }
                }
            }
        };
        if matrix >= PARALLEL_MIN {
            m.par_chunks_mut(BAND * cols).enumerate().for_each(band);
        } else {
            m.chunks_mut(BAND * cols).enumerate().for_each(band);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: both views walked element by element.
    fn naive(a: &Layout, xa: &[f32], b: &Layout, xb: &[f32]) -> Vec<f32> {
        a.offsets()
            .zip(b.offsets())
            .map(|(i, j)| xa[i] * 10.0 + xb[j])
            .collect()
    }

    fn data(n: usize) -> Vec<f32> {
        (0..n).map(|i| i as f32).collect()
    }

    #[test]
    fn transposes_copied_in_tiles_match_the_element_walk() {
        // A matrix (ragged tiles), a batch of them inside a wider storage,
        // and one large enough to split between threads.
        let cases = [
            (Layout::contiguous(&[45, 70]).transpose(0, 1), 45 * 70),
            (
                Layout::contiguous(&[4, 40, 33])
                    .transpose(1, 2)
                    .slice(0, 1, 3, 1),
                4 * 40 * 33,
            ),
            (Layout::contiguous(&[300, 200]).transpose(0, 1), 300 * 200),
        ];
        for (layout, n) in cases {
            let xs = data(n);
            let want: Vec<f64> = layout.offsets().map(|i| xs[i] as f64 * 2.0).collect();
            assert_eq!(
                map_strided(&layout, &xs, |x| x as f64 * 2.0),
                want,
                "{layout:?}"
            );
        }
    }

    #[test]
    fn broadcast_transposed_and_sliced_views_match_the_element_walk() {
        let cases: Vec<(Layout, usize, Layout, usize)> = vec![
            // bias over rows
            (
                Layout::contiguous(&[16, 384]),
                16 * 384,
                Layout::contiguous(&[384]).broadcast_to(&[16, 384]),
                384,
            ),
            // a column against rows, and a scalar
            (
                Layout::contiguous(&[5, 1]).broadcast_to(&[5, 7]),
                5,
                Layout::contiguous(&[7]).broadcast_to(&[5, 7]),
                7,
            ),
            (
                Layout::contiguous(&[3, 4]),
                12,
                Layout::contiguous(&[1]).broadcast_to(&[3, 4]),
                1,
            ),
            // a transpose against a dense operand
            (
                Layout::contiguous(&[6, 4]).transpose(0, 1),
                24,
                Layout::contiguous(&[4, 6]),
                24,
            ),
            // NCHW plus a per-channel bias [C, 1, 1]
            (
                Layout::contiguous(&[2, 3, 4, 5]),
                120,
                Layout::contiguous(&[3, 1, 1]).broadcast_to(&[2, 3, 4, 5]),
                3,
            ),
            // a strided slice
            (
                Layout::contiguous(&[8, 6]).slice(0, 1, 3, 2),
                48,
                Layout::contiguous(&[3, 6]),
                18,
            ),
            // large enough to run in parallel, with a broadcast middle dim
            (
                Layout::contiguous(&[64, 1, 1024]).broadcast_to(&[64, 3, 1024]),
                64 * 1024,
                Layout::contiguous(&[3, 1024]).broadcast_to(&[64, 3, 1024]),
                3 * 1024,
            ),
        ];
        for (a, na, b, nb) in cases {
            let (xa, xb) = (data(na), data(nb));
            let got = zip_strided(&a, &xa, &b, &xb, |x: f32, y: f32| x * 10.0 + y);
            assert_eq!(
                got,
                naive(&a, &xa, &b, &xb),
                "{:?} / {:?}",
                a.shape,
                b.strides
            );
        }
    }

    #[test]
    fn a_single_view_maps_in_row_major_order() {
        let t = Layout::contiguous(&[3, 5]).transpose(0, 1);
        let xs = data(15);
        let want: Vec<f32> = t.offsets().map(|o| xs[o] + 1.0).collect();
        assert_eq!(map_strided(&t, &xs, |x: f32| x + 1.0), want);
    }

    /// Rows longer than a task are cut into pieces (a 1-d slice, an
    /// expanded row, rows of a strided slice with an offset): every piece
    /// starts where the walk says, the last one ragged.
    #[test]
    fn long_rows_cut_into_pieces_match_the_element_walk() {
        let long = 2 * TASK + 77;
        let cases = [
            (
                Layout::contiguous(&[3 * long]).slice(0, 1, long, 3),
                3 * long,
            ),
            (Layout::contiguous(&[1]).broadcast_to(&[long]), 1),
            (
                Layout::contiguous(&[4, 2 * long]).slice(1, 5, long - 3, 2),
                8 * long,
            ),
            (
                Layout::contiguous(&[2, long]).slice(1, 7, long - 7, 1),
                2 * long,
            ),
        ];
        for (layout, n) in cases {
            let xs = data(n);
            let want: Vec<f32> = layout.offsets().map(|o| xs[o] - 1.0).collect();
            assert_eq!(
                map_strided(&layout, &xs, |x: f32| x - 1.0),
                want,
                "{layout:?}"
            );
            let dense = Layout::contiguous(&layout.shape);
            let ys = data(layout.numel());
            let got = zip_strided(&layout, &xs, &dense, &ys, |x: f32, y: f32| x * 10.0 + y);
            assert_eq!(got, naive(&layout, &xs, &dense, &ys), "{layout:?}");
        }
    }

    #[test]
    fn empty_and_single_element_shapes() {
        let e = Layout::contiguous(&[0, 3]);
        assert!(zip_strided(&e, &[0f32; 0], &e, &[0f32; 0], |x: f32, y: f32| x + y).is_empty());
        let one = Layout::contiguous(&[1, 1]);
        assert_eq!(
            zip_strided(&one, &[2f32], &one, &[3f32], |x: f32, y: f32| x * y),
            [6.0]
        );
    }
}
