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
    fn source(&self, d: usize, g: usize, k: usize) -> Option<usize> {
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
    let [_, oh, ow] = g.grid;
    let (w, s) = (g.image[2], g.stride[2]);
    let row = |(r, out): (usize, &mut [T])| {
        let (ch, kd, kh, kw) = g.tap(r);
        let image = &src[ch * g.image_len()..(ch + 1) * g.image_len()];
        let (lo, hi, x0) = g.inside_columns(kw);
        for (zy, out_row) in out.chunks_mut(ow).enumerate() {
            let (z, y) = (zy / oh, zy % oh);
            let (Some(iz), Some(iy)) = (g.source(0, z, kd), g.source(1, y, kh)) else {
                out_row.fill(T::default());
                continue;
            };
            let line = &image[(iz * g.image[1] + iy) * w..][..w];
            out_row[..lo].fill(T::default());
            out_row[hi..].fill(T::default());
            let start = (x0 + (lo * s) as isize) as usize;
            if s == 1 {
                out_row[lo..hi].copy_from_slice(&line[start..start + (hi - lo)]);
            } else {
                for (v, &x) in out_row[lo..hi]
                    .iter_mut()
                    .zip(line[start..].iter().step_by(s))
                {
                    *v = x;
                }
            }
        }
    };
    let col = &mut col[..channels * g.taps() * g.grid_len()];
    if parallel {
        col.par_chunks_mut(g.grid_len()).enumerate().for_each(row);
    } else {
        col.chunks_mut(g.grid_len()).enumerate().for_each(row);
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
                    for (v, &x) in line[start..].iter_mut().step_by(s).zip(&in_row[lo..hi]) {
                        *v = *v + x;
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

    #[test]
    fn col2im_is_the_adjoint_of_im2col() {
        // <im2col(x), c> == <x, col2im(c)> for every x and c.
        let g = geometry([2, 3, 4], [2, 2, 3], 1, 1);
        let (image, rows) = (g.image_len(), g.taps() * g.grid_len());
        let x: Vec<f64> = (0..image).map(|i| (i as f64 * 0.37).sin()).collect();
        let c: Vec<f64> = (0..rows).map(|i| (i as f64 * 0.11).cos()).collect();
        let mut col = vec![0.0; rows];
        im2col(&x, 1, &g, &mut col, false);
        let mut back = vec![0.0; image];
        col2im(&c, 1, &g, &mut back);
        let lhs: f64 = col.iter().zip(&c).map(|(a, b)| a * b).sum();
        let rhs: f64 = x.iter().zip(&back).map(|(a, b)| a * b).sum();
        assert!((lhs - rhs).abs() < 1e-9, "{lhs} vs {rhs}");
    }
}
