//! Fractional max pooling (Graham, 2014): windows of a fixed size whose
//! starts advance by a random, non-integral stride, so that any output size
//! up to the input's is reachable. One uniform sample per plane and axis
//! (drawn by the caller, as PyTorch's `F.fractional_max_pool2d` does)
//! places the windows.

use num_traits::Float;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::Element;
use crate::tensor::Tensor;

/// `torch._C._nn.fractional_max_pool{2,3}d(input, kernel_size,
/// output_size, random_samples)` → `(values, indices)`; indices count
/// within each input plane, as `max_unpool` expects.
pub fn fractional_max_pool(
    input: &Tensor,
    kernel: &[i64],
    output: &[i64],
    samples: &Tensor,
    spatial: usize,
) -> Result<(Tensor, Tensor)> {
    let op = ["fractional_max_pool2d", "fractional_max_pool3d"][spatial - 2];
    let fail = |message: String| TensorError::runtime(op, message);
    let names = &["time", "height", "width"][3 - spatial..];
    let per_dim = |what: &str, v: &[i64]| -> Result<Vec<usize>> {
        let v = if v.len() == 1 {
            vec![v[0]; spatial]
        } else {
            v.to_vec()
        };
        match v.len() {
            n if n == spatial && v.iter().all(|&x| x > 0) => {
                Ok(v.iter().map(|&x| x as usize).collect())
            }
            n if n == spatial => Err(fail(format!(
                "{op}(): {what} must be greater than zero, but got {v:?}"
            ))),
            _ => Err(fail(format!(
                "{op}(): {what} must either be a single int, or a tuple of {spatial} ints"
            ))),
        }
    };
    let kernel = per_dim("kernel_size", kernel)?;
    let output = per_dim("output_size", output)?;
    let ndim = input.ndim();
    let shape = input.shape();
    if !(ndim == spatial + 1 || ndim == spatial + 2) || shape[ndim - spatial - 1..].contains(&0) {
        return Err(fail(format!(
            "{op}(): Expected {}D or {}D tensor, but got: {}",
            spatial + 1,
            spatial + 2,
            crate::error::torch_size(shape)
        )));
    }
    let batch = if ndim == spatial + 2 { shape[0] } else { 1 };
    let planes = shape[ndim - spatial - 1];
    let sizes = &shape[ndim - spatial..];
    for d in 0..spatial {
        if output[d] + kernel[d] - 1 > sizes[d] {
            return Err(fail(format!(
                "{op}(): pool {} {} too large relative to input {} {}",
                names[d], kernel[d], names[d], sizes[d]
            )));
        }
    }
    if samples.dtype() != input.dtype() {
        return Err(fail(format!(
            "Expected random_samples to have the same dtype as input, but got {} and {}",
            samples.dtype(),
            input.dtype()
        )));
    }
    let ss = samples.shape();
    if ss.len() != 3 || ss[0] < batch {
        return Err(fail(
            "Expect _random_samples.size(0) no less then input batch size.".into(),
        ));
    }
    if ss[1] != planes {
        return Err(fail(
            "Expect _random_samples.size(1) equals to input channel size.".into(),
        ));
    }
    if ss[2] != spatial {
        return Err(fail(format!(
            "Expect _random_samples.size(2) equals to {spatial}."
        )));
    }
    let geometry = Geometry {
        planes: batch * planes,
        sizes,
        kernel: &kernel,
        output: &output,
    };
    let (values, indices) = match input.dtype() {
        DType::F32 => geometry.run::<f32>(input, samples),
        DType::F64 => geometry.run::<f64>(input, samples),
        dtype => return Err(TensorError::not_implemented_for(op, dtype)),
    };
    let mut out_shape = shape[..ndim - spatial].to_vec();
    out_shape.extend(&output);
    Ok((
        Tensor::from_storage(values, &out_shape),
        Tensor::from_vec(indices, &out_shape),
    ))
}

/// The window starts along one axis: `floor((i + u)·α) - floor(u·α)` with
/// `α = (input - pool) / (output - 1)`, the last window flush with the end.
fn starts<F: Float>(sample: F, input: usize, output: usize, pool: usize) -> Vec<usize> {
    let alpha = F::from(input - pool).unwrap() / F::from(output.saturating_sub(1)).unwrap();
    let offset = (sample * alpha).to_i64().unwrap_or(0);
    let mut seq: Vec<usize> = (0..output.saturating_sub(1))
        .map(|i| {
            let start = ((F::from(i).unwrap() + sample) * alpha)
                .to_i64()
                .unwrap_or(0)
                - offset;
            start.clamp(0, (input - pool) as i64) as usize
        })
        .collect();
    if output > 0 {
        seq.push(input - pool);
    }
    seq
}

struct Geometry<'a> {
    planes: usize,
    sizes: &'a [usize],
    kernel: &'a [usize],
    output: &'a [usize],
}

impl Geometry<'_> {
    fn run<F: Float + Element>(
        &self,
        input: &Tensor,
        samples: &Tensor,
    ) -> (crate::storage::Storage, Vec<i64>) {
        let input: Vec<F> = input.contiguous().to_vec();
        let samples: Vec<F> = samples.contiguous().to_vec();
        let k = self.sizes.len();
        let plane: usize = self.sizes.iter().product();
        let out_plane: usize = self.output.iter().product();
        let mut values = Vec::with_capacity(self.planes * out_plane);
        let mut indices = Vec::with_capacity(self.planes * out_plane);
        for p in 0..self.planes {
            let u = &samples[p * k..(p + 1) * k];
            // 2-d planes take the width's sample first; 3-d ones the time's.
            let sample_of = |d: usize| if k == 2 { u[1 - d] } else { u[d] };
            let seqs: Vec<Vec<usize>> = (0..k)
                .map(|d| starts(sample_of(d), self.sizes[d], self.output[d], self.kernel[d]))
                .collect();
            let src = &input[p * plane..(p + 1) * plane];
            for o in 0..out_plane {
                let (mut rest, mut origin) = (o, [0usize; 3]);
                for d in (0..k).rev() {
                    origin[d] = seqs[d][rest % self.output[d]];
                    rest /= self.output[d];
                }
                let (value, index) = self.window_max(src, &origin[..k]);
                values.push(value);
                indices.push(index as i64);
            }
        }
        (F::wrap(values), indices)
    }

    /// The largest element (NaN wins) of the window at `origin`, and its
    /// index in the plane; ties keep the first, NaNs the last.
    fn window_max<F: Float>(&self, src: &[F], origin: &[usize]) -> (F, usize) {
        let k = origin.len();
        let flat = |pos: &[usize]| {
            pos.iter()
                .zip(self.sizes)
                .fold(0, |acc, (&p, &s)| acc * s + p)
        };
        let count: usize = self.kernel.iter().product();
        let mut best = (F::neg_infinity(), flat(origin));
        let mut pos = [0usize; 3];
        for w in 0..count {
            let mut rest = w;
            for d in (0..k).rev() {
                pos[d] = origin[d] + rest % self.kernel[d];
                rest /= self.kernel[d];
            }
            let i = flat(&pos[..k]);
            let v = src[i];
            if v > best.0 || v.is_nan() {
                best = (v, i);
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_starts_cover_the_input_with_the_last_flush() {
        let seq = starts(0.5f32, 10, 4, 2);
        assert_eq!(seq.len(), 4);
        assert_eq!(*seq.last().unwrap(), 8);
        assert!(seq.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(starts(0.3f64, 5, 1, 3), [2]);
    }

    #[test]
    fn each_output_is_its_window_maximum() {
        let input = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4]);
        let samples = Tensor::from_vec(vec![0.0f32, 0.0], &[1, 1, 2]);
        let (values, indices) = fractional_max_pool(&input, &[2, 2], &[2, 2], &samples, 2).unwrap();
        // α = 2: windows start at 0 and 2 on both axes.
        assert_eq!(values.to_vec::<f32>(), [5., 7., 13., 15.]);
        assert_eq!(indices.to_vec::<i64>(), [5, 7, 13, 15]);
    }

    #[test]
    fn a_pool_larger_than_the_input_allows_is_refused() {
        let input = Tensor::from_vec(vec![0f32; 9], &[1, 3, 3]);
        let samples = Tensor::from_vec(vec![0.5f32; 2], &[1, 1, 2]);
        let err = fractional_max_pool(&input, &[2, 2], &[3, 3], &samples, 2).unwrap_err();
        assert!(err.to_string().contains("too large"), "{err}");
    }
}
