//! Convolution over 1 to 3 spatial dims (stride, padding incl.
//! 'same'/'valid', dilation, groups) as im2col + gemm (directly when each
//! output channel reads one input channel), and transposed
//! convolution (output_padding too) as gemm + col2im. Lower ranks run as
//! 3-d with unit leading dims.

mod depthwise;
pub mod fold;
mod scratch;
mod tbc;
mod unfold;
mod weight_grad;

pub use tbc::conv_tbc;
pub use weight_grad::conv_weight_grad;

use rayon::prelude::*;

use unfold::{Geometry, col2im, im2col};

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::Layout;
use crate::tensor::Tensor;

use super::linalg::{Matrix, PARALLEL_FLOPS, Real, gemm_into};

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
                let adjective = if name == "padding" {
                    "negative"
                } else {
                    "non-positive"
                };
                TensorError::runtime(op, format!("{adjective} {name} is not supported"))
            })
        })
        .collect()
}

/// Direction of a convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    Forward,
    Transposed,
}

fn op_name(spatial: usize, direction: Direction) -> &'static str {
    const FORWARD: [&str; 3] = ["conv1d", "conv2d", "conv3d"];
    const TRANSPOSED: [&str; 3] = ["conv_transpose1d", "conv_transpose2d", "conv_transpose3d"];
    match direction {
        Direction::Forward => FORWARD[spatial - 1],
        Direction::Transposed => TRANSPOSED[spatial - 1],
    }
}

/// `v` lifted to three spatial dims, `unit` in front.
fn lift(v: &[usize], unit: usize) -> [usize; 3] {
    let mut out = [unit; 3];
    out[3 - v.len()..].copy_from_slice(v);
    out
}

/// How PyTorch's messages name per-dim values: `dilation_height: 1, dilation_width: 0`
/// (1-d convolutions run as 2-d, so they name a height too).
fn named_dims(name: &str, v: &[usize], sep: &str) -> String {
    let names = ["depth", "height", "width"];
    let v = if v.len() == 1 {
        vec![1, v[0]]
    } else {
        v.to_vec()
    };
    let names = &names[3 - v.len()..];
    names
        .iter()
        .zip(&v)
        .map(|(n, x)| format!("{name}_{n}: {x}"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// The validated operands of a convolution in either direction.
struct Operands {
    x: Tensor,
    batched: bool,
    stride: Vec<usize>,
    dilation: Vec<usize>,
    groups: usize,
}

/// Checks rank, dtype, stride, dilation and groups, which both directions share.
fn operands(
    op: &'static str,
    input: &Tensor,
    weight: &Tensor,
    stride: &[i64],
    dilation: &[i64],
    groups: i64,
    spatial: usize,
) -> Result<Operands> {
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
    if !weight.shape()[0].is_multiple_of(groups) {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but got weight of size [{:?}] instead",
                weight.shape()
            ),
        ));
    }
    let x = if batched {
        input.clone()
    } else {
        input.with_layout(input.layout().unsqueeze(0))
    };
    Ok(Operands {
        x,
        batched,
        stride,
        dilation,
        groups,
    })
}

/// The bias's shape, and its dtype when `same_dtype` (PyTorch's direct
/// convolutions require the input's; its string-padding and 1-d/2-d
/// transposed paths add a bias of another dtype).
fn check_bias(
    op: &'static str,
    bias: Option<&Tensor>,
    weight: &Tensor,
    channels: usize,
    transposed: &str,
    same_dtype: bool,
) -> Result<()> {
    match bias {
        Some(b) if same_dtype && b.dtype() != weight.dtype() => Err(TensorError::runtime(
            op,
            format!(
                "Input type ({}) and bias type ({}) should be the same",
                weight.dtype().cpp_name(),
                b.dtype().cpp_name()
            ),
        )),
        Some(b) if b.ndim() != 1 || b.numel() != channels => Err(TensorError::runtime(
            op,
            format!(
                "Given {transposed}weight of size {:?}, expected bias to be 1-dimensional with {channels} elements, but got bias of size {:?} instead",
                weight.shape(),
                b.shape()
            ),
        )),
        _ => Ok(()),
    }
}

/// Runs `f` in the dtype the kernels compute in (integers in f64) and
/// shapes the result `[n, channels, spatial…]`, unbatched if the input was.
fn compute(
    x: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    shape: Vec<usize>,
    batched: bool,
    f32_kernel: impl FnOnce(&Tensor, &Tensor, Option<&Tensor>) -> Tensor,
    f64_kernel: impl FnOnce(&Tensor, &Tensor, Option<&Tensor>) -> Tensor,
) -> Tensor {
    let dtype = x.dtype();
    // Half precision computes in float32, integers in float64.
    let compute = match dtype {
        d if d.is_narrow() && d.is_float() => d.compute(),
        d if d.is_float() => d,
        _ => DType::F64,
    };
    let xs = x.to_dtype(compute).contiguous();
    let ws = weight.to_dtype(compute).contiguous();
    let bs = bias.map(|b| b.to_dtype(compute).contiguous());
    let mut out = match compute {
        DType::F32 => f32_kernel(&xs, &ws, bs.as_ref()),
        _ => f64_kernel(&xs, &ws, bs.as_ref()),
    };
    if compute != dtype {
        out = out.to_dtype(dtype);
    }
    let mut shape = shape;
    if !batched {
        shape.remove(0);
    }
    out.with_layout(Layout::contiguous(&shape))
}

/// `conv1d`/`conv2d`/`conv3d` (`spatial` = 1, 2, 3), batched or not.
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
    let op = op_name(spatial, Direction::Forward);
    let Operands {
        x,
        batched,
        stride,
        dilation,
        groups,
    } = operands(op, input, weight, stride, dilation, groups, spatial)?;
    if dilation.contains(&0) {
        return Err(TensorError::runtime(
            op,
            format!("dilation should be greater than zero, but got {dilation:?}"),
        ));
    }
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let (o, cg) = (weight.shape()[0], weight.shape()[1]);
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
    check_bias(
        op,
        bias,
        weight,
        o,
        "",
        matches!(padding, Padding::Explicit(_)),
    )?;
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
        return Err(TensorError::runtime(
            op,
            format!(
                "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
                join(&padded),
                join(&span)
            ),
        ));
    }
    let grid: Vec<usize> = (0..spatial)
        .map(|d| (padded[d] - span[d]) / stride[d] + 1)
        .collect();
    let g = Geometry {
        kernel: lift(kernel_sizes, 1),
        stride: lift(&stride, 1),
        pad: lift(&pad.iter().map(|p| p.0).collect::<Vec<_>>(), 0),
        dilation: lift(&dilation, 1),
        image: lift(in_sizes, 1),
        grid: lift(&grid, 1),
    };
    let mut shape = vec![n, o];
    shape.extend(&grid);
    Ok(compute(
        &x,
        weight,
        bias,
        shape,
        batched,
        |x, w, b| forward::<f32>(x, w, b, &g, groups),
        |x, w, b| forward::<f64>(x, w, b, &g, groups),
    ))
}

fn join(v: &[impl std::fmt::Display]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" x ")
}

/// `conv_transpose1d/2d/3d`: the adjoint of a convolution with the same
/// parameters, `output_padding` adding to one side of each output dim.
#[allow(clippy::too_many_arguments)] // PyTorch's parameters, one for one
pub fn conv_transpose(
    input: &Tensor,
    weight: &Tensor,
    bias: Option<&Tensor>,
    stride: &[i64],
    padding: &[i64],
    output_padding: &[i64],
    groups: i64,
    dilation: &[i64],
    spatial: usize,
) -> Result<Tensor> {
    let op = op_name(spatial, Direction::Transposed);
    let Operands {
        x,
        batched,
        stride,
        dilation,
        groups,
    } = operands(op, input, weight, stride, dilation, groups, spatial)?;
    let (n, c) = (x.shape()[0], x.shape()[1]);
    if c != weight.shape()[0] {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given transposed=1, weight of size {:?}, expected input{:?} to have {} channels, but got {c} channels instead",
                weight.shape(),
                x.shape(),
                weight.shape()[0]
            ),
        ));
    }
    let padding = per_dim(op, "padding", padding, spatial)?;
    let output_padding = per_dim(op, "output_padding", output_padding, spatial)?;
    if dilation.contains(&0) {
        return Err(TensorError::runtime(
            op,
            format!(
                "dilation should be greater than zero, but got {}",
                named_dims("dilation", &dilation, ", ")
            ),
        ));
    }
    if (0..spatial).any(|d| output_padding[d] >= stride[d] && output_padding[d] >= dilation[d]) {
        return Err(TensorError::runtime(
            op,
            format!(
                "output padding must be smaller than either stride or dilation, but got {} {} {}",
                named_dims("output_padding", &output_padding, " "),
                named_dims("stride", &stride, " "),
                named_dims("dilation", &dilation, " ")
            ),
        ));
    }
    let o = weight.shape()[1] * groups;
    check_bias(op, bias, weight, o, "transposed=1, ", spatial == 3)?;
    let kernel_sizes = &weight.shape()[2..];
    let in_sizes = &x.shape()[2..];
    let out: Vec<i64> = (0..spatial)
        .map(|d| {
            (in_sizes[d] as i64 - 1) * stride[d] as i64 - 2 * padding[d] as i64
                + (dilation[d] * (kernel_sizes[d].max(1) - 1)) as i64
                + output_padding[d] as i64
                + 1
        })
        .collect();
    if out.iter().any(|&s| s <= 0) {
        let two_d = |v: Vec<i64>| if v.len() == 1 { vec![1, v[0]] } else { v };
        return Err(TensorError::runtime(
            op,
            format!(
                "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
                join(&two_d(in_sizes.iter().map(|&s| s as i64).collect())),
                join(&two_d(out))
            ),
        ));
    }
    let out: Vec<usize> = out.into_iter().map(|s| s as usize).collect();
    let g = Geometry {
        kernel: lift(kernel_sizes, 1),
        stride: lift(&stride, 1),
        pad: lift(&padding, 0),
        dilation: lift(&dilation, 1),
        image: lift(&out, 1),
        grid: lift(in_sizes, 1),
    };
    let mut shape = vec![n, o];
    shape.extend(&out);
    Ok(compute(
        &x,
        weight,
        bias,
        shape,
        batched,
        |x, w, b| transposed::<f32>(x, w, b, &g, groups),
        |x, w, b| transposed::<f64>(x, w, b, &g, groups),
    ))
}

/// An `[n, o, plane]` output whose channel planes start as their bias
/// (zero without one): the products are then added onto it, with no pass
/// for the bias after.
fn biased_output<T: Real>(n: usize, o: usize, plane: usize, bias: Option<&[T]>) -> Vec<T> {
    let numel = crate::alloc::ensure_numel::<T>(&[n, o, plane]);
    match bias {
        Some(bias) => {
            let mut out = Vec::with_capacity(numel);
            for _ in 0..n {
                for &v in bias {
                    out.extend(std::iter::repeat_n(v, plane));
                }
            }
            out
        }
        None => vec![T::default(); numel],
    }
}

/// Whether to split the batch across threads (enough images), or let
/// each image's gemm use the threads.
fn across_batch(n: usize) -> bool {
    n >= rayon::current_num_threads()
}

/// Unfolded matrices of fewer elements are copied on one thread: the copy
/// of a few hundred KB is cheaper than waking the others (measured: a
/// 16→32-channel 3×3 convolution of a 16×16 image, 51 → 41 µs).
const PARALLEL_UNFOLD: usize = 1 << 16;

/// The convolution of dense `[N, C, image]` `x` with dense `[O, C/g, kernel]`
/// `w`, as an `[N, O, grid]` tensor.
fn forward<T: Real>(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    g: &Geometry,
    groups: usize,
) -> Tensor {
    let (n, c, o) = (x.shape()[0], x.shape()[1], w.shape()[0]);
    let (sx, sw) = (x.read(), w.read());
    let (xs, ws) = (
        T::slice(&sx).expect("x is T"),
        T::slice(&sw).expect("w is T"),
    );
    let bias: Option<Vec<T>> = bias.map(|b| b.to_vec());
    let (plane_in, plane_out) = (g.image_len(), g.grid_len());
    let (cg, og) = (c / groups, o / groups);
    let patch = cg * g.taps();
    // A 1×1 kernel with unit stride and no padding reads the input as is.
    let direct = g.kernel == [1; 3] && g.stride == [1; 3] && g.pad == [0; 3];
    let mut out = biased_output(n, o, plane_out, bias.as_deref());
    if plane_out == 0 || n == 0 || o == 0 {
        return Tensor::from_vec(out, &[n * o * plane_out]);
    }
    if depthwise::suits(cg) {
        depthwise::forward(xs, ws, &mut out, c, g);
        return Tensor::from_vec(out, &[n * o * plane_out]);
    }
    let across = across_batch(n);
    let col_len = crate::alloc::ensure_numel::<T>(&[patch, plane_out]);
    let image = |(b, dst): (usize, &mut [T])| {
        // The unfolded matrix lives in a per-thread buffer kept between
        // calls: im2col writes every element, so it is never zeroed.
        scratch::with(if direct { 0 } else { col_len }, |col: &mut [T]| {
            for grp in 0..groups {
                let src = &xs[(b * c + grp * cg) * plane_in..(b * c + (grp + 1) * cg) * plane_in];
                let rhs = if direct {
                    src
                } else {
                    let parallel = !across && col.len() >= PARALLEL_UNFOLD;
                    im2col(src, cg, g, col, parallel);
                    &*col
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
                    !across && og * plane_out * patch >= PARALLEL_FLOPS,
                    true,
                );
            }
        })
    };
    if across {
        out.par_chunks_mut(o * plane_out)
            .enumerate()
            .for_each(image);
    } else {
        out.chunks_mut(o * plane_out).enumerate().for_each(image);
    }
    Tensor::from_vec(out, &[n * o * plane_out])
}

/// The transposed convolution of dense `[N, C, grid]` `x` with dense
/// `[C, O/g, kernel]` `w`: per image and group, `Wᵀ·X` gives every tap's
/// contribution, which col2im adds into the `[N, O, image]` output.
fn transposed<T: Real>(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    g: &Geometry,
    groups: usize,
) -> Tensor {
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let (cg, og) = (c / groups, w.shape()[1]);
    let o = og * groups;
    let (sx, sw) = (x.read(), w.read());
    let (xs, ws) = (
        T::slice(&sx).expect("x is T"),
        T::slice(&sw).expect("w is T"),
    );
    let bias: Option<Vec<T>> = bias.map(|b| b.to_vec());
    let (plane_in, plane_out) = (g.grid_len(), g.image_len());
    let patch = og * g.taps();
    // col2im adds every tap's contribution onto the bias.
    let mut out = biased_output(n, o, plane_out, bias.as_deref());
    if plane_out == 0 || n == 0 || o == 0 {
        return Tensor::from_vec(out, &[n * o * plane_out]);
    }
    // One output channel per group: the input gradient of a depthwise
    // convolution.
    if depthwise::suits_transposed(og, ws) {
        depthwise::transposed(xs, ws, &mut out, n, c, g);
        return Tensor::from_vec(out, &[n * o * plane_out]);
    }
    let across = across_batch(n);
    let col_len = crate::alloc::ensure_numel::<T>(&[patch, plane_in]);
    let image = |(b, dst): (usize, &mut [T])| {
        // The product writes every element of the per-thread buffer.
        scratch::with(col_len, |col: &mut [T]| {
            for grp in 0..groups {
                let lhs = Matrix {
                    data: &ws[grp * cg * patch..(grp + 1) * cg * patch],
                    row_stride: 1,
                    col_stride: patch,
                };
                let rhs = Matrix {
                    data: &xs[(b * c + grp * cg) * plane_in..(b * c + (grp + 1) * cg) * plane_in],
                    row_stride: plane_in,
                    col_stride: 1,
                };
                gemm_into(
                    patch,
                    plane_in,
                    cg,
                    col,
                    lhs,
                    rhs,
                    !across && patch * plane_in * cg >= PARALLEL_FLOPS,
                    false,
                );
                col2im(
                    col,
                    og,
                    g,
                    &mut dst[grp * og * plane_out..(grp + 1) * og * plane_out],
                );
            }
        })
    };
    if across {
        out.par_chunks_mut(o * plane_out)
            .enumerate()
            .for_each(image);
    } else {
        out.chunks_mut(o * plane_out).enumerate().for_each(image);
    }
    Tensor::from_vec(out, &[n * o * plane_out])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposed_convolution_spreads_each_input_over_the_kernel() {
        let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 1, 2]);
        let w = Tensor::from_vec(vec![1.0f32, 10.0, 100.0], &[1, 1, 3]);
        let y = conv_transpose(&x, &w, None, &[2], &[0], &[0], 1, &[1], 1).unwrap();
        assert_eq!(y.to_vec::<f32>(), [1.0, 10.0, 102.0, 20.0, 200.0]);
        // Padding trims the ends; output_padding adds one to the far end.
        let y = conv_transpose(&x, &w, None, &[2], &[1], &[1], 1, &[1], 1).unwrap();
        assert_eq!(y.to_vec::<f32>(), [10.0, 102.0, 20.0, 200.0]);
    }

    #[test]
    fn conv3d_sums_over_every_tap() {
        let x = Tensor::from_vec(
            (0..8).map(|v| v as f64).collect::<Vec<_>>(),
            &[1, 1, 2, 2, 2],
        );
        let w = Tensor::from_vec(vec![1.0f64; 8], &[1, 1, 2, 2, 2]);
        let y = conv(&x, &w, None, &[1], &Padding::Explicit(vec![0]), &[1], 1, 3).unwrap();
        assert_eq!(y.shape(), [1, 1, 1, 1, 1]);
        assert_eq!(y.to_vec::<f64>(), [28.0]);
    }
}
