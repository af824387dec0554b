//! Convolution (`conv1d`, `conv2d`: stride, padding incl. 'same'/'valid',
//! dilation, groups) as im2col + gemm. A 1-d convolution runs as a 2-d one
//! over a unit height.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::Layout;
use crate::storage::Element;
use crate::tensor::Tensor;

use super::linalg::{Matrix, Real, gemm_into};

/// How a convolution pads its input.
#[derive(Clone, Debug, PartialEq)]
pub enum Padding {
    /// The same amount on both sides of each spatial dim (one value broadcasts).
    Explicit(Vec<i64>),
    /// Output as large as the input (stride 1 only); odd totals pad more after.
    Same,
    Valid,
}

impl Padding {
    pub fn parse(s: &str) -> Result<Padding> {
        match s {
            "same" => Ok(Padding::Same),
            "valid" => Ok(Padding::Valid),
            _ => Err(TensorError::runtime(
                "conv",
                format!("Invalid padding string: '{s}'"),
            )),
        }
    }
}

/// Spatial parameters of a 2-d convolution, in (height, width) order.
struct Geometry {
    kernel: [usize; 2],
    stride: [usize; 2],
    /// `[dim] = (before, after)`.
    pad: [(usize, usize); 2],
    dilation: [usize; 2],
    input: [usize; 2],
    output: [usize; 2],
}

/// `param` as one value per spatial dim (a single value broadcasts).
pub fn per_dim(op: &'static str, name: &str, param: &[i64], dims: usize) -> Result<Vec<usize>> {
    let v = match param {
        [x] => vec![*x; dims],
        _ if param.len() == dims => param.to_vec(),
        _ => {
            return Err(TensorError::runtime(
                op,
                format!(
                    "expected {name} to be a single integer value or a list of {dims} values to match the convolution dimensions, but got {name}={param:?}"
                ),
            ));
        }
    };
    v.into_iter()
        .map(|x| {
            usize::try_from(x).map_err(|_| {
                TensorError::runtime(op, format!("non-positive {name} is not supported"))
            })
        })
        .collect()
}

/// `conv1d` (`spatial = 1`) or `conv2d` (`spatial = 2`), batched or not.
#[allow(clippy::too_many_arguments)] // PyTorch's conv parameters, one for one
pub fn conv(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &Padding,
    dilation: &[i64],
    groups: i64,
    spatial: usize,
) -> Result<Tensor> {
    let op = if spatial == 1 { "conv1d" } else { "conv2d" };
    let batched = input.ndim() == spatial + 2;
    if !batched && input.ndim() != spatial + 1 {
        return Err(TensorError::runtime(
            op,
            format!(
                "Expected {}D (unbatched) or {}D (batched) input to {op}, but got input of size: {:?}",
                spatial + 1,
                spatial + 2,
                input.shape()
            ),
        ));
    }
    if weight.ndim() != spatial + 2 {
        return Err(TensorError::runtime(
            op,
            "weight should have at least three dimensions",
        ));
    }
    if input.dtype() != weight.dtype() {
        return Err(TensorError::runtime(
            op,
            format!(
                "expected scalar type {} but found {}",
                legacy_name(input.dtype()),
                legacy_name(weight.dtype())
            ),
        ));
    }
    let stride = per_dim(op, "stride", stride, spatial)?;
    let dilation = per_dim(op, "dilation", dilation, spatial)?;
    if stride.contains(&0) {
        return Err(TensorError::runtime(
            op,
            "non-positive stride is not supported",
        ));
    }
    let groups = usize::try_from(groups)
        .ok()
        .filter(|&g| g > 0)
        .ok_or_else(|| TensorError::runtime(op, "non-positive groups is not supported"))?;
    let x = if batched {
        input.clone()
    } else {
        input.with_layout(input.layout().unsqueeze(0))
    };
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let (o, cg) = (weight.shape()[0], weight.shape()[1]);
    if o % groups != 0 {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{:?}] instead",
                weight.shape()
            ),
        ));
    }
    if c != cg * groups {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given groups={groups}, weight of size {:?}, expected input{:?} to have {} channels, but got {c} channels instead",
                weight.shape(),
                x.shape(),
                cg * groups
            ),
        ));
    }
    if let Some(b) = bias
        && (b.ndim() != 1 || b.numel() != o)
    {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given weight of size {:?}, expected bias to be 1-dimensional with {o} elements, but got bias of size {:?} instead",
                weight.shape(),
                b.shape()
            ),
        ));
    }
    let kernel_sizes = &weight.shape()[2..];
    let in_sizes = &x.shape()[2..];
    let pad: Vec<(usize, usize)> = match padding {
        Padding::Valid => vec![(0, 0); spatial],
        Padding::Same => {
            if stride.iter().any(|&s| s != 1) {
                return Err(TensorError::runtime(
                    op,
                    "padding='same' is not supported for strided convolutions",
                ));
            }
            (0..spatial)
                .map(|d| {
                    let total = dilation[d] * (kernel_sizes[d] - 1);
                    (total / 2, total - total / 2)
                })
                .collect()
        }
        Padding::Explicit(p) => per_dim(op, "padding", p, spatial)?
            .into_iter()
            .map(|p| (p, p))
            .collect(),
    };
    let padded: Vec<usize> = (0..spatial)
        .map(|d| in_sizes[d] + pad[d].0 + pad[d].1)
        .collect();
    let span: Vec<usize> = (0..spatial)
        .map(|d| dilation[d] * (kernel_sizes[d].max(1) - 1) + 1)
        .collect();
    if (0..spatial).any(|d| padded[d] < span[d]) {
        let join = |v: &[usize]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(" x ")
        };
        return Err(TensorError::runtime(
            op,
            format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                join(&padded),
                join(&span)
            ),
        ));
    }
    // Lift to two spatial dims: a 1-d convolution is a 2-d one of height 1.
    let lift = |v: &[usize], unit: usize| {
        if spatial == 1 {
            [unit, v[0]]
        } else {
            [v[0], v[1]]
        }
    };
    let g = Geometry {
        kernel: lift(kernel_sizes, 1),
        stride: lift(&stride, 1),
        pad: if spatial == 1 {
            [(0, 0), pad[0]]
        } else {
            [pad[0], pad[1]]
        },
        dilation: lift(&dilation, 1),
        input: lift(in_sizes, 1),
        output: [0, 0],
    };
    let output = [0, 1].map(|d| {
        (g.input[d] + g.pad[d].0 + g.pad[d].1 - g.dilation[d] * (g.kernel[d] - 1) - 1) / g.stride[d]
            + 1
    });
    let g = Geometry { output, ..g };
    let dtype = x.dtype();
    let compute = if dtype.is_float() { dtype } else { DType::F64 };
    let xs = x.to_dtype(compute).contiguous();
    let ws = weight.to_dtype(compute).contiguous();
    let bs = bias.map(|b| b.to_dtype(compute).contiguous());
    let mut out = match compute {
        DType::F32 => conv2d_dense::<f32>(&xs, &ws, bs.as_ref(), &g, n, c, o, groups),
        _ => conv2d_dense::<f64>(&xs, &ws, bs.as_ref(), &g, n, c, o, groups),
    };
    if compute != dtype {
        out = out.to_dtype(dtype);
    }
    let mut shape = vec![n, o];
    shape.extend(if spatial == 1 {
        vec![g.output[1]]
    } else {
        g.output.to_vec()
    });
    if !batched {
        shape.remove(0);
    }
    Ok(out.with_layout(Layout::contiguous(&shape)))
}

/// The convolution of dense NCHW `x` with dense OIHW `w`, as an N×O×OH×OW tensor.
#[allow(clippy::too_many_arguments)]
fn conv2d_dense<T: Real>(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    g: &Geometry,
    n: usize,
    c: usize,
    o: usize,
    groups: usize,
) -> Tensor {
    let (sx, sw) = (x.read(), w.read());
    let (xs, ws) = (
        T::slice(&sx).expect("x is T"),
        T::slice(&sw).expect("w is T"),
    );
    let bias: Option<Vec<T>> = bias.map(|b| b.to_vec());
    let plane_in = g.input[0] * g.input[1];
    let plane_out = g.output[0] * g.output[1];
    let (cg, og) = (c / groups, o / groups);
    let patch = cg * g.kernel[0] * g.kernel[1];
    // A 1×1 kernel with unit stride and no padding reads the input as is.
    let direct = g.kernel == [1, 1] && g.stride == [1, 1] && g.pad == [(0, 0), (0, 0)];
    let mut out = vec![T::default(); crate::alloc::ensure_numel::<T>(&[n, o, plane_out])];
    if plane_out == 0 || n == 0 {
        return Tensor::from_vec(out, &[n, o, g.output[0], g.output[1]]);
    }
    // Split the batch across threads when there are enough images; else let
    // gemm use the threads for one image.
    let across_batch = n >= rayon::current_num_threads();
    let image = |(b, dst): (usize, &mut [T])| {
        let mut col = if direct {
            Vec::new()
        } else {
            vec![T::default(); crate::alloc::ensure_numel::<T>(&[patch, plane_out])]
        };
        for grp in 0..groups {
            let src = &xs[(b * c + grp * cg) * plane_in..(b * c + (grp + 1) * cg) * plane_in];
            let rhs = if direct {
                src
            } else {
                im2col(src, cg, g, &mut col, !across_batch);
                &col
            };
            let lhs = Matrix {
                data: &ws[grp * og * patch..(grp + 1) * og * patch],
                row_stride: patch,
                col_stride: 1,
            };
            let rhs = Matrix {
                data: rhs,
                row_stride: plane_out,
                col_stride: 1,
            };
            let block = &mut dst[grp * og * plane_out..(grp + 1) * og * plane_out];
            gemm_into(
                og,
                plane_out,
                patch,
                block,
                lhs,
                rhs,
                !across_batch && og * plane_out * patch >= 1 << 18,
            );
        }
        if let Some(bias) = &bias {
            for (ch, plane) in dst.chunks_mut(plane_out).enumerate() {
                plane.iter_mut().for_each(|v| *v = *v + bias[ch]);
            }
        }
    };
    if across_batch {
        out.par_chunks_mut(o * plane_out)
            .enumerate()
            .for_each(image);
    } else {
        out.chunks_mut(o * plane_out).enumerate().for_each(image);
    }
    Tensor::from_vec(out, &[n, o, g.output[0], g.output[1]])
}

/// Unfolds `channels` input planes into a (channels·kh·kw) × (oh·ow) matrix
/// whose rows are the input values each kernel tap sees (zero in the padding).
fn im2col<T: Element>(src: &[T], channels: usize, g: &Geometry, col: &mut [T], parallel: bool) {
    let [h, w] = g.input;
    let [oh, ow] = g.output;
    let taps = g.kernel[0] * g.kernel[1];
    let row = |(r, out): (usize, &mut [T])| {
        let (ch, tap) = (r / taps, r % taps);
        let (ki, kj) = (tap / g.kernel[1], tap % g.kernel[1]);
        let plane = &src[ch * h * w..(ch + 1) * h * w];
        let x0 = (kj * g.dilation[1]) as isize - g.pad[1].0 as isize;
        // Output columns whose input column lies inside the row: [lo, hi).
        let first_inside = |x: isize| {
            if x >= 0 {
                0
            } else {
                ((-x) as usize).div_ceil(g.stride[1])
            }
        };
        let lo = first_inside(x0).min(ow);
        let hi = if (w as isize) <= x0 {
            0
        } else {
            ((w as isize - x0) as usize).div_ceil(g.stride[1]).min(ow)
        }
        .max(lo);
        for (y, out_row) in out.chunks_mut(ow).enumerate() {
            let iy = (y * g.stride[0] + ki * g.dilation[0]) as isize - g.pad[0].0 as isize;
            if iy < 0 || iy >= h as isize {
                out_row.fill(T::default());
                continue;
            }
            let line = &plane[iy as usize * w..(iy as usize + 1) * w];
            out_row[..lo].fill(T::default());
            out_row[hi..].fill(T::default());
            let start = (x0 + (lo * g.stride[1]) as isize) as usize;
            if g.stride[1] == 1 {
                out_row[lo..hi].copy_from_slice(&line[start..start + (hi - lo)]);
            } else {
                for (v, &x) in out_row[lo..hi]
                    .iter_mut()
                    .zip(line[start..].iter().step_by(g.stride[1]))
                {
                    *v = x;
                }
            }
        }
    };
    let col = &mut col[..channels * taps * oh * ow];
    if parallel {
        col.par_chunks_mut(oh * ow).enumerate().for_each(row);
    } else {
        col.chunks_mut(oh * ow).enumerate().for_each(row);
    }
}
