//! Pooling over the last one to three dims: `max_pool`, `avg_pool`,
//! `adaptive_avg_pool`, `adaptive_max_pool` and `max_unpool`. Each input
//! plane is pooled independently (in parallel); lower ranks run as 3-d with
//! unit leading dims.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::conv::per_dim;
use super::pool_windows::{Windows, pool_inside, pool_inside_indexed};

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

const UNIT: Axis = Axis {
    input: 1,
    output: 1,
    kernel: 1,
    stride: 1,
    pad: 0,
    dilation: 1,
};

impl Axis {
    /// Input positions of output `i`'s window, those in the padding left out.
    fn taps(&self, i: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.kernel).filter_map(move |k| {
            let p = (i * self.stride + k * self.dilation) as isize - self.pad as isize;
            (p >= 0 && (p as usize) < self.input).then_some(p as usize)
        })
    }

    /// The size of window `i` counting padding but not what a ceil-mode
    /// window hangs past the padded input.
    fn with_pad(&self, i: usize) -> usize {
        let start = i * self.stride;
        (start + self.kernel).min(self.input + 2 * self.pad) - start
    }
}

/// The op's name for a rank: `name(base, 2)` is `max_pool2d`.
fn name(base: &str, spatial: usize) -> &'static str {
    const NAMES: [[&str; 3]; 4] = [
        ["max_pool1d", "max_pool2d", "max_pool3d"],
        ["avg_pool1d", "avg_pool2d", "avg_pool3d"],
        [
            "adaptive_avg_pool1d",
            "adaptive_avg_pool2d",
            "adaptive_avg_pool3d",
        ],
        [
            "adaptive_max_pool1d",
            "adaptive_max_pool2d",
            "adaptive_max_pool3d",
        ],
    ];
    let row = [
        "max_pool",
        "avg_pool",
        "adaptive_avg_pool",
        "adaptive_max_pool",
    ]
    .iter()
    .position(|b| *b == base)
    .expect("a pooling op");
    NAMES[row][spatial - 1]
}

/// Planes of an input whose last `spatial` dims are pooled, and those dims
/// lifted to three, after checking the rank.
fn planes(op: &'static str, t: &Tensor, spatial: usize) -> Result<(usize, [usize; 3])> {
    if t.ndim() != spatial + 1 && t.ndim() != spatial + 2 {
        return Err(TensorError::runtime(
            op,
            if spatial == 3 {
                "non-empty 4D or 5D (batch mode) tensor expected for input".to_owned()
            } else {
                format!(
                    "{op}: Expected {}D or {}D input tensor, but got {:?}",
                    spatial + 1,
                    spatial + 2,
                    t.shape()
                )
            },
        ));
    }
    let r = t.ndim();
    let mut dims = [1; 3];
    dims[3 - spatial..].copy_from_slice(&t.shape()[r - spatial..]);
    Ok((t.shape()[..r - spatial].iter().product(), dims))
}

fn axes(op: &'static str, t: &Tensor, w: &Window, spatial: usize) -> Result<[Axis; 3]> {
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
    let (_, dims) = planes(op, t, spatial)?;
    let input = &dims[3 - spatial..];
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
        if op == "avg_pool3d" {
            let [t_, h, w_] = dims;
            return Err(TensorError::runtime(
                op,
                format!(
                    "input image (T: {t_} H: {h} W: {w_}) smaller than kernel size (kT: {} kH: {} kW: {})",
                    kernel[0], kernel[1], kernel[2]
                ),
            ));
        }
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
    let mut lifted = [UNIT; 3];
    lifted[3 - spatial..].copy_from_slice(&out);
    Ok(lifted)
}

/// The input's shape with the last `spatial` dims replaced by `sizes`.
fn shape_with(t: &Tensor, spatial: usize, sizes: &[usize]) -> Vec<usize> {
    let mut shape = t.shape()[..t.ndim() - spatial].to_vec();
    shape.extend(&sizes[3 - spatial..]);
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

/// Every output position of a 3-d grid, `(flat output index, [z, y, x])`.
fn grid(out: [usize; 3]) -> impl Iterator<Item = (usize, [usize; 3])> {
    let [d, h, w] = out;
    (0..d * h * w).map(move |i| (i, [i / (h * w), (i / w) % h, i % w]))
}

/// The larger of `m` and the candidate `(v, index)`; NaN wins, as in PyTorch.
fn better(m: (f64, i64), v: f64, index: usize) -> (f64, i64) {
    if m.0.is_nan() {
        m
    } else if v > m.0 || v.is_nan() || m.1 < 0 {
        (v, index as i64)
    } else {
        m
    }
}

/// Splits `(value, index)` pairs into a values tensor of `dtype` and int64 indices.
fn split(best: Vec<(f64, i64)>, shape: &[usize], dtype: DType) -> (Tensor, Tensor) {
    let values =
        Tensor::from_vec(best.iter().map(|p| p.0).collect::<Vec<f64>>(), shape).to_dtype(dtype);
    let indices = Tensor::from_vec(best.iter().map(|p| p.1).collect::<Vec<i64>>(), shape);
    (values, indices)
}

/// `max_pool1d/2d/3d` with the indices (flat within each plane) of the
/// maxima, in the input's element type for float32/64 (what training and
/// max pooling's backward run), else through f64.
pub fn max_pool(t: &Tensor, w: &Window, spatial: usize) -> Result<(Tensor, Tensor)> {
    let op = name("max_pool", spatial);
    check_float(op, t)?;
    let ax = axes(op, t, w, spatial)?;
    let (n, dims) = planes(op, t, spatial)?;
    let shape = shape_with(t, spatial, &ax.map(|a| a.output));
    match t.dtype() {
        DType::F32 => {
            let (v, i) = max_pool_typed::<f32>(t, &ax, n, dims);
            return Ok((Tensor::from_vec(v, &shape), Tensor::from_vec(i, &shape)));
        }
        DType::F64 => {
            let (v, i) = max_pool_typed::<f64>(t, &ax, n, dims);
            return Ok((Tensor::from_vec(v, &shape), Tensor::from_vec(i, &shape)));
        }
        _ => {}
    }
    let [_, h, width] = dims;
    let outs = ax.map(|a| a.output);
    let plane_in = ax.iter().map(|a| a.input).product();
    let best: Vec<(f64, i64)> = per_plane(t, n, plane_in, outs.iter().product(), |src, dst| {
        for (i, [oz, oy, ox]) in grid(outs) {
            let mut m = (f64::NEG_INFINITY, -1i64);
            for iz in ax[0].taps(oz) {
                for iy in ax[1].taps(oy) {
                    for ix in ax[2].taps(ox) {
                        let at = (iz * h + iy) * width + ix;
                        m = better(m, src[at], at);
                    }
                }
            }
            dst[i] = m;
        }
    });
    Ok(split(best, &shape_with(t, spatial, &outs), t.dtype()))
}

/// The windows of 2-d planes `width` wide when each lies wholly inside its
/// plane (no padding, dilation or ceil overhang): plain loops, no tap
/// filtering.
fn inside_windows(ax: &[Axis; 3], width: usize) -> Option<Windows> {
    let inside = ax[0].output == 1
        && ax[0].kernel == 1
        && ax[1..].iter().all(|a| {
            a.pad == 0 && a.dilation == 1 && (a.output - 1) * a.stride + a.kernel <= a.input
        });
    let (y, x) = (&ax[1], &ax[2]);
    inside.then_some(Windows {
        width,
        y: (y.stride, y.kernel),
        x: (x.stride, x.kernel),
        outputs: x.output,
    })
}

/// Max pooling with indices over planes of `F`: each window's first
/// maximum (NaN wins and stays, as in PyTorch) and its flat position.
fn max_pool_typed<F: num_traits::Float + crate::storage::Element + Send + Sync>(
    t: &Tensor,
    ax: &[Axis; 3],
    n: usize,
    [_, h, width]: [usize; 3],
) -> (Vec<F>, Vec<i64>) {
    let outs = ax.map(|a| a.output);
    let (plane_in, plane_out): (usize, usize) =
        (ax.iter().map(|a| a.input).product(), outs.iter().product());
    let numel = crate::alloc::ensure_numel::<F>(&[n, plane_out]);
    let mut values = vec![F::zero(); numel];
    let mut indices = vec![0i64; numel];
    if plane_out == 0 || plane_in == 0 {
        return (values, indices);
    }
    let inside = inside_windows(ax, width);
    let take = |m: &mut F, at: &mut i64, v: F, pos: usize| {
        // NaN wins and stays, as in PyTorch.
        if !m.is_nan() && (v > *m || v.is_nan() || *at < 0) {
            *m = v;
            *at = pos as i64;
        }
    };
    let pool_plane = |((dst, idx), src): ((&mut [F], &mut [i64]), &[F])| {
        if let Some(windows) = &inside {
            pool_inside_indexed(windows, src, dst, idx);
            return;
        }
        for (i, [oz, oy, ox]) in grid(outs) {
            let mut m = F::neg_infinity();
            let mut at = -1i64;
            for iz in ax[0].taps(oz) {
                for iy in ax[1].taps(oy) {
                    let row = (iz * h + iy) * width;
                    for ix in ax[2].taps(ox) {
                        take(&mut m, &mut at, src[row + ix], row + ix);
                    }
                }
            }
            dst[i] = m;
            idx[i] = at;
        }
    };
    t.with_slice(|x: &[F]| {
        if x.len() >= 1 << 16 {
            values
                .par_chunks_mut(plane_out)
                .zip(indices.par_chunks_mut(plane_out))
                .zip(x.par_chunks(plane_in))
                .for_each(pool_plane);
        } else {
            values
                .chunks_mut(plane_out)
                .zip(indices.chunks_mut(plane_out))
                .zip(x.chunks(plane_in))
                .for_each(pool_plane);
        }
    });
    (values, indices)
}

/// `max_pool1d/2d/3d` without indices, in the input's own float type (what
/// a model's `F.max_pool2d(x, 2)` asks for; [`max_pool`] serves the rest).
pub fn max_pool_values(t: &Tensor, w: &Window, spatial: usize) -> Result<Tensor> {
    fn run<F: num_traits::Float + crate::storage::Element>(
        t: &Tensor,
        ax: &[Axis; 3],
        n: usize,
        [_, h, width]: [usize; 3],
    ) -> Vec<F> {
        let outs = ax.map(|a| a.output);
        let (plane_in, plane_out): (usize, usize) =
            (ax.iter().map(|a| a.input).product(), outs.iter().product());
        t.with_slice(|x: &[F]| {
            let inside = inside_windows(ax, width);
            let pool_plane = |(dst, src): (&mut [F], &[F])| {
                if let Some(windows) = &inside {
                    pool_inside(windows, src, dst);
                    return;
                }
                for (i, [oz, oy, ox]) in grid(outs) {
                    let mut m = F::neg_infinity();
                    'window: for iz in ax[0].taps(oz) {
                        for iy in ax[1].taps(oy) {
                            for ix in ax[2].taps(ox) {
                                let v = src[(iz * h + iy) * width + ix];
                                // NaN wins and stays, as in PyTorch.
                                if v.is_nan() {
                                    m = v;
                                    break 'window;
                                }
                                if v > m {
                                    m = v;
                                }
                            }
                        }
                    }
                    dst[i] = m;
                }
            };
            let mut out = vec![F::zero(); crate::alloc::ensure_numel::<F>(&[n, plane_out])];
            if plane_out > 0 && plane_in > 0 {
                if x.len() >= 1 << 16 {
                    out.par_chunks_mut(plane_out)
                        .zip(x.par_chunks(plane_in))
                        .for_each(pool_plane);
                } else {
                    out.chunks_mut(plane_out)
                        .zip(x.chunks(plane_in))
                        .for_each(pool_plane);
                }
            }
            out
        })
    }
    let op = name("max_pool", spatial);
    check_float(op, t)?;
    if !matches!(t.dtype(), DType::F32 | DType::F64) {
        return max_pool(t, w, spatial).map(|(values, _)| values);
    }
    let ax = axes(op, t, w, spatial)?;
    let (n, dims) = planes(op, t, spatial)?;
    let shape = shape_with(t, spatial, &ax.map(|a| a.output));
    Ok(match t.dtype() {
        DType::F32 => Tensor::from_vec(run::<f32>(t, &ax, n, dims), &shape),
        _ => Tensor::from_vec(run::<f64>(t, &ax, n, dims), &shape),
    })
}

/// `avg_pool1d/2d/3d`.
pub fn avg_pool(
    t: &Tensor,
    w: &Window,
    spatial: usize,
    count_include_pad: bool,
    divisor_override: Option<i64>,
) -> Result<Tensor> {
    let op = name("avg_pool", spatial);
    check_float(op, t)?;
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(op, t.dtype()));
    }
    if divisor_override == Some(0) {
        return Err(TensorError::runtime(op, "divisor must be not zero"));
    }
    let ax = axes(op, t, w, spatial)?;
    let (n, [_, h, width]) = planes(op, t, spatial)?;
    let outs = ax.map(|a| a.output);
    let plane_in = ax.iter().map(|a| a.input).product();
    let out: Vec<f64> = per_plane(
        t,
        n,
        plane_in,
        outs.iter().product(),
        |src, dst: &mut [f64]| {
            for (i, o) in grid(outs) {
                let (mut sum, mut count) = (0.0, 0usize);
                for iz in ax[0].taps(o[0]) {
                    for iy in ax[1].taps(o[1]) {
                        for ix in ax[2].taps(o[2]) {
                            sum += src[(iz * h + iy) * width + ix];
                            count += 1;
                        }
                    }
                }
                let divisor = match divisor_override {
                    Some(d) => d as f64,
                    None if count_include_pad => {
                        (0..3).map(|d| ax[d].with_pad(o[d])).product::<usize>() as f64
                    }
                    None => count as f64,
                };
                dst[i] = sum / divisor;
            }
        },
    );
    Ok(Tensor::from_vec(out, &shape_with(t, spatial, &outs)).to_dtype(t.dtype()))
}

/// The sizes an adaptive pool produces: one per pooled dim (a single value
/// broadcasts; `None` keeps the input's), lifted to three dims.
fn adaptive_sizes(
    op: &'static str,
    input: [usize; 3],
    output: &[Option<i64>],
    spatial: usize,
) -> Result<[usize; 3]> {
    if output.len() != spatial && output.len() != 1 {
        return Err(TensorError::runtime(
            op,
            format!("{op}: output_size must be {spatial}"),
        ));
    }
    let mut sizes = [1; 3];
    for d in 0..spatial {
        let o = output[if output.len() == 1 { 0 } else { d }];
        sizes[3 - spatial + d] = match o {
            None => input[3 - spatial + d],
            Some(o) => usize::try_from(o).map_err(|_| {
                TensorError::runtime(
                    op,
                    format!("{op}: elements of output_size must be greater than or equal to 0 but received {o}"),
                )
            })?,
        };
    }
    Ok(sizes)
}

/// Window `i` of `o` over `n` inputs spans `[floor(i·n/o), ceil((i+1)·n/o))`.
fn adaptive_bounds(i: usize, o: usize, n: usize) -> std::ops::Range<usize> {
    i * n / o..((i + 1) * n).div_ceil(o)
}

/// `adaptive_avg_pool1d/2d/3d`.
pub fn adaptive_avg_pool(t: &Tensor, output: &[Option<i64>], spatial: usize) -> Result<Tensor> {
    let op = name("adaptive_avg_pool", spatial);
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for(
            name("adaptive_avg_pool", spatial.max(2)),
            t.dtype(),
        ));
    }
    let (n, input) = planes(op, t, spatial)?;
    let outs = adaptive_sizes(op, input, output, spatial)?;
    let [_, h, width] = input;
    let out: Vec<f64> = per_plane(
        t,
        n,
        input.iter().product(),
        outs.iter().product(),
        |src, dst: &mut [f64]| {
            for (i, [oz, oy, ox]) in grid(outs) {
                let (zs, ys, xs) = (
                    adaptive_bounds(oz, outs[0], input[0]),
                    adaptive_bounds(oy, outs[1], h),
                    adaptive_bounds(ox, outs[2], width),
                );
                let mut sum = 0.0;
                for z in zs.clone() {
                    for y in ys.clone() {
                        let row = (z * h + y) * width;
                        sum += src[row + xs.start..row + xs.end].iter().sum::<f64>();
                    }
                }
                dst[i] = sum / (zs.len() * ys.len() * xs.len()) as f64;
            }
        },
    );
    Ok(Tensor::from_vec(out, &shape_with(t, spatial, &outs)).to_dtype(t.dtype()))
}

/// `adaptive_max_pool1d/2d/3d`: values and indices (flat within each plane).
pub fn adaptive_max_pool(
    t: &Tensor,
    output: &[Option<i64>],
    spatial: usize,
) -> Result<(Tensor, Tensor)> {
    let op = name("adaptive_max_pool", spatial);
    check_float(op, t)?;
    let (n, input) = planes(op, t, spatial)?;
    let outs = adaptive_sizes(op, input, output, spatial)?;
    let [_, h, width] = input;
    let best: Vec<(f64, i64)> = per_plane(
        t,
        n,
        input.iter().product(),
        outs.iter().product(),
        |src, dst| {
            for (i, [oz, oy, ox]) in grid(outs) {
                let mut m = (f64::NEG_INFINITY, -1i64);
                for z in adaptive_bounds(oz, outs[0], input[0]) {
                    for y in adaptive_bounds(oy, outs[1], h) {
                        for x in adaptive_bounds(ox, outs[2], width) {
                            let at = (z * h + y) * width + x;
                            m = better(m, src[at], at);
                        }
                    }
                }
                dst[i] = m;
            }
        },
    );
    Ok(split(best, &shape_with(t, spatial, &outs), t.dtype()))
}

/// `max_unpool1d/2d/3d`: each value written at its index (flat within its
/// plane) in a zero tensor whose last `spatial` dims are `output`.
pub fn max_unpool(
    t: &Tensor,
    indices: &Tensor,
    output: &[usize],
    spatial: usize,
) -> Result<Tensor> {
    let op = ["max_unpool1d", "max_unpool2d", "max_unpool3d"][spatial - 1];
    if indices.shape() != t.shape() {
        return Err(TensorError::runtime(
            op,
            format!(
                "Expected shape of indices to be same as that of the input tensor ({:?}) but got indices tensor with shape: {:?}",
                t.shape(),
                indices.shape()
            ),
        ));
    }
    if indices.dtype() != DType::I64 {
        return Err(TensorError::runtime(
            op,
            "elements in indices should be type int64",
        ));
    }
    let (n, input) = planes(op, t, spatial)?;
    let plane_in: usize = input.iter().product();
    let plane_out: usize = output.iter().product();
    let index: Vec<i64> = indices.contiguous().to_vec();
    if let Some(&bad) = index.iter().find(|&&i| i < 0 || i as usize >= plane_out) {
        // A 1-d unpool runs as 2-d with a unit width in PyTorch's message.
        let sizes = if spatial == 1 {
            format!("{}x1", output[0])
        } else {
            output
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        return Err(TensorError::runtime(
            op,
            format!("Found an invalid max index: {bad} (output volumes are of size {sizes})"),
        ));
    }
    let mut out = vec![0.0f64; crate::alloc::ensure_numel::<f64>(&[n, plane_out])];
    let values: Vec<f64> = t.to_vec();
    for p in 0..n {
        for k in 0..plane_in {
            out[p * plane_out + index[p * plane_in + k] as usize] = values[p * plane_in + k];
        }
    }
    let mut shape = t.shape()[..t.ndim() - spatial].to_vec();
    shape.extend(output);
    Ok(Tensor::from_vec(out, &shape).to_dtype(t.dtype()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Of equal values the first in the window wins, as in PyTorch: its
    /// 2×2 pools of signed zeros give -0, 0, -0 here.
    #[test]
    fn two_by_two_max_pool_keeps_the_first_of_equal_zeros() {
        let data = [
            -1.0f32, -0.0, 0.0, -5.0, 0.0, -0.0, -0.0, -1.0, -2.0, -3.0, -0.0, 0.0,
        ];
        let t = Tensor::from_vec(data.to_vec(), &[3, 1, 2, 2]);
        let w = Window {
            kernel: &[2],
            stride: &[],
            padding: &[0],
            dilation: &[1],
            ceil_mode: false,
        };
        let signs: Vec<bool> = max_pool_values(&t, &w, 2)
            .unwrap()
            .to_vec::<f32>()
            .iter()
            .map(|v| v.is_sign_negative())
            .collect();
        assert_eq!(signs, [true, false, true]);
    }

    /// The indexed pool's indices point at its values, in the typed paths
    /// (float32, windows inside the plane or not) as in the generic one
    /// (float16), on distinct values every dtype holds exactly.
    #[test]
    fn indexed_max_pool_points_at_its_maxima_in_every_path() {
        let data: Vec<f32> = (0..2 * 7 * 6).map(|i| ((i * 37) % 84) as f32).collect();
        let t = Tensor::from_vec(data.clone(), &[2, 1, 7, 6]);
        for (kernel, stride, padding) in
            [(&[2i64][..], &[2i64][..], &[0i64][..]), (&[3], &[2], &[1])]
        {
            let w = Window {
                kernel,
                stride,
                padding,
                dilation: &[1],
                ceil_mode: false,
            };
            let (v32, i32_) = max_pool(&t, &w, 2).unwrap();
            let (v16, i16_) = max_pool(&t.to_dtype(DType::F16), &w, 2).unwrap();
            assert_eq!(i32_.to_vec::<i64>(), i16_.to_vec::<i64>());
            assert_eq!(
                v32.to_vec::<f32>(),
                v16.to_dtype(DType::F32).to_vec::<f32>()
            );
            let plane = 42;
            for (k, (&v, &i)) in v32
                .to_vec::<f32>()
                .iter()
                .zip(&i32_.to_vec::<i64>())
                .enumerate()
            {
                let batch = k / (v32.numel() / 2);
                assert_eq!(data[batch * plane + i as usize], v);
            }
        }
    }

    /// Ties and NaNs in windows inside the plane (the SIMD kernel) pick
    /// what the generic path picks: the first of equal values, the first
    /// NaN, in PyTorch's tap order.
    #[test]
    fn indexed_kernel_breaks_ties_and_keeps_nans_as_the_generic_path() {
        let mut data: Vec<f32> = (0..3 * 8 * 9)
            .map(|i| ((i * 7) % 5) as f32 - 2.0)
            .map(|v: f32| v.max(0.0))
            .collect();
        for at in [3, 40, 41, 100, 150] {
            data[at] = f32::NAN;
        }
        let t = Tensor::from_vec(data, &[3, 1, 8, 9]);
        for (kernel, stride) in [
            (&[2i64, 2][..], &[2i64, 2][..]),
            (&[3, 3], &[1, 1]),
            (&[3, 2], &[2, 1]),
        ] {
            let w = Window {
                kernel,
                stride,
                padding: &[0],
                dilation: &[1],
                ceil_mode: false,
            };
            let (v, i) = max_pool(&t, &w, 2).unwrap();
            let (v16, i16_) = max_pool(&t.to_dtype(DType::F16), &w, 2).unwrap();
            assert_eq!(i.to_vec::<i64>(), i16_.to_vec::<i64>(), "{kernel:?}");
            let same = v
                .to_vec::<f32>()
                .iter()
                .zip(v16.to_dtype(DType::F32).to_vec::<f32>())
                .all(|(a, b)| *a == b || a.is_nan() && b.is_nan());
            assert!(same, "{kernel:?}");
        }
    }

    /// The values-only pool agrees with the indexed one (padding, dilation,
    /// ceil mode, NaN, both float types, parallel and not).
    #[test]
    fn values_only_max_pool_matches_the_indexed_one() {
        // kernel, stride, padding, dilation, ceil mode
        type Case = (
            &'static [i64],
            &'static [i64],
            &'static [i64],
            &'static [i64],
            bool,
        );
        let windows: [Case; 5] = [
            (&[2], &[], &[0], &[1], false),
            (&[3, 2], &[2, 3], &[0], &[1], false),
            (&[3], &[2], &[1], &[1], true),
            (&[3, 2], &[1, 2], &[1, 0], &[2, 1], false),
            (&[2], &[1], &[1], &[1], true),
        ];
        for shape in [[1usize, 3, 7, 9], [2, 16, 64, 66]] {
            let n: usize = shape.iter().product();
            let mut data: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1009) as f32 - 500.0).collect();
            data[5] = f32::NAN;
            data[n / 2 + 1] = f32::NAN;
            data[n / 3] = f32::NEG_INFINITY;
            let t = Tensor::from_vec(data, &shape);
            for (kernel, stride, padding, dilation, ceil_mode) in windows {
                let w = Window {
                    kernel,
                    stride,
                    padding,
                    dilation,
                    ceil_mode,
                };
                for x in [t.clone(), t.to_dtype(DType::F64)] {
                    let fast = max_pool_values(&x, &w, 2).unwrap();
                    let (slow, _) = max_pool(&x, &w, 2).unwrap();
                    assert_eq!(fast.shape(), slow.shape());
                    let (a, b) = (fast.to_vec::<f64>(), slow.to_vec::<f64>());
                    assert!(
                        a.iter()
                            .zip(&b)
                            .all(|(x, y)| x == y || x.is_nan() && y.is_nan()),
                        "{shape:?} {kernel:?} {stride:?}"
                    );
                }
            }
        }
    }
}
