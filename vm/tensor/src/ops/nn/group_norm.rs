//! Group normalisation: statistics per (sample, group), affine per channel.

use rayon::prelude::*;

use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::*;

/// `F.group_norm`: statistics per (sample, group), affine per channel.
pub fn group_norm(
    x: &Tensor,
    groups: i64,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    float_only("group_norm", x)?;
    check_norm_params(x, &[weight, bias])?;
    if x.ndim() < 2 {
        return Err(TensorError::runtime(
            "group_norm",
            format!(
                "Expected at least 2 dimensions for input tensor but received {}",
                x.ndim()
            ),
        ));
    }
    let c = x.shape()[1];
    let g = usize::try_from(groups).ok().filter(|&g| g > 0 && c.is_multiple_of(g)).ok_or_else(|| {
        TensorError::runtime("group_norm", format!("Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={groups}", x.shape()))
    })?;
    let inner: usize = x.shape()[2..].iter().product();
    let check = |name: &str, t: &Tensor| {
        if t.ndim() != 1 || t.numel() != c {
            return Err(TensorError::runtime(
                "group_norm",
                format!(
                    "Expected {name} to be a vector of size equal to the number of channels in input, but got {name} of shape {:?} and input of shape {:?}",
                    t.shape(),
                    x.shape()
                ),
            ));
        }
        Ok(())
    };
    let w = param(weight, c, |t| check("weight", t))?;
    let b = param(bias, c, |t| check("bias", t))?;
    let mut data: Vec<f64> = x.to_vec();
    let per_group = c / g * inner;
    if per_group > 0 {
        data.par_chunks_mut(per_group)
            .enumerate()
            .for_each(|(i, block)| {
                let (mean, var) = moments(block);
                let inv = 1.0 / (var + eps).sqrt();
                for (j, plane) in block.chunks_mut(inner.max(1)).enumerate() {
                    let ch = (i % g) * (c / g) + j;
                    let (scale, shift) = (
                        w.as_ref().map_or(1.0, |w| w[ch]),
                        b.as_ref().map_or(0.0, |b| b[ch]),
                    );
                    plane
                        .iter_mut()
                        .for_each(|v| *v = (*v - mean) * inv * scale + shift);
                }
            });
    }
    Ok(Tensor::from_vec(data, x.shape()).to_dtype(x.dtype()))
}
