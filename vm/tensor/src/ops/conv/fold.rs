//! `F.unfold` (im2col: every sliding block's values as a column) and
//! `F.fold` (col2im: columns summed back into an image) over two spatial dims.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::unfold::{Geometry, col2im, im2col};

/// The four per-dim parameters, each checked positive (padding: non-negative).
struct Params {
    kernel: [usize; 2],
    dilation: [usize; 2],
    padding: [usize; 2],
    stride: [usize; 2],
}

fn pair(op: &'static str, name: &str, what: &str, v: &[i64], zero_ok: bool) -> Result<[usize; 2]> {
    let v = match v {
        [x] => [*x, *x],
        [a, b] => [*a, *b],
        _ => {
            return Err(TensorError::runtime(
                op,
                format!(
                    "It is expected {name} equals to 2, but got size {}",
                    v.len()
                ),
            ));
        }
    };
    if v.iter().any(|&x| x < 0 || (x == 0 && !zero_ok)) {
        let relation = if zero_ok {
            "non-negative"
        } else {
            "greater than zero"
        };
        return Err(TensorError::runtime(
            op,
            format!(
                "{name} should be {relation}, but got {what}_height: {} {what}_width: {}",
                v[0], v[1]
            ),
        ));
    }
    Ok([v[0] as usize, v[1] as usize])
}

impl Params {
    fn new(
        op: &'static str,
        kernel: &[i64],
        dilation: &[i64],
        padding: &[i64],
        stride: &[i64],
    ) -> Result<Params> {
        Ok(Params {
            kernel: pair(op, "kernel size", "kernel", kernel, false)?,
            dilation: pair(op, "dilation", "dilation", dilation, false)?,
            padding: pair(op, "padding", "pad", padding, true)?,
            stride: pair(op, "stride", "stride", stride, false)?,
        })
    }

    /// Sliding blocks along each dim of an `image`, possibly not positive
    /// (C++'s truncating division, as PyTorch's message reports them).
    fn blocks(&self, image: [usize; 2]) -> [i64; 2] {
        [0, 1].map(|d| {
            let room = (image[d] + 2 * self.padding[d]) as i64
                - (self.dilation[d] * (self.kernel[d] - 1)) as i64
                - 1;
            room / self.stride[d] as i64 + 1
        })
    }

    fn geometry(&self, image: [usize; 2], grid: [usize; 2]) -> Geometry {
        Geometry {
            kernel: [1, self.kernel[0], self.kernel[1]],
            stride: [1, self.stride[0], self.stride[1]],
            pad: [0, self.padding[0], self.padding[1]],
            dilation: [1, self.dilation[0], self.dilation[1]],
            image: [1, image[0], image[1]],
            grid: [1, grid[0], grid[1]],
        }
    }

    fn describe(&self) -> String {
        let t = |v: [usize; 2]| format!("({}, {})", v[0], v[1]);
        format!(
            "kernel_size={}, dilation={}, padding={}, stride={}",
            t(self.kernel),
            t(self.dilation),
            t(self.padding),
            t(self.stride)
        )
    }
}

/// Adds a batch dim to unbatched input; says whether it did.
fn batched(t: &Tensor, rank: usize) -> (Tensor, bool) {
    if t.ndim() == rank {
        (t.clone(), true)
    } else {
        (t.with_layout(t.layout().unsqueeze(0)), false)
    }
}

/// `F.unfold`: `(N, C, H, W)` (or unbatched) to `(N, C·kh·kw, L)`.
pub fn unfold(
    input: &Tensor,
    kernel: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> Result<Tensor> {
    let op = "im2col";
    if input.ndim() < 3 {
        return Err(TensorError::DimOutOfRange {
            dim: 2,
            ndim: input.ndim(),
        });
    }
    if input.ndim() > 4 {
        return Err(TensorError::runtime(
            op,
            format!(
                "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                input.shape()
            ),
        ));
    }
    let p = Params::new(op, kernel, dilation, padding, stride)?;
    let (x, was_batched) = batched(input, 4);
    let (n, c) = (x.shape()[0], x.shape()[1]);
    let image = [x.shape()[2], x.shape()[3]];
    let blocks = p.blocks(image);
    if blocks.iter().any(|&b| b < 1) {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({}, {}), but its components must be at least one.",
                image[0],
                image[1],
                p.kernel[0],
                p.kernel[1],
                p.dilation[0],
                p.dilation[1],
                p.padding[0],
                p.padding[1],
                blocks[0],
                blocks[1]
            ),
        ));
    }
    let grid = [blocks[0] as usize, blocks[1] as usize];
    let g = p.geometry(image, grid);
    let rows = c * g.taps();
    let x = x.contiguous();
    let out = with_dtype!(x.dtype(), T => x.with_slice(|src: &[T]| {
        let mut col = vec![T::default(); crate::alloc::ensure_numel::<T>(&[n, rows, g.grid_len()])];
        let (plane, block) = (c * g.image_len(), rows * g.grid_len());
        for b in 0..n {
            im2col(&src[b * plane..(b + 1) * plane], c, &g, &mut col[b * block..(b + 1) * block], true);
        }
        Tensor::from_vec(col, &[n, rows, g.grid_len()])
    }));
    Ok(if was_batched {
        out
    } else {
        out.with_layout(crate::layout::Layout::contiguous(&out.shape()[1..]))
    })
}

/// `F.fold`: `(N, C·kh·kw, L)` (or unbatched) summed into `(N, C, H, W)`.
pub fn fold(
    input: &Tensor,
    output_size: &[i64],
    kernel: &[i64],
    dilation: &[i64],
    padding: &[i64],
    stride: &[i64],
) -> Result<Tensor> {
    let op = "col2im";
    if !(2..=3).contains(&input.ndim()) || input.shape().contains(&0) && input.ndim() == 2 {
        return Err(TensorError::runtime(
            op,
            format!(
                "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}",
                input.shape()
            ),
        ));
    }
    let image = pair(op, "output_size", "output", output_size, false)?;
    let p = Params::new(op, kernel, dilation, padding, stride)?;
    let (x, was_batched) = batched(input, 3);
    let taps = p.kernel[0] * p.kernel[1];
    let (n, rows, len) = (x.shape()[0], x.shape()[1], x.shape()[2]);
    if rows % taps != 0 {
        return Err(TensorError::runtime(
            op,
            format!(
                "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got input.size(1)={rows} and kernel_size=({}, {}).",
                p.kernel[0], p.kernel[1]
            ),
        ));
    }
    let blocks = p.blocks(image);
    if blocks.iter().any(|&b| b < 1) || (blocks[0] * blocks[1]) as usize != len {
        return Err(TensorError::runtime(
            op,
            format!(
                "Given output_size=({}, {}), {}, expected size of input's dimension 2 to match the calculated number of sliding blocks {} * {} = {}, but got input.size(2)={len}.",
                image[0],
                image[1],
                p.describe(),
                blocks[0],
                blocks[1],
                blocks[0] * blocks[1]
            ),
        ));
    }
    let c = rows / taps;
    let g = p.geometry(image, [blocks[0] as usize, blocks[1] as usize]);
    let dtype = x.dtype();
    let compute = if dtype.is_float() { dtype } else { DType::F64 };
    let x = x.to_dtype(compute).contiguous();
    let out = match compute {
        DType::F32 => sum_blocks::<f32>(&x, n, c, &g),
        _ => sum_blocks::<f64>(&x, n, c, &g),
    };
    let out = out.to_dtype(dtype);
    Ok(if was_batched {
        out
    } else {
        out.with_layout(crate::layout::Layout::contiguous(&out.shape()[1..]))
    })
}

fn sum_blocks<T: Element + std::ops::Add<Output = T>>(
    x: &Tensor,
    n: usize,
    c: usize,
    g: &Geometry,
) -> Tensor {
    let block = c * g.taps() * g.grid_len();
    let plane = c * g.image_len();
    let mut out = vec![T::default(); crate::alloc::ensure_numel::<T>(&[n, plane])];
    x.with_slice(|src: &[T]| {
        for b in 0..n {
            col2im(
                &src[b * block..(b + 1) * block],
                c,
                g,
                &mut out[b * plane..(b + 1) * plane],
            );
        }
    });
    Tensor::from_vec(out, &[n, c, g.image[1], g.image[2]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_unfolded_ones_counts_the_blocks_covering_each_pixel() {
        let ones = Tensor::from_vec(vec![1.0f32; 16], &[1, 1, 4, 4]);
        let cols = unfold(&ones, &[2], &[1], &[0], &[1]).unwrap();
        assert_eq!(cols.shape(), [1, 4, 9]);
        let back = fold(&cols, &[4, 4], &[2], &[1], &[0], &[1]).unwrap();
        assert_eq!(
            back.to_vec::<f32>(),
            [
                1., 2., 2., 1., 2., 4., 4., 2., 2., 4., 4., 2., 1., 2., 2., 1.
            ]
        );
    }
}
