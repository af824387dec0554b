//! A convolution's weight gradient, `∂L/∂w = Σₙ Gₙ · colₙᵀ`: per image, the
//! output gradient `[O, grid]` times its unfolded input `[C·taps, grid]`
//! transposed, accumulated. Each image's im2col matrix lives in the
//! per-thread scratch buffer (a few hundred KB) instead of one unfolded
//! copy of the whole batch and its transpose (the mnist Net's second
//! convolution: 42 MB each).

use rayon::prelude::*;

use super::scratch;
use super::unfold::{Geometry, im2col};
use super::{across_batch, lift};
use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::ops::linalg::{Matrix, PARALLEL_FLOPS, Real, gemm_into};
use crate::tensor::Tensor;

const OP: &str = "convolution_backward";

/// The weight gradient `[O, C/groups, kernel…]` of a convolution of `input`
/// `[N, C, image…]` whose output gradient is `grad` `[N, O, grid…]`, with
/// symmetric `padding`.
pub fn conv_weight_grad(
    grad: &Tensor,
    input: &Tensor,
    kernel: &[usize],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    groups: i64,
) -> Result<Tensor> {
    let spatial = kernel.len();
    let positive = |v: &[i64]| v.len() == spatial && v.iter().all(|&s| s > 0);
    if !(1..=3).contains(&spatial)
        || input.ndim() != spatial + 2
        || grad.ndim() != spatial + 2
        || grad.shape()[0] != input.shape()[0]
        || !positive(stride)
        || !positive(dilation)
        || padding.len() != spatial
        || padding.iter().any(|&p| p < 0)
        || groups < 1
    {
        return Err(TensorError::runtime(
            OP,
            format!(
                "a weight gradient of kernel {kernel:?} for input {:?} and gradient {:?} (stride {stride:?}, padding {padding:?}, dilation {dilation:?}, groups {groups})",
                input.shape(),
                grad.shape()
            ),
        ));
    }
    let groups = groups as usize;
    let (c, o) = (input.shape()[1], grad.shape()[1]);
    let to_usize = |v: &[i64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let g = Geometry {
        kernel: lift(kernel, 1),
        stride: lift(&to_usize(stride), 1),
        pad: lift(&to_usize(padding), 0),
        dilation: lift(&to_usize(dilation), 1),
        image: lift(&input.shape()[2..], 1),
        grid: lift(&grad.shape()[2..], 1),
    };
    let fits = (0..3).all(|d| {
        let span = g.dilation[d] * (g.kernel[d] - 1) + 1;
        let padded = g.image[d] + 2 * g.pad[d];
        padded >= span && (padded - span) / g.stride[d] + 1 == g.grid[d]
    });
    if !c.is_multiple_of(groups) || !o.is_multiple_of(groups) || !fits || kernel.contains(&0) {
        return Err(TensorError::runtime(
            OP,
            format!(
                "the gradient {:?} is not the output of a convolution of {:?} with a {kernel:?} kernel in {groups} groups",
                grad.shape(),
                input.shape()
            ),
        ));
    }
    let dtype = input.dtype();
    let compute = if dtype.is_float() { dtype } else { DType::F64 };
    let (x, gr) = (
        input.to_dtype(compute).contiguous(),
        grad.to_dtype(compute).contiguous(),
    );
    let mut shape = vec![o, c / groups];
    shape.extend(kernel);
    let out = match compute {
        DType::F32 => Tensor::from_vec(accumulate::<f32>(&gr, &x, &g, groups), &shape),
        _ => Tensor::from_vec(accumulate::<f64>(&gr, &x, &g, groups), &shape),
    };
    Ok(out.to_dtype(dtype))
}

/// `Σₙ Gₙ · colₙᵀ` per group, as `[O, C/groups · taps]`; images are split
/// between threads, each summing a run of them into its own matrix.
fn accumulate<T: Real>(grad: &Tensor, x: &Tensor, g: &Geometry, groups: usize) -> Vec<T> {
    let (n, c, o) = (x.shape()[0], x.shape()[1], grad.shape()[1]);
    let (cg, og) = (c / groups, o / groups);
    let (plane_in, grid) = (g.image_len(), g.grid_len());
    let patch = cg * g.taps();
    let (sx, sg) = (x.read(), grad.read());
    let (xs, gs) = (
        T::slice(&sx).expect("x is T"),
        T::slice(&sg).expect("grad is T"),
    );
    if super::depthwise::suits_weight_grad(cg, og, xs) {
        return super::depthwise::weight_grad(xs, gs, n, c, g);
    }
    let len = crate::alloc::ensure_numel::<T>(&[o, patch]);
    let across = across_batch(n);
    let image = |mut acc: Vec<T>, b: usize| {
        scratch::with(patch * grid, |col: &mut [T]| {
            for grp in 0..groups {
                let src = &xs[(b * c + grp * cg) * plane_in..(b * c + (grp + 1) * cg) * plane_in];
                im2col(src, cg, g, col, false);
                let lhs = Matrix {
                    data: &gs[(b * o + grp * og) * grid..(b * o + (grp + 1) * og) * grid],
                    row_stride: grid,
                    col_stride: 1,
                };
                // colᵀ: grid × patch, read down the unfolded rows.
                let rhs = Matrix {
                    data: &*col,
                    row_stride: 1,
                    col_stride: grid,
                };
                let block = &mut acc[grp * og * patch..(grp + 1) * og * patch];
                let parallel = !across && og * patch * grid >= PARALLEL_FLOPS;
                gemm_into(og, patch, grid, block, lhs, rhs, parallel, true);
            }
        });
        acc
    };
    let zeros = || vec![T::zero(); len];
    if !across {
        return (0..n).fold(zeros(), image);
    }
    // Fixed runs of images per thread, their sums added in order: the same
    // result on every call (a work-stealing split would round differently).
    let run = n.div_ceil(rayon::current_num_threads());
    let images: Vec<usize> = (0..n).collect();
    let sums: Vec<Vec<T>> = images
        .par_chunks(run)
        .map(|ids| ids.iter().copied().fold(zeros(), image))
        .collect();
    let mut sums = sums.into_iter();
    let mut total = sums.next().unwrap_or_else(zeros);
    for sum in sums {
        total.iter_mut().zip(sum).for_each(|(x, y)| *x = *x + y);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The gradient by the definition: each weight tap summed over every
    /// output position that read it.
    #[allow(clippy::too_many_arguments)] // the convolution's sizes
    fn naive(
        grad: &[f64],
        x: &[f64],
        n: usize,
        c: usize,
        o: usize,
        hw: (usize, usize),
        k: usize,
        s: usize,
        p: usize,
    ) -> Vec<f64> {
        let (h, w) = hw;
        let (oh, ow) = ((h + 2 * p - k) / s + 1, (w + 2 * p - k) / s + 1);
        let mut out = vec![0.0; o * c * k * k];
        for b in 0..n {
            for oc in 0..o {
                for ic in 0..c {
                    for kh in 0..k {
                        for kw in 0..k {
                            for y in 0..oh {
                                for z in 0..ow {
                                    let (iy, iz) = (
                                        (y * s + kh) as isize - p as isize,
                                        (z * s + kw) as isize - p as isize,
                                    );
                                    if iy < 0 || iz < 0 || iy >= h as isize || iz >= w as isize {
                                        continue;
                                    }
                                    out[((oc * c + ic) * k + kh) * k + kw] += grad
                                        [((b * o + oc) * oh + y) * ow + z]
                                        * x[((b * c + ic) * h + iy as usize) * w + iz as usize];
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn values(n: usize, seed: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 31 + seed * 17) % 23) as f64 / 11.0 - 1.0)
            .collect()
    }

    #[test]
    fn weight_gradients_match_the_definition() {
        // Batch below and above the thread count, stride and padding.
        for &(n, c, o, h, w, k, s, p) in &[
            (1, 2, 3, 5, 6, 3, 1, 0),
            (5, 3, 4, 7, 6, 3, 2, 1),
            (8, 1, 2, 9, 9, 2, 1, 1),
        ] {
            let (oh, ow) = ((h + 2 * p - k) / s + 1, (w + 2 * p - k) / s + 1);
            let (gv, xv) = (values(n * o * oh * ow, 1), values(n * c * h * w, 2));
            let grad = Tensor::from_vec(gv.clone(), &[n, o, oh, ow]);
            let x = Tensor::from_vec(xv.clone(), &[n, c, h, w]);
            let s64 = s as i64;
            let got = conv_weight_grad(&grad, &x, &[k, k], &[s64, s64], &[p as i64; 2], &[1, 1], 1)
                .unwrap();
            assert_eq!(got.shape(), [o, c, k, k]);
            let want = naive(&gv, &xv, n, c, o, (h, w), k, s, p);
            // Bit for bit the same on every call, however threads run.
            for _ in 0..3 {
                let again =
                    conv_weight_grad(&grad, &x, &[k, k], &[s64, s64], &[p as i64; 2], &[1, 1], 1)
                        .unwrap();
                assert_eq!(again.to_vec::<f64>(), got.to_vec::<f64>());
            }
            for (a, b) in got.to_vec::<f64>().iter().zip(&want) {
                assert!((a - b).abs() < 1e-9, "{a} vs {b}");
            }
        }
    }

    #[test]
    fn a_depthwise_gradient_ignores_what_the_grid_never_reads() {
        // Stride 2 over 6 columns with a 3-wide kernel reads columns 0..5:
        // an infinite last column changes nothing (0 · ∞ would be NaN).
        let (n, c, h, w) = (2, 3, 5, 6);
        let grad = Tensor::from_vec(values(n * c * 2 * 2, 1), &[n, c, 2, 2]);
        let xv = values(n * c * h * w, 2);
        let with_last = |v: f64| {
            let x: Vec<f64> = xv
                .iter()
                .enumerate()
                .map(|(i, &x)| if i % w == w - 1 { v } else { x })
                .collect();
            let x = Tensor::from_vec(x, &[n, c, h, w]);
            conv_weight_grad(&grad, &x, &[3, 3], &[2, 2], &[0, 0], &[1, 1], c as i64)
                .unwrap()
                .to_vec::<f64>()
        };
        let finite = with_last(0.0);
        assert!(finite.iter().all(|v| v.is_finite()));
        // (Summed in another order: the direct kernel takes finite inputs only.)
        for (a, b) in with_last(f64::INFINITY).iter().zip(&finite) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn mismatched_shapes_are_errors() {
        let grad = Tensor::zeros(&[2, 3, 4, 4], DType::F32);
        let x = Tensor::zeros(&[2, 2, 6, 6], DType::F32);
        assert!(conv_weight_grad(&grad, &x, &[3, 3], &[1, 1], &[0, 0], &[1, 1], 1).is_ok());
        assert!(conv_weight_grad(&grad, &x, &[2, 2], &[1, 1], &[0, 0], &[1, 1], 1).is_err());
        assert!(conv_weight_grad(&grad, &x, &[3, 3], &[0, 1], &[0, 0], &[1, 1], 1).is_err());
        assert!(conv_weight_grad(&grad, &x, &[3, 3], &[1, 1], &[0, 0], &[1, 1], 2).is_err());
    }
}
