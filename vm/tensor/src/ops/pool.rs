//! Pooling over the last one or two dims: `max_pool`, `avg_pool` and
//! `adaptive_avg_pool`. Each input plane is pooled independently (in parallel).

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::conv::per_dim;

/// Window parameters shared by max and average pooling.
pub struct Window<'a> {
    pub kernel: &'a [i64],
    /// Empty means "the kernel size", as PyTorch's `stride=None`.
    pub stride: &'a [i64],
    pub padding: &'a [i64],
    pub dilation: &'a [i64],
    pub ceil_mode: bool,
}

/// The windows of one spatial dim.
#[derive(Clone, Copy, Debug)]
struct Axis {
    input: usize,
    output: usize,
    kernel: usize,
    stride: usize,
    pad: usize,
    dilation: usize,
}

impl Axis {
    /// Input positions of output `i`'s window, those in the padding left out.
    fn taps(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.kernel).filter_map(move |k| {
            let p = (i * self.stride + k * self.dilation) as isize - self.pad as isize;
            (p >= 0 && (p as usize) < self.input).then_some(p as usize)
        })
    }
}

/// Planes of an input whose last `spatial` dims are pooled: `(planes, h, w)`
/// with a unit height for 1-d pooling, after checking the rank.
fn planes(op: &'static str, t: &Tensor, spatial: usize) -> Result<(usize, [usize; 2])> {
    if t.ndim() != spatial + 1 && t.ndim() != spatial + 2 {
        return Err(TensorError::runtime(
            op,
            format!(
                "{op}: Expected {}D or {}D input tensor, but got {:?}",
                spatial + 1,
                spatial + 2,
                t.shape()
            ),
        ));
    }
    let r = t.ndim();
    let hw = if spatial == 1 {
        [1, t.shape()[r - 1]]
    } else {
        [t.shape()[r - 2], t.shape()[r - 1]]
    };
    Ok((t.shape()[..r - spatial].iter().product(), hw))
}

fn axes(op: &'static str, t: &Tensor, w: &Window, spatial: usize) -> Result<[Axis; 2]> {
    let kernel = per_dim(op, "kernel_size", w.kernel, spatial)?;
    let stride = if w.stride.is_empty() {
        kernel.clone()
    } else {
        per_dim(op, "stride", w.stride, spatial)?
    };
    let pad = per_dim(op, "padding", w.padding, spatial)?;
    let dilation = per_dim(op, "dilation", w.dilation, spatial)?;
    if kernel.contains(&0) || stride.contains(&0) || dilation.contains(&0) {
        return Err(TensorError::runtime(
            op,
            format!("{op}: kernel_size, stride and dilation must be greater than zero"),
        ));
    }
    let (_, hw) = planes(op, t, spatial)?;
    let input = if spatial == 1 {
        vec![hw[1]]
    } else {
        hw.to_vec()
    };
    let mut out = Vec::new();
    for d in 0..spatial {
        if pad[d] * 2 > kernel[d] {
            return Err(TensorError::runtime(
                op,
                format!(
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    pad[d], kernel[d], dilation[d]
                ),
            ));
        }
        let span = dilation[d] * (kernel[d] - 1) + 1;
        let room = (input[d] + 2 * pad[d]) as isize - span as isize;
        let mut o = if room < 0 {
            0
        } else if w.ceil_mode {
            (room as usize).div_ceil(stride[d]) + 1
        } else {
            room as usize / stride[d] + 1
        };
        // The last window must start inside the input or its left padding.
        if w.ceil_mode && o > 0 && (o - 1) * stride[d] >= input[d] + pad[d] {
            o -= 1;
        }
        out.push(Axis {
            input: input[d],
            output: o,
            kernel: kernel[d],
            stride: stride[d],
            pad: pad[d],
            dilation: dilation[d],
        });
    }
    if out.iter().any(|a| a.output == 0) {
        let sizes = |f: fn(&Axis) -> usize| {
            out.iter()
                .map(f)
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        let channels = if t.ndim() > spatial {
            t.shape()[t.ndim() - spatial - 1]
        } else {
            1
        };
        return Err(TensorError::runtime(
            op,
            format!(
                "Given input size: ({channels}x{}). Calculated output size: ({channels}x{}). Output size is too small",
                sizes(|a| a.input),
                sizes(|a| a.output)
            ),
        ));
    }
    let unit = Axis {
        input: 1,
        output: 1,
        kernel: 1,
        stride: 1,
        pad: 0,
        dilation: 1,
    };
    Ok(if spatial == 1 {
        [unit, out[0]]
    } else {
        [out[0], out[1]]
    })
}

/// The input's shape with the last `spatial` dims replaced by the axes' outputs.
fn out_shape(t: &Tensor, spatial: usize, axes: &[Axis; 2]) -> Vec<usize> {
    let mut shape = t.shape()[..t.ndim() - spatial].to_vec();
    shape.extend(if spatial == 1 {
        vec![axes[1].output]
    } else {
        vec![axes[0].output, axes[1].output]
    });
    shape
}

/// Runs `f` on each input plane (as f64) to fill the matching output plane.
fn per_plane<U: Copy + Default + Send + Sync>(
    t: &Tensor,
    planes: usize,
    plane_in: usize,
    plane_out: usize,
    f: impl Fn(&[f64], &mut [U]) + Sync + Send,
) -> Vec<U> {
    let x: Vec<f64> = t.to_vec();
    let mut out = vec![U::default(); crate::alloc::ensure_numel::<U>(&[planes, plane_out])];
    if plane_out > 0 {
        out.par_chunks_mut(plane_out)
            .zip(x.par_chunks(plane_in.max(1)))
            .for_each(|(dst, src)| f(src, dst));
    }
    out
}

fn check_float(op: &'static str, t: &Tensor) -> Result<()> {
    if t.dtype() == DType::Bool {
        return Err(TensorError::not_implemented_for(op, DType::Bool));
    }
    Ok(())
}

/// `max_pool1d`/`max_pool2d`; the indices (flat within each plane) come too.
pub fn max_pool(t: &Tensor, w: &Window, spatial: usize) -> Result<(Tensor, Tensor)> {
    let op = if spatial == 1 {
        "max_pool1d"
    } else {
        "max_pool2d"
    };
    check_float(op, t)?;
    let ax = axes(op, t, w, spatial)?;
    let (n, [h, width]) = planes(op, t, spatial)?;
    let plane_out = ax[0].output * ax[1].output;
    let best: Vec<(f64, i64)> =
        per_plane(t, n, h * width, plane_out, |src, dst: &mut [(f64, i64)]| {
            for oy in 0..ax[0].output {
                for ox in 0..ax[1].output {
                    let mut m = (f64::NEG_INFINITY, -1i64);
                    for iy in ax[0].taps(oy) {
                        for ix in ax[1].taps(ox) {
                            let v = src[iy * width + ix];
                            // NaN wins, as in PyTorch.
                            if v > m.0 || v.is_nan() || m.1 < 0 {
                                m = (v, (iy * width + ix) as i64);
                                if v.is_nan() {
                                    break;
                                }
                            }
                        }
                    }
                    dst[oy * ax[1].output + ox] = m;
                }
            }
        });
    let shape = out_shape(t, spatial, &ax);
    let values = Tensor::from_vec(best.iter().map(|p| p.0).collect::<Vec<f64>>(), &shape)
        .to_dtype(t.dtype());
    let indices = Tensor::from_vec(best.iter().map(|p| p.1).collect::<Vec<i64>>(), &shape);
    Ok((values, indices))
}

/// `avg_pool1d`/`avg_pool2d`.
pub fn avg_pool(
    t: &Tensor,
    w: &Window,
    spatial: usize,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    let op = if spatial == 1 {
        "avg_pool1d"
    } else {
        "avg_pool2d"
    };
    check_float(op, t)?;
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(op, t.dtype()));
    }
    if divisor_override == Some(0) {
        return Err(TensorError::runtime(op, "divisor must be not zero"));
    }
    let ax = axes(op, t, w, spatial)?;
    let (n, [h, width]) = planes(op, t, spatial)?;
    let plane_out = ax[0].output * ax[1].output;
    let out: Vec<f64> = per_plane(t, n, h * width, plane_out, |src, dst: &mut [f64]| {
        for oy in 0..ax[0].output {
            for ox in 0..ax[1].output {
                let mut sum = 0.0;
                let mut count = 0usize;
                for iy in ax[0].taps(oy) {
                    for ix in ax[1].taps(ox) {
                        sum += src[iy * width + ix];
                        count += 1;
                    }
                }
                let divisor = match divisor_override {
                    Some(d) => d as f64,
                    None if count_include_pad => [0, 1]
                        .iter()
                        .map(|&d| window_with_pad(&ax[d], if d == 0 { oy } else { ox }))
                        .product::<usize>() as f64,
                    None => count as f64,
                };
                dst[oy * ax[1].output + ox] = sum / divisor;
            }
        }
    });
    Ok(Tensor::from_vec(out, &out_shape(t, spatial, &ax)).to_dtype(t.dtype()))
}

/// The size of window `i` counting padding but not what a ceil-mode window
/// hangs past the padded input.
fn window_with_pad(a: &Axis, i: usize) -> usize {
    let start = i * a.stride;
    let end = (start + a.kernel).min(a.input + 2 * a.pad);
    end - start
}

/// `adaptive_avg_pool1d`/`adaptive_avg_pool2d`; `None` output sizes keep the input's.
pub fn adaptive_avg_pool(t: &Tensor, output: &[Option<i64>], spatial: usize) -> Result<Tensor> {
    let op = if spatial == 1 {
        "adaptive_avg_pool1d"
    } else {
        "adaptive_avg_pool2d"
    };
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(
            "adaptive_avg_pool2d",
            t.dtype(),
        ));
    }
    let (n, [h, width]) = planes(op, t, spatial)?;
    let input = if spatial == 1 {
        vec![width]
    } else {
        vec![h, width]
    };
    if output.len() != spatial && output.len() != 1 {
        return Err(TensorError::runtime(
            op,
            format!("{op}: output_size must be {spatial}"),
        ));
    }
    let mut sizes = Vec::new();
    for d in 0..spatial {
        let o = output[if output.len() == 1 { 0 } else { d }];
        sizes.push(match o {
            None => input[d],
            Some(o) => usize::try_from(o).map_err(|_| TensorError::runtime(op, format!("{op}: elements of output_size must be greater than or equal to 0 but received {o}")))?,
        });
    }
    let (oh, ow, ih) = if spatial == 1 {
        (1, sizes[0], 1)
    } else {
        (sizes[0], sizes[1], h)
    };
    // Window `i` of `o` over `n` inputs spans [floor(i·n/o), ceil((i+1)·n/o)).
    let bounds = |i: usize, o: usize, n: usize| (i * n / o, ((i + 1) * n).div_ceil(o));
    let out: Vec<f64> = per_plane(t, n, h * width, oh * ow, |src, dst: &mut [f64]| {
        for oy in 0..oh {
            let (y0, y1) = bounds(oy, oh, ih);
            for ox in 0..ow {
                let (x0, x1) = bounds(ox, ow, width);
                let mut sum = 0.0;
                for y in y0..y1 {
                    sum += src[y * width + x0..y * width + x1].iter().sum::<f64>();
                }
                dst[oy * ow + ox] = sum / ((y1 - y0) * (x1 - x0)) as f64;
            }
        }
    });
    let mut shape = t.shape()[..t.ndim() - spatial].to_vec();
    shape.extend(&sizes);
    Ok(Tensor::from_vec(out, &shape).to_dtype(t.dtype()))
}
