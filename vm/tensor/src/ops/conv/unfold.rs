//! im2col and its adjoint col2im over up to three spatial dims: the
//! matrices that turn a convolution (and a transposed one) into a gemm.

use rayon::prelude::*;

use crate::storage::Element;

/// A convolution's spatial parameters, lifted to three dims (depth,
/// height, width) with unit dims in front for 1-d and 2-d.
#[derive(Clone, Debug)]
pub(super) struct Geometry {
    pub kernel: [usize; 3],
    pub stride: [usize; 3],
    /// Padding before each dim of the image.
    pub pad: [usize; 3],
    pub dilation: [usize; 3],
    /// The image the kernel slides over.
    pub image: [usize; 3],
    /// The grid of kernel positions.
    pub grid: [usize; 3],
}

impl Geometry {
    pub fn taps(&self) -> usize {
        self.kernel.iter().product()
    }

    pub fn image_len(&self) -> usize {
        self.image.iter().product()
    }

    pub fn grid_len(&self) -> usize {
        self.grid.iter().product()
    }

    /// Where tap `k` of dim `d` reads for grid position `g`: `None` in the padding.
    pub(super) fn source(&self, d: usize, g: usize, k: usize) -> Option<usize> {
        let i = (g * self.stride[d] + k * self.dilation[d]) as isize - self.pad[d] as isize;
        (0..self.image[d] as isize)
            .contains(&i)
            .then_some(i as usize)
    }

    /// The grid columns `[lo, hi)` whose width-tap `kw` lands inside the image.
    fn inside_columns(&self, kw: usize) -> (usize, usize, isize) {
        let (w, ow, s) = (self.image[2], self.grid[2], self.stride[2]);
        let x0 = (kw * self.dilation[2]) as isize - self.pad[2] as isize;
        let lo = if x0 >= 0 {
            0
        } else {
            ((-x0) as usize).div_ceil(s)
        }
        .min(ow);
        let hi = if (w as isize) <= x0 {
            0
        } else {
            ((w as isize - x0) as usize).div_ceil(s).min(ow)
        }
        .max(lo);
        (lo, hi, x0)
    }

    /// Splits row `r` of the column matrix into (channel, kd, kh, kw).
    fn tap(&self, r: usize) -> (usize, usize, usize, usize) {
        let taps = self.taps();
        let (ch, t) = (r / taps, r % taps);
        let [_, kh, kw] = self.kernel;
        (ch, t / (kh * kw), (t / kw) % kh, t % kw)
    }
}

/// Unfolds `channels` images of `src` into a (channels·taps) × grid matrix
/// whose rows are what each kernel tap sees (zero in the padding).
pub(super) fn im2col<T: Element>(
    src: &[T],
    channels: usize,
    g: &Geometry,
    col: &mut [T],
    parallel: bool,
) {
    let shifted = g.stride[1..] == [1, 1] && g.grid[2] == g.image[2];
    let row = |ch: usize, tap: (usize, usize, usize), out: &mut [T]| {
        let image = &src[ch * g.image_len()..(ch + 1) * g.image_len()];
        if shifted {
            shifted_row(image, g, tap, out);
        } else {
            strided_row(image, g, tap, out);
        }
    };
    let col = &mut col[..channels * g.taps() * g.grid_len()];
    if parallel {
        col.par_chunks_mut(g.grid_len())
            .enumerate()
            .for_each(|(r, out)| {
                let (ch, kd, kh, kw) = g.tap(r);
                row(ch, (kd, kh, kw), out)
            });
        return;
    }
    // In order without dividing a row number into its tap: a small
    // image's rows are short, and four divisions per row showed.
    let mut rows = col.chunks_exact_mut(g.grid_len());
    let [kd, kh, kw] = g.kernel;
    for ch in 0..channels {
        for tap in (0..kd).flat_map(|d| (0..kh).flat_map(move |h| (0..kw).map(move |w| (d, h, w))))
        {
            row(ch, tap, rows.next().expect("a row per channel and tap"));
        }
    }
}

/// One im2col row in general: a copy per output row, each window's
/// columns read at the stride.
fn strided_row<T: Element>(
    image: &[T],
    g: &Geometry,
    (kd, kh, kw): (usize, usize, usize),
    out: &mut [T],
) {
    let [od, oh, ow] = g.grid;
    let (w, s) = (g.image[2], g.stride[2]);
    let (lo, hi, x0) = g.inside_columns(kw);
    let start = (x0 + (lo * s) as isize) as usize;
    let mut rows = out.chunks_exact_mut(ow);
    for z in 0..od {
        let iz = g.source(0, z, kd);
        for (y, out_row) in (0..oh).zip(&mut rows) {
            let (Some(iz), Some(iy)) = (iz, g.source(1, y, kh)) else {
                out_row.fill(T::default());
                continue;
            };
            let line = &image[(iz * g.image[1] + iy) * w..][..w];
            out_row[..lo].fill(T::default());
            out_row[hi..].fill(T::default());
            if s == 1 {
                out_row[lo..hi].copy_from_slice(&line[start..start + (hi - lo)]);
            } else if s == 2 {
                // Every other element: pairs, which vectorise as shuffles
                // (`step_by` went one element at a time: a ResNet stem's 7×7
                // stride-2 unfold took 28% of its convolution, now 23%).
                for (v, pair) in out_row[lo..hi].iter_mut().zip(line[start..].chunks(2)) {
                    *v = pair[0];
                }
            } else {
                for (v, &x) in out_row[lo..hi]
                    .iter_mut()
                    .zip(line[start..].iter().step_by(s))
                {
                    *v = x;
                }
            }
        }
    }
}

/// One im2col row when output rows are as wide as the image and both
/// in-plane strides are one (a "same"-padded stride-1 convolution, the
/// common 3×3 with padding 1): each plane of the row is the image shifted
/// by the tap's offset, so one copy per plane and zeros where the tap falls
/// in the padding — not a short copy per output row (a batch-1 CIFAR
/// convolution spent 40% of its time in those).
fn shifted_row<T: Element>(
    image: &[T],
    g: &Geometry,
    (kd, kh, kw): (usize, usize, usize),
    out: &mut [T],
) {
    let [_, h, w] = g.image;
    let [_, oh, _] = g.grid;
    let plane = h * w;
    let (lo, hi, dx) = g.inside_columns(kw);
    let dy = (kh * g.dilation[1]) as isize - g.pad[1] as isize;
    // Output rows whose tap row lies inside the image.
    let first = (-dy).clamp(0, oh as isize) as usize;
    let end = (h as isize - dy).clamp(first as isize, oh as isize) as usize;
    for (z, out) in out.chunks_exact_mut(oh * w).enumerate() {
        let Some(iz) = g.source(0, z, kd) else {
            out.fill(T::default());
            continue;
        };
        let image = &image[iz * plane..(iz + 1) * plane];
        out[..first * w].fill(T::default());
        out[end * w..].fill(T::default());
        // Output element i reads image element i + offset; the ends of the
        // range that would read outside the plane are columns zeroed below.
        let offset = dy * w as isize + dx;
        let a = ((first * w) as isize).max(-offset) as usize;
        let b = ((end * w) as isize)
            .min(plane as isize - offset)
            .max(a as isize) as usize;
        if a < b {
            let from = (a as isize + offset) as usize;
            out[a..b].copy_from_slice(&image[from..from + (b - a)]);
        }
        // Column by column: the edges are an element or two per row, and a
        // `memset` call per row cost more than the stores.
        let rows = &mut out[first * w..end * w];
        let columns = if rows.is_empty() { 0..0 } else { 0..w };
        for x in columns.filter(|&x| x < lo || x >= hi) {
            rows[x..]
                .iter_mut()
                .step_by(w)
                .for_each(|v| *v = T::default());
        }
    }
}

/// The adjoint of [`im2col`]: adds each entry of the (channels·taps) ×
/// grid matrix `col` into the image position its tap reads, over
/// `channels` images of `dst` (entries in the padding are dropped).
pub(super) fn col2im<T: Element + std::ops::Add<Output = T>>(
    col: &[T],
    channels: usize,
    g: &Geometry,
    dst: &mut [T],
) {
    let [_, oh, ow] = g.grid;
    let (w, s) = (g.image[2], g.stride[2]);
    let taps = g.taps();
    // Channels are independent images: one thread each.
    dst[..channels * g.image_len()]
        .par_chunks_mut(g.image_len())
        .enumerate()
        .for_each(|(ch, image)| {
            for t in 0..taps {
                let r = ch * taps + t;
                let (_, kd, kh, kw) = g.tap(r);
                let rows = &col[r * g.grid_len()..(r + 1) * g.grid_len()];
                let (lo, hi, x0) = g.inside_columns(kw);
                for (zy, in_row) in rows.chunks(ow).enumerate() {
                    let (z, y) = (zy / oh, zy % oh);
                    let (Some(iz), Some(iy)) = (g.source(0, z, kd), g.source(1, y, kh)) else {
                        continue;
                    };
                    let line = &mut image[(iz * g.image[1] + iy) * w..][..w];
                    let start = (x0 + (lo * s) as isize) as usize;
                    let taps = &in_row[lo..hi];
                    if s == 1 {
                        // Contiguous: a loop that vectorises (`step_by`
                        // does not, even by one).
                        for (v, &x) in line[start..].iter_mut().zip(taps) {
                            *v = *v + x;
                        }
                    } else {
                        for (v, &x) in line[start..].iter_mut().step_by(s).zip(taps) {
                            *v = *v + x;
                        }
                    }
                }
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn geometry(image: [usize; 3], kernel: [usize; 3], stride: usize, pad: usize) -> Geometry {
        let grid = [0, 1, 2].map(|d| (image[d] + 2 * pad - kernel[d]) / stride + 1);
        Geometry {
            kernel,
            stride: [stride; 3],
            pad: [pad; 3],
            dilation: [1; 3],
            image,
            grid,
        }
    }

    #[test]
    fn im2col_reads_each_tap_with_zero_padding() {
        // One 1x3 row, kernel 2 wide, padding 1: grid of 4 columns.
        let g = geometry([1, 1, 3], [1, 1, 2], 1, 0);
        let g = Geometry {
            pad: [0, 0, 1],
            grid: [1, 1, 4],
            ..g
        };
        let mut col = vec![0.0f64; 8];
        im2col(&[1.0, 2.0, 3.0], 1, &g, &mut col, false);
        assert_eq!(col, [0.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 0.0]);
    }

    /// im2col by its definition: row (channel, tap), column (grid
    /// position), the image element the tap reads there or zero.
    fn naive_im2col(src: &[f64], channels: usize, g: &Geometry) -> Vec<f64> {
        let mut col = Vec::new();
        for ch in 0..channels {
            for kd in 0..g.kernel[0] {
                for kh in 0..g.kernel[1] {
                    for kw in 0..g.kernel[2] {
                        for z in 0..g.grid[0] {
                            for y in 0..g.grid[1] {
                                for x in 0..g.grid[2] {
                                    let at = [(0, z, kd), (1, y, kh), (2, x, kw)]
                                        .map(|(d, p, k)| g.source(d, p, k));
                                    col.push(match at {
                                        [Some(iz), Some(iy), Some(ix)] => {
                                            src[ch * g.image_len()
                                                + (iz * g.image[1] + iy) * g.image[2]
                                                + ix]
                                        }
                                        _ => 0.0,
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        col
    }

    #[test]
    fn im2col_matches_its_definition_for_random_geometries() {
        use rand::{Rng, SeedableRng, rngs::SmallRng};
        let mut rng = SmallRng::seed_from_u64(7);
        let mut shifted = 0;
        for _ in 0..400 {
            let dims: usize = rng.random_range(1..=3);
            let mut g = geometry([1; 3], [1; 3], 1, 0);
            for d in 3 - dims..3 {
                g.kernel[d] = rng.random_range(1..=3);
                g.stride[d] = rng.random_range(1..=2);
                g.dilation[d] = rng.random_range(1..=2);
                g.pad[d] = rng.random_range(0..=2);
                let span = g.dilation[d] * (g.kernel[d] - 1) + 1;
                g.image[d] = rng
                    .random_range(1..=7)
                    .max(span.saturating_sub(2 * g.pad[d]));
                g.grid[d] = (g.image[d] + 2 * g.pad[d] - span) / g.stride[d] + 1;
            }
            // Half the cases "same"-shaped (the shifted-copy path).
            if rng.random_bool(0.5) {
                for d in 3 - dims.min(2)..3 {
                    g.stride[d] = 1;
                    g.pad[d] = g.dilation[d] * (g.kernel[d] - 1) / 2;
                    g.grid[d] = g.image[d] + 2 * g.pad[d] - g.dilation[d] * (g.kernel[d] - 1);
                }
            }
            if g.grid_len() == 0 {
                continue; // the convolution returns before unfolding
            }
            shifted += usize::from(g.stride[1..] == [1, 1] && g.grid[2] == g.image[2]);
            let channels = rng.random_range(1..=3);
            let x: Vec<f64> = (0..channels * g.image_len())
                .map(|i| i as f64 + 1.0)
                .collect();
            let rows = channels * g.taps();
            let mut col = vec![f64::NAN; rows * g.grid_len()];
            im2col(&x, channels, &g, &mut col, rng.random_bool(0.5));
            assert_eq!(col, naive_im2col(&x, channels, &g), "{g:?}");
        }
        assert!(shifted > 100, "only {shifted} cases took the shifted path");
    }

    #[test]
    fn col2im_is_the_adjoint_of_im2col() {
        // <im2col(x), c> == <x, col2im(c)> for every x and c, at unit
        // stride (contiguous adds) and at stride 2.
        for (image, stride) in [([2, 3, 4], 1), ([2, 5, 7], 2)] {
            let g = geometry(image, [2, 2, 3], stride, 1);
            let (image, rows) = (g.image_len(), g.taps() * g.grid_len());
            let x: Vec<f64> = (0..image).map(|i| (i as f64 * 0.37).sin()).collect();
            let c: Vec<f64> = (0..rows).map(|i| (i as f64 * 0.11).cos()).collect();
            let mut col = vec![0.0; rows];
            im2col(&x, 1, &g, &mut col, false);
            let mut back = vec![0.0; image];
            col2im(&c, 1, &g, &mut back);
            let lhs: f64 = col.iter().zip(&c).map(|(a, b)| a * b).sum();
            let rhs: f64 = x.iter().zip(&back).map(|(a, b)| a * b).sum();
            assert!((lhs - rhs).abs() < 1e-9, "stride {stride}: {lhs} vs {rhs}");
        }
    }
}
