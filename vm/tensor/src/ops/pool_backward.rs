//! Max pooling's backward: each output's gradient added into zeros shaped
//! like the input, at the position its window's maximum came from (the
//! indices the pooling returned, flat within each plane) — one pass per
//! plane instead of a general scatter.

use rayon::prelude::*;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::Element;
use crate::tensor::Tensor;

const OP: &str = "max_pool_backward";

/// The input's gradient of a max pooling over the last `spatial` dims of
/// `input` whose output gradient is `grad` and maxima `indices`.
pub fn max_pool_backward(
    grad: &Tensor,
    input: &Tensor,
    indices: &Tensor,
    spatial: usize,
) -> Result<Tensor> {
    let lead = input
        .ndim()
        .checked_sub(spatial)
        .filter(|_| (1..=3).contains(&spatial));
    let fits = lead.is_some_and(|lead| {
        grad.shape() == indices.shape()
            && grad.ndim() == input.ndim()
            && grad.shape()[..lead] == input.shape()[..lead]
            && indices.dtype() == DType::I64
    });
    let Some(lead) = lead.filter(|_| fits) else {
        return Err(TensorError::runtime(
            OP,
            format!(
                "a gradient {:?} with indices {:?} ({}) does not fit a {spatial}-d pooling of {:?}",
                grad.shape(),
                indices.shape(),
                indices.dtype().name(),
                input.shape()
            ),
        ));
    };
    let plane_in: usize = input.shape()[lead..].iter().product();
    let plane_out: usize = grad.shape()[lead..].iter().product();
    let dtype = grad.dtype();
    let spread_as = |wide: DType| {
        let g = grad.to_dtype(wide);
        indices.with_slice(|idx: &[i64]| match wide {
            DType::F32 => g.with_slice(|g: &[f32]| {
                spread(g, idx, plane_in, plane_out).map(|d| Tensor::from_vec(d, input.shape()))
            }),
            _ => g.with_slice(|g: &[f64]| {
                spread(g, idx, plane_in, plane_out).map(|d| Tensor::from_vec(d, input.shape()))
            }),
        })
    };
    let out = match dtype {
        DType::F32 => spread_as(DType::F32)?,
        _ => spread_as(DType::F64)?.to_dtype(dtype),
    };
    Ok(out)
}

/// Per plane, `dst[idx[i]] += g[i]` into zeros; an index outside its plane
/// is an error.
fn spread<T: Element + std::ops::AddAssign>(
    g: &[T],
    idx: &[i64],
    plane_in: usize,
    plane_out: usize,
) -> Result<Vec<T>> {
    let planes = g.len().checked_div(plane_out).unwrap_or(0);
    let mut out = vec![T::default(); crate::alloc::ensure_numel::<T>(&[planes, plane_in])];
    if plane_out > 0 && plane_in > 0 {
        out.par_chunks_mut(plane_in)
            .zip(g.par_chunks(plane_out).zip(idx.par_chunks(plane_out)))
            .try_for_each(|(dst, (g, idx))| {
                for (&v, &i) in g.iter().zip(idx) {
                    let at = usize::try_from(i).ok().filter(|&at| at < plane_in);
                    let Some(at) = at else {
                        return Err(TensorError::runtime(
                            OP,
                            format!(
                                "index {i} is out of bounds for a plane of {plane_in} elements"
                            ),
                        ));
                    };
                    dst[at] += v;
                }
                Ok(())
            })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gradients_land_where_the_maxima_were_and_add_up() {
        let input = Tensor::zeros(&[2, 1, 2, 3], DType::F32);
        let grad = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 1, 1, 2]);
        // Plane 0: both outputs from position 4; plane 1: positions 0 and 5.
        let indices = Tensor::from_vec(vec![4i64, 4, 0, 5], &[2, 1, 1, 2]);
        let d = max_pool_backward(&grad, &input, &indices, 2).unwrap();
        assert_eq!(d.shape(), [2, 1, 2, 3]);
        assert_eq!(
            d.to_vec::<f32>(),
            [0., 0., 0., 0., 3., 0., 3., 0., 0., 0., 0., 4.]
        );
        let doubles = max_pool_backward(&grad.to_dtype(DType::F64), &input, &indices, 2).unwrap();
        assert_eq!(doubles.dtype(), DType::F64);
    }

    #[test]
    fn indices_out_of_the_plane_or_misshapen_are_errors() {
        let input = Tensor::zeros(&[1, 2, 2], DType::F32);
        let grad = Tensor::zeros(&[1, 1, 1], DType::F32);
        let far = Tensor::from_vec(vec![4i64], &[1, 1, 1]);
        assert!(max_pool_backward(&grad, &input, &far, 2).is_err());
        let two = Tensor::from_vec(vec![0i64, 1], &[1, 1, 2]);
        assert!(max_pool_backward(&grad, &input, &two, 2).is_err());
        assert!(
            max_pool_backward(&grad, &input, &Tensor::zeros(&[1, 1, 1], DType::I64), 4).is_err()
        );
    }
}
