//! `torch.conv_tbc`: a 1-d convolution over time-major input
//! (`[time, batch, channels]`, fairseq's layout) with a
//! `[kernel_width, in_channels, out_channels]` weight.

use super::{Padding, conv};
use crate::error::{Result, TensorError};
use crate::ops::shape::permute;
use crate::tensor::Tensor;

pub fn conv_tbc(input: &Tensor, weight: &Tensor, bias: &Tensor, pad: i64) -> Result<Tensor> {
    let fail = |m: &str| Err(TensorError::runtime("conv_tbc", m));
    if input.ndim() != 3 {
        return fail("Input must have 3 dims: time, batch, in_channel");
    }
    if weight.ndim() != 3 {
        return fail("Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
    }
    if bias.ndim() != 1 {
        return fail("Bias must be 1-D");
    }
    if input.shape()[2] != weight.shape()[1] {
        return fail("Input dim 2 (input channels) is not == dim 1 in the weight tensor");
    }
    if bias.shape()[0] != weight.shape()[2] {
        return fail("Bias size must equal dim 2 in the weight tensor (output channels).");
    }
    // As conv1d: [batch, channels, time] against [out, in, kernel].
    let x = permute(input, &[1, 2, 0])?;
    let w = permute(weight, &[2, 1, 0])?;
    let y = conv(
        &x,
        &w,
        Some(bias),
        &[1],
        &Padding::Explicit(vec![pad]),
        &[1],
        1,
        1,
    )?;
    Ok(permute(&y, &[2, 0, 1])?.contiguous())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_width_one_kernel_mixes_channels_per_step() {
        // Two steps, one batch, two channels in; one channel out summing them.
        let x = Tensor::from_vec(vec![1f32, 2., 3., 4.], &[2, 1, 2]);
        let w = Tensor::from_vec(vec![1f32, 1.], &[1, 2, 1]);
        let b = Tensor::from_vec(vec![0.5f32], &[1]);
        let y = conv_tbc(&x, &w, &b, 0).unwrap();
        assert_eq!(y.shape(), [2, 1, 1]);
        assert_eq!(y.to_vec::<f32>(), [3.5, 7.5]);
        let padded = conv_tbc(&x, &w, &b, 1).unwrap();
        assert_eq!(padded.to_vec::<f32>(), [0.5, 3.5, 7.5, 0.5]);
    }
}
