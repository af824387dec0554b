//! Convolutions whose output channels each read one input channel —
//! depthwise ones (`groups` = channels, MobileNet's and ConvNeXt's blocks)
//! and one-channel images (MNIST's first layer) — computed directly. Via
//! im2col + gemm each group is a 1 × taps by taps × grid product: copying
//! the image `taps` times and packing it cost more than the arithmetic.
//!
//! Here a plane is first copied once, zero-padded and split into phases by
//! the stride (phase `(r, q)` holds rows `r, r + s, …` and columns
//! `q, q + s, …`): then every tap reads, for all outputs of a plane slice
//! at once, one contiguous run of one phase, and the tap is one long
//! multiply-add pass. Outputs are computed `phase width` wide and the few
//! columns past the grid (which read across rows) dropped at the end.

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
/// phases of `rows × width`, the last row zero (the slack the runs of the
/// bottom output rows read past the grid).
struct Phased<'g> {
    g: &'g Geometry,
    rows: usize,
    width: usize,
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
        // The common strided case as a constant stride, which vectorises.
        2 => {
            // Fixed-size blocks, which LLVM turns into shuffles.
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
    let g = p.g;
    let ([kd_n, kh_n, kw_n], [_, dh, dw]) = (g.kernel, g.dilation);
    let ([_, sh, sw], [_, oh_n, ow_n]) = (g.stride, g.grid);
    let run = slab.len();
    let mut taps = Vec::with_capacity(g.taps());
    for (od, out) in dst.chunks_exact_mut(oh_n * ow_n).enumerate() {
        // Where each tap's run starts in `phased`, with its weight.
        taps.clear();
        for kd in 0..kd_n {
            let Some(id) = g.source(0, od, kd) else {
                continue;
            };
            for kh in 0..kh_n {
                for kw in 0..kw_n {
                    let (y, x) = (kh * dh, kw * dw);
                    let start = p.phase(id, y % sh, x % sw) + (y / sh) * p.width + x / sw;
                    taps.push((start, w[(kd * kh_n + kh) * kw_n + kw]));
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The convolution by its definition, one output element at a time.
    fn naive(x: &[f64], w: &[f64], c: usize, o: usize, n: usize, g: &Geometry) -> Vec<f64> {
        let [od_n, oh_n, ow_n] = g.grid;
        let [kd_n, kh_n, kw_n] = g.kernel;
        let mut out = vec![0.0; n * o * g.grid_len()];
        for b in 0..n {
            for oc in 0..o {
                let src = &x[(b * c + oc / (o / c)) * g.image_len()..];
                for (od, oh, ow) in (0..od_n)
                    .flat_map(|d| (0..oh_n).flat_map(move |h| (0..ow_n).map(move |w| (d, h, w))))
                {
                    let mut acc = 0.0;
                    for (kd, kh, kw) in (0..kd_n).flat_map(|d| {
                        (0..kh_n).flat_map(move |h| (0..kw_n).map(move |w| (d, h, w)))
                    }) {
                        if let (Some(i), Some(j), Some(k)) = (
                            g.source(0, od, kd),
                            g.source(1, oh, kh),
                            g.source(2, ow, kw),
                        ) {
                            let at = (i * g.image[1] + j) * g.image[2] + k;
                            acc += w[((oc * kd_n + kd) * kh_n + kh) * kw_n + kw] * src[at];
                        }
                    }
                    out[((b * o + oc) * od_n + od) * oh_n * ow_n + oh * ow_n + ow] = acc;
                }
            }
        }
        out
    }

    fn geometry(
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

    #[test]
    fn equals_the_definition_for_strides_padding_dilation_and_multipliers() {
        let cases = [
            // (kernel, stride, pad, dilation, image, channels, outputs, batch)
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
            // wider kernel than image with padding: some taps never land
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
        ];
        // 'same' with an even kernel: one row and column more padding after.
        let same = Geometry {
            grid: [1, 6, 9],
            ..geometry([1, 4, 4], [1, 1, 1], [0, 1, 1], [1, 1, 1], [1, 6, 9])
        };
        for (kernel, stride, pad, dilation, image, c, o, n) in cases {
            let g = geometry(kernel, stride, pad, dilation, image);
            let g = if kernel == [1, 4, 4] { same.clone() } else { g };
            let x: Vec<f64> = (0..n * c * g.image_len())
                .map(|i| ((i * 7919) % 23) as f64 - 11.0)
                .collect();
            let w: Vec<f64> = (0..o * g.taps())
                .map(|i| ((i * 31) % 13) as f64 - 6.0)
                .collect();
            let mut out = vec![0.0; n * o * g.grid_len()];
            forward(&x, &w, &mut out, c, &g);
            assert_eq!(
                out,
                naive(&x, &w, c, o, n, &g),
                "{kernel:?} {stride:?} {pad:?} {dilation:?} {image:?}"
            );
            let (x32, w32): (Vec<f32>, Vec<f32>) = (
                x.iter().map(|&v| v as f32).collect(),
                w.iter().map(|&v| v as f32).collect(),
            );
            let mut out32 = vec![1.0f32; out.len()];
            forward(&x32, &w32, &mut out32, c, &g);
            assert!(
                out32.iter().zip(&out).all(|(&a, &b)| a == b as f32 + 1.0),
                "float32 adds onto the bias"
            );
        }
    }
}
