//! Views, joins and copies.

use fxvm_tensor::layout::MemoryFormat;
use fxvm_tensor::ops::rearrange;
use fxvm_tensor::ops::shape::{self, Split};
use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::meta;
use crate::op::{M, Op, Place, T, TM, op};
use crate::value::Or;

/// A tensor's sizes as the `int[]` a shape op takes.
fn sizes_of(t: &Tensor) -> Vec<i64> {
    t.shape().iter().map(|&d| d as i64).collect()
}

/// `split` as either row calls it: every `n` elements along `dim`, or the
/// given sizes.
/// An `int|int[]?` dims argument as a list.
fn dims(dim: Option<Or<i64, Vec<i64>>>) -> Option<Vec<i64>> {
    dim.map(|d| match d {
        Or::A(d) => vec![d],
        Or::B(ds) => ds,
    })
}

fn split_call(x: &Tensor, how: Or<i64, Vec<i64>>, dim: i64) -> Result<Vec<Tensor>> {
    let how = match how {
        Or::A(n) if n >= 0 => Split::Every(n as usize),
        Or::A(n) => {
            return Err(TensorError::runtime(
                "split",
                format!("split expects split_size be non-negative, but got split_size={n}"),
            ));
        }
        Or::B(sizes) => Split::Sizes(sizes.into_iter().map(|d| d.max(0) as usize).collect()),
    };
    shape::split(x, how, dim)
}

pub(crate) fn rows() -> Vec<Op> {
    use Place::{FunctionalIsTorch, Torch};
    vec![
        op(
            "pixel_shuffle(Tensor input, int upscale_factor)",
            &[Torch, FunctionalIsTorch],
            |(x, r): (Tensor, i64)| shape::pixel_shuffle(&x, r),
        )
        .grad(crate::derivatives::layout::pixel_shuffle("PixelShuffleBackward0", "pixel_unshuffle")),
        op(
            "pixel_unshuffle(Tensor input, int downscale_factor)",
            &[Torch, FunctionalIsTorch],
            |(x, r): (Tensor, i64)| shape::pixel_unshuffle(&x, r),
        )
        .grad(crate::derivatives::layout::pixel_shuffle("PixelUnshuffleBackward0", "pixel_shuffle")),
        op(
            "channel_shuffle(Tensor input, int groups)",
            &[Torch, FunctionalIsTorch],
            |(x, g): (Tensor, i64)| shape::channel_shuffle(&x, g),
        )
        .grad(crate::derivatives::layout::channel_shuffle("ChannelShuffleBackward0")),
        op(
            "native_channel_shuffle(Tensor input, int groups)",
            &[Torch, FunctionalIsTorch],
            |(x, g): (Tensor, i64)| shape::channel_shuffle(&x, g),
        )
        .grad(crate::derivatives::layout::channel_shuffle("NativeChannelShuffleBackward0")),
        op(
            "view(Tensor input, int[] size)",
            M,
            |(x, size): (Tensor, Vec<i64>)| shape::view(&x, &size),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::view),
        op(
            "reshape(Tensor input, int[] shape)",
            TM,
            |(x, s): (Tensor, Vec<i64>)| shape::reshape(&x, &s),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::view),
        op(
            "view_as(Tensor input, Tensor other)",
            M,
            |(x, o): (Tensor, Tensor)| shape::view(&x, &sizes_of(&o)),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::as_other),
        op(
            "reshape_as(Tensor input, Tensor other)",
            M,
            |(x, o): (Tensor, Tensor)| shape::reshape(&x, &sizes_of(&o)),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::as_other),
        op(
            "flatten(Tensor input, int start_dim=0, int end_dim=-1)",
            TM,
            |(x, start, end): (Tensor, i64, i64)| shape::flatten(&x, start, end),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::flatten),
        op(
            "unflatten(Tensor input, int dim, int[] sizes)",
            TM,
            |(x, dim, sizes): (Tensor, i64, Vec<i64>)| shape::unflatten(&x, dim, &sizes),
        ).grad(crate::derivatives::shape::reshape("ViewBackward0"))
        .meta(meta::unflatten),
        op(
            "squeeze(Tensor input, int|int[]? dim=None)",
            TM,
            |(x, dim): (Tensor, Option<Or<i64, Vec<i64>>>)| shape::squeeze(&x, dims(dim).as_deref()),
        ).grad(crate::derivatives::shape::squeeze(false))
        .meta(meta::squeeze),
        op(
            "unsqueeze(Tensor input, int dim)",
            TM,
            |(x, dim): (Tensor, i64)| shape::unsqueeze(&x, dim),
        ).grad(crate::derivatives::shape::reshape("UnsqueezeBackward0"))
        .meta(meta::unsqueeze),
        op(
            "permute(Tensor input, int[] dims)",
            TM,
            |(x, dims): (Tensor, Vec<i64>)| shape::permute(&x, &dims),
        ).grad(crate::derivatives::shape::permute())
        .meta(meta::permute),
        op(
            "transpose(Tensor input, int dim0, int dim1)",
            TM,
            |(x, a, b): (Tensor, i64, i64)| shape::transpose(&x, a, b),
        ).grad(crate::derivatives::shape::transpose("TransposeBackward0"))
        .meta(meta::transpose),
        op("t(Tensor input)", TM, |(x,): (Tensor,)| shape::matrix_t(&x))
            .grad(crate::derivatives::shape::t("TBackward0"))
            .meta(meta::matrix_t),
        // The views Tensor.transpose_ & co. give the tensor itself (it
        // restrides to them), recorded under PyTorch's in-place nodes.
        op(
            "transpose_(Tensor input, int dim0, int dim1)",
            &[],
            |(x, a, b): (Tensor, i64, i64)| shape::transpose(&x, a, b),
        ).grad(crate::derivatives::shape::transpose("TransposeBackward1")),
        op("t_(Tensor input)", &[], |(x,): (Tensor,)| shape::matrix_t(&x))
            .grad(crate::derivatives::shape::t("TBackward1")),
        op(
            "squeeze_(Tensor input, int|int[]? dim=None)",
            &[],
            |(x, dim): (Tensor, Option<Or<i64, Vec<i64>>>)| shape::squeeze(&x, dims(dim).as_deref()),
        ).grad(crate::derivatives::shape::squeeze(true)),
        op(
            "unsqueeze_(Tensor input, int dim)",
            &[],
            |(x, dim): (Tensor, i64)| shape::unsqueeze(&x, dim),
        ).grad(crate::derivatives::shape::reshape("UnsqueezeBackward1")),
        op(
            "expand(Tensor input, int[] size)",
            M,
            |(x, size): (Tensor, Vec<i64>)| shape::expand(&x, &size),
        ).grad(crate::derivatives::shape::expand())
        .meta(meta::expand),
        op(
            "expand_as(Tensor input, Tensor other)",
            M,
            |(x, o): (Tensor, Tensor)| x.broadcast_to(o.shape()),
        ).grad(crate::derivatives::shape::expand())
        .meta(meta::as_other),
        op(
            "narrow(Tensor input, int dim, int start, int length)",
            TM,
            |(x, dim, start, length): (Tensor, i64, i64, i64)| {
                shape::narrow(&x, dim, start, length)
            },
        ).grad(crate::derivatives::shape::narrow())
        .meta(meta::narrow),
        op(
            "select(Tensor input, int dim, int index)",
            TM,
            |(x, dim, i): (Tensor, i64, i64)| shape::select(&x, dim, i),
        ).grad(crate::derivatives::shape::select())
        .meta(meta::select),
        op(
            "chunk(Tensor input, int chunks, int dim=0)",
            TM,
            |(x, n, dim): (Tensor, i64, i64)| {
                let n = usize::try_from(n).map_err(|_| {
                    TensorError::runtime("chunk", "chunk expects `chunks` to be greater than 0")
                })?;
                shape::chunk(&x, n, dim)
            },
        ).grad(crate::derivatives::shape::pieces("SplitBackward0", false))
        .meta(meta::chunk),
        // torch.split names the sizes `split_size_or_sections`, the
        // method `split_size` (a keyword call by the other name fails).
        op(
            "split(Tensor tensor, int|int[] split_size_or_sections, int dim=0) -> tuple[Tensor, ...]",
            &[Place::TorchFunctional(2)],
            |(x, how, dim): (Tensor, Or<i64, Vec<i64>>, i64)| split_call(&x, how, dim),
        ).grad(crate::derivatives::shape::pieces("SplitWithSizesBackward0", false))
        .meta(meta::split),
        op(
            "split(Tensor tensor, int|int[] split_size, int dim=0) -> tuple[Tensor, ...]",
            &[Place::Method],
            |(x, how, dim): (Tensor, Or<i64, Vec<i64>>, i64)| split_call(&x, how, dim),
        ).grad(crate::derivatives::shape::pieces("SplitWithSizesBackward0", false))
        .meta(meta::split),
        op(
            "unbind(Tensor input, int dim=0)",
            TM,
            |(x, dim): (Tensor, i64)| shape::unbind(&x, dim),
        ).grad(crate::derivatives::shape::pieces("UnbindBackward0", true))
        .meta(meta::unbind),
        op(
            "cat(Tensor[] tensors, int dim=0)",
            T,
            |(ts, dim): (Vec<Tensor>, i64)| shape::cat(&ts, dim),
        ).grad(crate::derivatives::shape::cat())
        .meta(meta::cat),
        op(
            "concat(Tensor[] tensors, int dim=0)",
            T,
            |(ts, dim): (Vec<Tensor>, i64)| shape::cat(&ts, dim),
        ).grad(crate::derivatives::shape::cat())
        .meta(meta::cat),
        op(
            "stack(Tensor[] tensors, int dim=0)",
            T,
            |(ts, dim): (Vec<Tensor>, i64)| shape::stack(&ts, dim),
        ).grad(crate::derivatives::shape::stack())
        .meta(meta::stack),
        op(
            "repeat(Tensor input, int[] repeats)",
            M,
            |(x, r): (Tensor, Vec<i64>)| shape::repeat(&x, &r),
        )
        .grad(crate::derivatives::layout::repeat())
        .meta(meta::repeat),
        op(
            "diagonal(Tensor input, int offset=0, int dim1=0, int dim2=1)",
            TM,
            |(x, offset, a, b): (Tensor, i64, i64, i64)| shape::diagonal(&x, offset, a, b),
        )
        .grad(crate::derivatives::layout::diagonal()),
        op(
            "diag(Tensor input, int diagonal=0)",
            TM,
            |(x, d): (Tensor, i64)| rearrange::diag(&x, d),
        )
        .grad(crate::derivatives::layout::diag()),
        op("trace(Tensor input)", TM, |(x,): (Tensor,)| {
            if x.ndim() != 2 {
                return Err(TensorError::runtime(
                    "trace",
                    format!(
                        "trace: expected a matrix, but got tensor with dim {}",
                        x.ndim()
                    ),
                ));
            }
            let d = shape::diagonal(&x, 0, 0, 1)?;
            fxvm_tensor::ops::reduce::sum(&d, None, false, None)
        })
        .grad(crate::derivatives::layout::trace()),
        op(
            "flip(Tensor input, int[] dims)",
            TM,
            |(x, dims): (Tensor, Vec<i64>)| rearrange::flip(&x, &dims),
        )
        .grad(crate::derivatives::layout::flip())
        .meta(meta::same),
        op("fliplr(Tensor input)", TM, |(x,): (Tensor,)| {
            rearrange::flip_dim(&x, 1)
        })
        .grad(crate::derivatives::layout::flip_dim(1))
        .meta(meta::same),
        op("flipud(Tensor input)", TM, |(x,): (Tensor,)| {
            rearrange::flip_dim(&x, 0)
        })
        .grad(crate::derivatives::layout::flip_dim(0))
        .meta(meta::same),
        op(
            "roll(Tensor input, int[] shifts, int[] dims=[])",
            TM,
            |(x, shifts, dims): (Tensor, Vec<i64>, Vec<i64>)| rearrange::roll(&x, &shifts, &dims),
        )
        .grad(crate::derivatives::layout::roll())
        .meta(meta::same),
        op(
            "rot90(Tensor input, int k=1, int[] dims=[0,1])",
            TM,
            |(x, k, dims): (Tensor, i64, Vec<i64>)| rearrange::rot90(&x, k, &dims),
        )
        .grad(crate::derivatives::layout::rot90()),
        op(
            "meshgrid(Tensor[] *tensors, *, str? indexing=None) -> tuple[Tensor, ...]",
            &[Place::TorchFunctional(1)],
            |(tensors, indexing): (Vec<Tensor>, Option<String>)| {
                // Composite: one expansion (and node) per grid, as PyTorch's.
                let indexing = indexing.as_deref().unwrap_or("ij");
                let (views, grid) = rearrange::meshgrid_plan(&tensors, indexing)?;
                tensors
                    .iter()
                    .zip(&views)
                    .map(|(t, view)| o::shape::expand(&o::shape::reshape(t, view)?, &grid))
                    .collect::<Result<Vec<_>>>()
            },
        )
        .composite(),
        op(
            "broadcast_tensors(Tensor[] *tensors) -> tuple[Tensor, ...]",
            &[Place::TorchFunctional(1)],
            |(tensors,): (Vec<Tensor>,)| {
                let mut shape: Vec<usize> = Vec::new();
                for t in &tensors {
                    shape = fxvm_tensor::layout::broadcast_shapes(&shape, t.shape())
                        .ok_or_else(|| TensorError::broadcast(&shape, t.shape()))?;
                }
                let sizes: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
                // Composite: one expansion (and node) per tensor, as PyTorch's.
                tensors
                    .iter()
                    .map(|t| o::shape::expand(t, &sizes))
                    .collect::<Result<Vec<_>>>()
            },
        )
        .composite(),
        op(
            "contiguous(Tensor input, *, MemoryFormat? memory_format=None)",
            M,
            |(x, format): (Tensor, Option<MemoryFormat>)| -> Result<crate::value::Value> {
                // Already laid out so: the tensor itself, as in PyTorch.
                let format = format.unwrap_or(MemoryFormat::Contiguous);
                if x.is_in_format(format) {
                    return Ok(crate::value::Value::Input(0));
                }
                if format == MemoryFormat::Preserve {
                    return Err(TensorError::runtime(
                        "contiguous",
                        "preserve memory format is unsupported by the contiguous operator",
                    ));
                }
                x.copy_in(format).map(crate::value::Value::Tensor)
            },
        ).grad(crate::derivatives::shape::identity("CloneBackward0"))
        .meta(meta::same),
        op(
            "clone(Tensor input, *, MemoryFormat? memory_format=None)",
            TM,
            |(x, format): (Tensor, MemoryFormat)| x.copy_in(format),
        ).grad(crate::derivatives::shape::identity("CloneBackward0"))
        .meta(meta::same),
        op(
            "detach_(Tensor(a!) input)",
            TM,
            |(x,): (Tensor,)| -> Result<crate::value::Value> {
                x.clear_history();
                Ok(crate::value::Value::Input(0))
            },
        )
        .nondiff()
        .meta(meta::same),
        op(
            "detach(Tensor input)",
            TM,
            |(x,): (Tensor,)| -> Result<Tensor> { Ok(x.detach()) },
        )
        .nondiff()
        .meta(meta::same),
    ]
}
