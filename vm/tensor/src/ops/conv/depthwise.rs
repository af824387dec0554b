//! Convolutions whose output channels each read one input channel —
//! depthwise ones (`groups` = channels, MobileNet's and ConvNeXt's blocks)
//! and one-channel images (MNIST's first layer) — computed directly. Via
//! im2col + gemm each group is a 1 × taps by taps × grid product: copying
//! the image `taps` times and packing it cost more than the arithmetic.
//!
//! Here a plane is first copied once, zero-padded and split into phases by
//! the stride (phase `(r, q)` holds rows `r, r + s, …` and columns
//! `q, q + s, …`): then every tap reads, for all outputs of a plane slice
//! at once, one contiguous run of one phase. Outputs are computed `phase
//! width` wide, 64 at a time through all taps with their sums in
//! registers, and the few columns past the grid (which read across rows)
//! dropped at the end. The gradients walk the same runs: the input's adds
//! each output gradient back through every tap, the weights' are dot
//! products of the output gradient with each tap's run.

use rayon::prelude::*;

use super::scratch;
use super::unfold::Geometry;
use crate::ops::linalg::Real;

/// Multiply-adds from which planes are split between threads.
const PARALLEL_TAPS: usize = 1 << 17;

/// Whether the direct kernel takes a convolution with `per_group` input
/// channels in each group.
pub(super) fn suits(per_group: usize) -> bool {
    per_group == 1
}

/// `out` (`[n, o, grid]`, holding the bias) plus the convolution of `xs`
/// (`[n, c, image]`) with `ws` (`[o, 1, kernel]`), output channel `oc`
/// reading input channel `oc / (o / c)`.
pub(super) fn forward<T: Real>(xs: &[T], ws: &[T], out: &mut [T], c: usize, g: &Geometry) {
    let (plane_in, plane_out, taps) = (g.image_len(), g.grid_len(), g.taps());
    if plane_out == 0 {
        return;
    }
    let o = ws.len() / taps;
    let per_channel = o / c;
    let phased = Phased::new(g);
    let plane = |(p, dst): (usize, &mut [T])| {
        let (b, oc) = (p / o, p % o);
        let src = &xs[(b * c + oc / per_channel) * plane_in..][..plane_in];
        scratch::with(phased.len() + phased.slab(), |buffer: &mut [T]| {
            let (split, slab) = buffer.split_at_mut(phased.len());
            phased.fill(src, split);
            accumulate(split, &ws[oc * taps..][..taps], slab, dst, &phased);
        });
    };
    if out.len() * taps >= PARALLEL_TAPS {
        out.par_chunks_mut(plane_out).enumerate().for_each(plane);
    } else {
        out.chunks_mut(plane_out).enumerate().for_each(plane);
    }
}

/// The layout of a plane split into phases: for each input depth, `sh · sw`
/// phases of `rows × width`, one row more than the grid reads (the slack
/// the runs of the bottom output rows read past the grid; what it holds
/// reaches only the columns past the grid).
struct Phased<'g> {
    g: &'g Geometry,
    rows: usize,
    width: usize,
    /// The padded image's height and width the grid reads.
    extent: [usize; 2],
}

impl<'g> Phased<'g> {
    fn new(g: &'g Geometry) -> Self {
        // The padded extent the grid reads (padding after may exceed
        // padding before: 'same' with an even kernel).
        let padded =
            |d: usize| (g.grid[d] - 1) * g.stride[d] + g.dilation[d] * (g.kernel[d] - 1) + 1;
        Phased {
            g,
            rows: padded(1).div_ceil(g.stride[1]) + 1,
            width: padded(2).div_ceil(g.stride[2]).max(1),
            extent: [padded(1), padded(2)],
        }
    }

    fn phases(&self) -> usize {
        self.g.stride[1] * self.g.stride[2]
    }

    fn len(&self) -> usize {
        self.g.image[0] * self.phases() * self.rows * self.width
    }

    /// The outputs of one output depth, `width` wide.
    fn slab(&self) -> usize {
        self.g.grid[1] * self.width
    }

    /// Where phase `(r, q)` of input depth `d` starts.
    fn phase(&self, d: usize, r: usize, q: usize) -> usize {
        ((d * self.g.stride[1] + r) * self.g.stride[2] + q) * self.rows * self.width
    }

    /// Where padded image row `y` (of depth `d`), column `x` lies, if the
    /// grid reads it.
    fn at(&self, d: usize, y: usize, x: usize) -> Option<usize> {
        let [_, sh, sw] = self.g.stride;
        let inside = y < self.extent[0] && x < self.extent[1];
        inside.then(|| self.phase(d, y % sh, x % sw) + (y / sh) * self.width + x / sw)
    }

    /// Where each tap's run starts for output depth `od`, with the tap's
    /// index in the kernel (taps reading only depth padding left out).
    fn taps(&self, od: usize, taps: &mut Vec<(usize, usize)>) {
        let g = self.g;
        let ([kd_n, kh_n, kw_n], [_, dh, dw]) = (g.kernel, g.dilation);
        taps.clear();
        for kd in 0..kd_n {
            let Some(id) = g.source(0, od, kd) else {
                continue;
            };
            for kh in 0..kh_n {
                for kw in 0..kw_n {
                    let start = self
                        .at(id, kh * dh, kw * dw)
                        .expect("a tap lies in the extent");
                    taps.push((start, (kd * kh_n + kh) * kw_n + kw));
                }
            }
        }
    }

    /// One output depth's plane `src` (`grid rows × grid columns`) laid out
    /// `width` wide in `slab`, the columns past the grid zero.
    fn widen<T: Real>(&self, src: &[T], slab: &mut [T]) {
        let ow_n = self.g.grid[2];
        for (line, row) in slab
            .chunks_exact_mut(self.width)
            .zip(src.chunks_exact(ow_n))
        {
            line[..ow_n].copy_from_slice(row);
            line[ow_n..].fill(T::zero());
        }
    }

    /// Writes every element of `dst` from the image plane `src`.
    fn fill<T: Real>(&self, src: &[T], dst: &mut [T]) {
        let g = self.g;
        let ([_, ih_n, iw_n], [_, sh, sw], [_, ph, pw]) = (g.image, g.stride, g.pad);
        for d in 0..g.image[0] {
            for r in 0..sh {
                for q in 0..sw {
                    let phase = &mut dst[self.phase(d, r, q)..][..self.rows * self.width];
                    for (i, row) in phase.chunks_exact_mut(self.width).enumerate() {
                        // Padded row i·sh + r is image row i·sh + r − ph.
                        let image_row = (i * sh + r).checked_sub(ph).filter(|&y| y < ih_n);
                        let Some(y) = image_row else {
                            row.fill(T::zero());
                            continue;
                        };
                        let line = &src[(d * ih_n + y) * iw_n..][..iw_n];
                        // Phase columns j read image column j·sw + q − pw:
                        // those in [lo, hi) land inside the image.
                        let lo = pw.saturating_sub(q).div_ceil(sw).min(row.len());
                        let hi = (iw_n + pw)
                            .saturating_sub(q)
                            .div_ceil(sw)
                            .clamp(lo, row.len());
                        row[..lo].fill(T::zero());
                        row[hi..].fill(T::zero());
                        let first = lo * sw + q - pw;
                        every(&line[first..], sw, &mut row[lo..hi]);
                    }
                }
            }
        }
    }
}

/// `dst[k] = src[k · step]`.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn every<T: Real>(src: &[T], step: usize, dst: &mut [T]) {
    let Some(last) = dst.len().checked_sub(1) else {
        return;
    };
    let src = &src[..=last * step];
    match step {
        1 => dst.copy_from_slice(src),
        // The common strided case in fixed-size blocks of a constant
        // stride, which LLVM turns into shuffles.
        2 => {
            let done = (dst.len() / 16).min(src.len() / 32) * 16;
            for (out, pairs) in dst[..done].chunks_exact_mut(16).zip(src.chunks_exact(32)) {
                for (k, v) in out.iter_mut().enumerate() {
                    *v = pairs[2 * k];
                }
            }
            for (k, v) in dst[done..].iter_mut().enumerate() {
                *v = src[2 * (done + k)];
            }
        }
        _ => dst
            .iter_mut()
            .zip(src.iter().step_by(step))
            .for_each(|(v, &x)| *v = x),
    }
}

/// Outputs computed together, their partial sums held in registers across
/// all taps (four AVX-512 vectors of f32).
const BLOCK: usize = 64;

/// `dst += ` the convolution of the phased plane with `w`, each output
/// depth computed into `slab` (`grid rows × width`), a block of outputs
/// at a time through all taps.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn accumulate<T: Real>(phased: &[T], w: &[T], slab: &mut [T], dst: &mut [T], p: &Phased) {
    let [_, oh_n, ow_n] = p.g.grid;
    let run = slab.len();
    let (mut starts, mut taps) = (Vec::with_capacity(w.len()), Vec::with_capacity(w.len()));
    for (od, out) in dst.chunks_exact_mut(oh_n * ow_n).enumerate() {
        p.taps(od, &mut starts);
        taps.clear();
        taps.extend(starts.iter().map(|&(start, k)| (start, w[k])));
        let mut blocks = slab.chunks_exact_mut(BLOCK);
        for (b, sums) in blocks.by_ref().enumerate() {
            let mut acc = [T::zero(); BLOCK];
            for &(start, wv) in &taps {
                let src: &[T; BLOCK] = phased[start + b * BLOCK..][..BLOCK]
                    .try_into()
                    .expect("a block");
                for (a, &v) in acc.iter_mut().zip(src) {
                    *a = wv.mul_add(v, *a);
                }
            }
            sums.copy_from_slice(&acc);
        }
        let tail = blocks.into_remainder();
        let from = run - tail.len();
        tail.fill(T::zero());
        for &(start, wv) in &taps {
            for (a, &v) in tail.iter_mut().zip(&phased[start + from..]) {
                *a = wv.mul_add(v, *a);
            }
        }
        for (row, line) in out.chunks_exact_mut(ow_n).zip(slab.chunks_exact(p.width)) {
            for (o, &v) in row.iter_mut().zip(line) {
                *o = *o + v;
            }
        }
    }
}

/// Whether the direct weight gradient takes a convolution with
/// `per_group` input and `outputs` output channels in each group: with
/// many output channels per input one (MNIST's 1 → 32) the gemm over the
/// unfolded input does the same dot products faster (0.31 vs 0.38 ms at
/// batch 64); depthwise ones (1 → 1) run here 1.5–2.5× faster.
///
/// The gradients' runs also multiply the zero columns past the grid by
/// values the definition never pairs with them (input past the extent,
/// the next row's start): so the input (weight gradient) or the weights
/// (input gradient) must be finite, as 0 · ∞ would add a NaN.
pub(super) fn suits_weight_grad<T: Real>(per_group: usize, outputs: usize, x: &[T]) -> bool {
    suits(per_group) && outputs <= 4 && x.iter().all(|v| v.is_finite())
}

/// Whether the direct input gradient takes a transposed convolution with
/// `outputs` output channels per group and weights `w` (see
/// [`suits_weight_grad`] for why they must be finite).
pub(super) fn suits_transposed<T: Real>(outputs: usize, w: &[T]) -> bool {
    suits(outputs) && w.iter().all(|v| v.is_finite())
}

/// The weight gradient (`[o, 1, kernel]`) of a convolution the direct
/// kernel takes, from its input `xs` (`[n, c, image]`) and output gradient
/// `gs` (`[n, o, grid]`): per tap, the gradient's plane dotted with the run
/// of the input the tap read, each input plane phased once for all output
/// channels reading it. Threads take runs of images (each summing its own
/// gradient, added in order: the same result every call) or, for fewer
/// images than threads, input channels.
pub(super) fn weight_grad<T: Real>(xs: &[T], gs: &[T], n: usize, c: usize, g: &Geometry) -> Vec<T> {
    let (plane_in, plane_out, taps) = (g.image_len(), g.grid_len(), g.taps());
    let o = gs.len() / (n * plane_out).max(1);
    let mut out = vec![T::zero(); o * taps];
    if plane_out == 0 || n == 0 {
        return out;
    }
    let per_channel = o / c;
    let phased = Phased::new(g);
    // Adds images `images`' gradient for input channel `ic` onto `dw`
    // (its output channels' `[per_channel, taps]`).
    let sum = |images: std::ops::Range<usize>, ic: usize, dw: &mut [T]| {
        scratch::with(phased.len() + phased.slab(), |buffer: &mut [T]| {
            let (split, slab) = buffer.split_at_mut(phased.len());
            let mut starts = Vec::with_capacity(taps);
            for b in images {
                phased.fill(&xs[(b * c + ic) * plane_in..][..plane_in], split);
                for (j, dw) in dw.chunks_exact_mut(taps).enumerate() {
                    let grad = &gs[(b * o + ic * per_channel + j) * plane_out..][..plane_out];
                    for (od, plane) in grad.chunks_exact(plane_out / g.grid[0]).enumerate() {
                        phased.widen(plane, slab);
                        phased.taps(od, &mut starts);
                        for &(start, k) in &starts {
                            dw[k] = dw[k] + dot(slab, &split[start..start + slab.len()]);
                        }
                    }
                }
            }
        })
    };
    let threads = rayon::current_num_threads();
    if o * taps * plane_out * n < PARALLEL_TAPS {
        for (ic, dw) in out.chunks_mut(per_channel * taps).enumerate() {
            sum(0..n, ic, dw);
        }
    } else if n >= threads {
        let run = n.div_ceil(threads);
        let partials: Vec<Vec<T>> = (0..n.div_ceil(run))
            .into_par_iter()
            .map(|part| {
                let mut dw = vec![T::zero(); o * taps];
                for (ic, dw) in dw.chunks_mut(per_channel * taps).enumerate() {
                    sum(part * run..((part + 1) * run).min(n), ic, dw);
                }
                dw
            })
            .collect();
        for part in partials {
            out.iter_mut().zip(part).for_each(|(t, v)| *t = *t + v);
        }
    } else {
        out.par_chunks_mut(per_channel * taps)
            .enumerate()
            .for_each(|(ic, dw)| sum(0..n, ic, dw));
    }
    out
}

/// `Σ a[i]·b[i]` in 16 lanes, which vectorises.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn dot<T: Real>(a: &[T], b: &[T]) -> T {
    let mut lanes = [T::zero(); 16];
    let (mut xs, mut ys) = (a.chunks_exact(16), b.chunks_exact(16));
    for (x, y) in xs.by_ref().zip(ys.by_ref()) {
        for ((l, &x), &y) in lanes.iter_mut().zip(x).zip(y) {
            *l = x.mul_add(y, *l);
        }
    }
    let tail = xs
        .remainder()
        .iter()
        .zip(ys.remainder())
        .fold(T::zero(), |s, (&x, &y)| x.mul_add(y, s));
    lanes.iter().fold(tail, |s, &l| s + l)
}

/// `out` (`[n, o, image]`, holding the bias) plus the transposed
/// convolution of `xs` (`[n, c, grid]`) with `ws` (`[c, 1, kernel]`) in `o`
/// groups — output channel `oc` gathering input channels `oc·c/o…` — the
/// input gradient of a convolution the direct kernel takes: each input
/// plane, laid out `width` wide with zero past the grid, is added through
/// every tap onto the phased output it came from, which is then unphased.
pub(super) fn transposed<T: Real>(
    xs: &[T],
    ws: &[T],
    out: &mut [T],
    n: usize,
    c: usize,
    g: &Geometry,
) {
    let (plane_in, plane_out, taps) = (g.grid_len(), g.image_len(), g.taps());
    if plane_in == 0 || plane_out == 0 || n == 0 {
        return;
    }
    let o = out.len() / (n * plane_out);
    let per_group = c / o;
    let phased = Phased::new(g);
    let [_, ph, pw] = g.pad;
    let [_, rows, columns] = g.image;
    // Where padded position (y, x) lies is a row's part plus a column's
    // (`Phased::at` of row 0 / column 0); none past the extent read.
    let column_at: Vec<Option<usize>> = (0..columns).map(|x| phased.at(0, 0, x + pw)).collect();
    let plane = |(p, dst): (usize, &mut [T])| {
        let (b, oc) = (p / o, p % o);
        scratch::with(phased.len() + phased.slab(), |buffer: &mut [T]| {
            let (split, slab) = buffer.split_at_mut(phased.len());
            split.fill(T::zero());
            let mut starts = Vec::with_capacity(taps);
            for ic in oc * per_group..(oc + 1) * per_group {
                let grad = &xs[(b * c + ic) * plane_in..][..plane_in];
                let w = &ws[ic * taps..][..taps];
                for (od, plane) in grad.chunks_exact(plane_in / g.grid[0]).enumerate() {
                    phased.widen(plane, slab);
                    phased.taps(od, &mut starts);
                    for &(start, k) in &starts {
                        axpy(w[k], slab, &mut split[start..start + slab.len()]);
                    }
                }
            }
            for (row, line) in dst.chunks_exact_mut(columns).enumerate() {
                let Some(row_at) = phased.at(row / rows, row % rows + ph, 0) else {
                    continue;
                };
                for (v, at) in line.iter_mut().zip(&column_at) {
                    if let Some(at) = at {
                        *v = *v + split[row_at + at];
                    }
                }
            }
        });
    };
    if out.len() * taps * per_group >= PARALLEL_TAPS {
        out.par_chunks_mut(plane_out).enumerate().for_each(plane);
    } else {
        out.chunks_mut(plane_out).enumerate().for_each(plane);
    }
}

/// `y += a·x`.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
fn axpy<T: Real>(a: T, x: &[T], y: &mut [T]) {
    for (y, &x) in y.iter_mut().zip(x) {
        *y = a.mul_add(x, *y);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (output, tap, input) triple the convolution multiplies:
    /// output `(b·o + oc)·grid + position`, the tap's index in the kernel,
    /// input `(b·c + ic)·image + position` — its definition.
    fn pairs(c: usize, o: usize, n: usize, g: &Geometry) -> Vec<(usize, usize, usize)> {
        let [_, oh_n, ow_n] = g.grid;
        let [_, kh_n, kw_n] = g.kernel;
        let mut all = vec![];
        for (b, oc) in (0..n).flat_map(|b| (0..o).map(move |oc| (b, oc))) {
            let ic = oc / (o / c);
            for pos in 0..g.grid_len() {
                let (od, oh, ow) = (pos / (oh_n * ow_n), pos / ow_n % oh_n, pos % ow_n);
                for k in 0..g.taps() {
                    let (kd, kh, kw) = (k / (kh_n * kw_n), k / kw_n % kh_n, k % kw_n);
                    let source = (
                        g.source(0, od, kd),
                        g.source(1, oh, kh),
                        g.source(2, ow, kw),
                    );
                    if let (Some(i), Some(j), Some(l)) = source {
                        let at = (i * g.image[1] + j) * g.image[2] + l;
                        all.push((
                            (b * o + oc) * g.grid_len() + pos,
                            k,
                            (b * c + ic) * g.image_len() + at,
                        ));
                    }
                }
            }
        }
        all
    }

    /// Small integers, so every summation order gives the same value.
    fn values(len: usize, seed: usize) -> Vec<f64> {
        (0..len).map(|i| ((i * seed) % 13) as f64 - 6.0).collect()
    }

    type Case = (
        [usize; 3],
        [usize; 3],
        [usize; 3],
        [usize; 3],
        [usize; 3],
        usize,
        usize,
        usize,
    );

    /// (kernel, stride, pad, dilation, image, channels, outputs, batch)
    const CASES: [Case; 9] = [
        (
            [1, 3, 3],
            [1, 1, 1],
            [0, 1, 1],
            [1, 1, 1],
            [1, 9, 13],
            4,
            4,
            2,
        ),
        (
            [1, 3, 3],
            [1, 2, 2],
            [0, 1, 1],
            [1, 1, 1],
            [1, 11, 11],
            3,
            3,
            1,
        ),
        (
            [1, 5, 5],
            [1, 1, 1],
            [0, 2, 2],
            [1, 1, 1],
            [1, 7, 40],
            2,
            2,
            1,
        ),
        (
            [1, 3, 3],
            [1, 3, 3],
            [0, 0, 2],
            [1, 2, 2],
            [1, 10, 17],
            2,
            6,
            2,
        ),
        (
            [1, 3, 3],
            [1, 1, 1],
            [0, 0, 0],
            [1, 1, 1],
            [1, 28, 28],
            1,
            8,
            3,
        ),
        (
            [1, 1, 7],
            [1, 1, 2],
            [0, 0, 3],
            [1, 1, 1],
            [1, 1, 50],
            5,
            5,
            1,
        ),
        (
            [3, 3, 3],
            [2, 1, 2],
            [1, 1, 1],
            [1, 1, 1],
            [5, 6, 7],
            2,
            4,
            1,
        ),
        // A kernel wider than the padded image reaches: some taps never land.
        (
            [1, 3, 9],
            [1, 1, 1],
            [0, 1, 4],
            [1, 1, 1],
            [1, 3, 4],
            2,
            2,
            1,
        ),
        // 'same' with an even kernel: one more row and column padded after.
        (
            [1, 4, 4],
            [1, 1, 1],
            [0, 1, 1],
            [1, 1, 1],
            [1, 6, 9],
            3,
            3,
            1,
        ),
    ];

    fn case_geometry(
        kernel: [usize; 3],
        stride: [usize; 3],
        pad: [usize; 3],
        dilation: [usize; 3],
        image: [usize; 3],
    ) -> Geometry {
        let grid = std::array::from_fn(|d| {
            (image[d] + 2 * pad[d]).saturating_sub(dilation[d] * (kernel[d] - 1) + 1) / stride[d]
                + 1
        });
        // 'same' pads after by one more than before: the grid is the image.
        let grid = if kernel == [1, 4, 4] { image } else { grid };
        Geometry {
            kernel,
            stride,
            pad,
            dilation,
            image,
            grid,
        }
    }

    #[test]
    fn equals_the_definition_for_strides_padding_dilation_and_multipliers() {
        for (kernel, stride, pad, dilation, image, c, o, n) in CASES {
            let g = case_geometry(kernel, stride, pad, dilation, image);
            let what = format!("{kernel:?} {stride:?} {pad:?} {dilation:?} {image:?} c={c} o={o}");
            let (x, w) = (
                values(n * c * g.image_len(), 7919),
                values(o * g.taps(), 31),
            );
            let grad = values(n * o * g.grid_len(), 17);
            let (mut y, mut dx, mut dw) = (
                vec![0.0; grad.len()],
                vec![0.0; x.len()],
                vec![0.0; w.len()],
            );
            for (out, k, at) in pairs(c, o, n, &g) {
                let tap = out / g.grid_len() % o * g.taps() + k;
                y[out] += w[tap] * x[at];
                dx[at] += grad[out] * w[tap];
                dw[tap] += grad[out] * x[at];
            }
            // Onto a bias of one, in float64 and float32.
            let mut got = vec![1.0; y.len()];
            forward(&x, &w, &mut got, c, &g);
            assert_eq!(
                got,
                y.iter().map(|v| v + 1.0).collect::<Vec<_>>(),
                "forward, {what}"
            );
            let narrow = |v: &[f64]| v.iter().map(|&v| v as f32).collect::<Vec<_>>();
            let mut got32 = vec![1.0f32; y.len()];
            forward(&narrow(&x), &narrow(&w), &mut got32, c, &g);
            assert_eq!(got32, narrow(&got), "float32 forward, {what}");
            assert_eq!(
                weight_grad(&x, &grad, n, c, &g),
                dw,
                "weight gradient, {what}"
            );
            let mut got = vec![1.0; x.len()];
            transposed(&grad, &w, &mut got, n, o, &g);
            assert_eq!(
                got,
                dx.iter().map(|v| v + 1.0).collect::<Vec<_>>(),
                "input gradient, {what}"
            );
        }
    }

    #[test]
    fn every_takes_each_step_th_element() {
        for step in 1..4 {
            for len in [0, 1, 15, 16, 17, 32, 33, 50] {
                let src: Vec<f32> = (0..(len * step).max(1)).map(|i| i as f32).collect();
                let mut dst = vec![-1.0; len];
                every(&src, step, &mut dst);
                let want: Vec<f32> = (0..len).map(|k| (k * step) as f32).collect();
                assert_eq!(dst, want, "step {step}, {len} elements");
            }
        }
    }
}
