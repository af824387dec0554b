//! Gradients through activations in one pass each — what PyTorch's
//! `threshold_backward` (relu's) and `gelu_backward` compute — instead of
//! a chain of elementwise ops and their temporaries.

use rayon::prelude::*;

use super::elementwise::FloatExt;
use crate::layout::broadcast_shapes;
use crate::storage::Element;
use crate::{DType, Result, Tensor, TensorError};

/// Elements per parallel chunk.
const CHUNK: usize = 1 << 15;

/// `f(grad, input, out)` over chunks of the broadcast operands, in the
/// float dtype they promote to (float32 or float64).
fn pairwise(
    op: &'static str,
    grad: &Tensor,
    input: &Tensor,
    f32_kernel: impl Fn(&[f32], &[f32], &mut [f32]) + Sync,
    f64_kernel: impl Fn(&[f64], &[f64], &mut [f64]) + Sync,
) -> Result<Tensor> {
    let shape = broadcast_shapes(grad.shape(), input.shape())
        .ok_or_else(|| TensorError::broadcast(grad.shape(), input.shape()))?;
    let dtype = DType::promote(grad.dtype(), input.dtype());
    let (g, x) = (grad.broadcast_to(&shape)?, input.broadcast_to(&shape)?);
    fn run<F: Element>(
        g: &Tensor,
        x: &Tensor,
        shape: &[usize],
        kernel: impl Fn(&[F], &[F], &mut [F]) + Sync,
    ) -> Tensor {
        let out = g.with_slice(|g: &[F]| {
            x.with_slice(|x: &[F]| {
                let mut out = vec![F::default(); g.len()];
                out.par_chunks_mut(CHUNK)
                    .zip(g.par_chunks(CHUNK).zip(x.par_chunks(CHUNK)))
                    .for_each(|(o, (g, x))| kernel(g, x, o));
                out
            })
        });
        Tensor::from_vec(out, shape)
    }
    match dtype {
        DType::F32 => Ok(run(&g, &x, &shape, f32_kernel)),
        DType::F64 => Ok(run(&g, &x, &shape, f64_kernel)),
        d => Err(TensorError::not_implemented_for(op, d)),
    }
}

/// `grad` where `input > threshold`, else 0.
pub fn threshold_backward(grad: &Tensor, input: &Tensor, threshold: f64) -> Result<Tensor> {
    fn pass<F: Element + PartialOrd>(t: F) -> impl Fn(&[F], &[F], &mut [F]) + Sync {
        move |g, x, o| {
            for ((o, &g), &x) in o.iter_mut().zip(g).zip(x) {
                *o = if x > t { g } else { F::default() };
            }
        }
    }
    pairwise(
        "threshold_backward_cpu",
        grad,
        input,
        pass(threshold as f32),
        pass(threshold),
    )
}

/// `grad · gelu'(input)`, for the exact `gelu` or its tanh approximation.
pub fn gelu_backward(grad: &Tensor, input: &Tensor, tanh: bool) -> Result<Tensor> {
    fn by_element<F: num_traits::Float + FloatExt>(
        tanh: bool,
    ) -> impl Fn(&[F], &[F], &mut [F]) + Sync {
        move |g, x, o| {
            for ((o, &g), &x) in o.iter_mut().zip(g).zip(x) {
                *o = g * gelu_slope(x, tanh);
            }
        }
    }
    let f32_kernel = move |g: &[f32], x: &[f32], o: &mut [f32]| {
        if tanh {
            by_element::<f32>(true)(g, x, o)
        } else {
            super::fastmath::gelu_backward(g, x, o)
        }
    };
    pairwise(
        "GeluBackward",
        grad,
        input,
        f32_kernel,
        by_element::<f64>(tanh),
    )
}

/// `gelu'(x)`: `Φ(x) + x·φ(x)`, or the slope of `x/2·(1 + tanh(k(x + c·x³)))`.
fn gelu_slope<F: num_traits::Float + FloatExt>(x: F, tanh: bool) -> F {
    let f = |v: f64| F::from(v).unwrap_or_else(F::nan);
    let half = f(0.5);
    if tanh {
        let (k, c) = (f((2.0 / std::f64::consts::PI).sqrt()), f(0.044715));
        let x2 = x * x;
        let t = (k * (x + c * x2 * x)).tanh();
        half * (F::one() + t) + half * x * (F::one() - t * t) * k * (F::one() + f(3.0) * c * x2)
    } else {
        let cdf = half * (F::one() + (x * f(std::f64::consts::FRAC_1_SQRT_2)).erf());
        let pdf = (-half * x * x).exp() * f(1.0 / (2.0 * std::f64::consts::PI).sqrt());
        cdf + x * pdf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threshold_backward_passes_the_gradient_above_the_threshold() {
        let g = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4]);
        let x = Tensor::from_vec(vec![-1.0f32, 0.0, 0.5, f32::NAN], &[4]);
        let out = threshold_backward(&g, &x, 0.0).unwrap();
        assert_eq!(out.to_vec::<f32>(), [0.0, 0.0, 3.0, 0.0]);
        let wide = threshold_backward(&g.to_dtype(DType::F64), &x, 0.25).unwrap();
        assert_eq!(
            (wide.dtype(), wide.to_vec::<f64>()),
            (DType::F64, vec![0.0, 0.0, 3.0, 0.0])
        );
        let ints = Tensor::from_vec(vec![1i64], &[1]);
        assert!(threshold_backward(&ints, &ints, 0.0).is_err());
    }

    #[test]
    fn gelu_backward_is_the_slope_times_the_gradient() {
        let xs = [-3.0, -0.5, 0.0, 0.7, 2.5];
        let x = Tensor::from_vec(xs.to_vec(), &[5]);
        let g = Tensor::from_vec(vec![2.0f64; 5], &[5]);
        for tanh in [false, true] {
            let out = gelu_backward(&g, &x, tanh).unwrap().to_vec::<f64>();
            for (&x, &o) in xs.iter().zip(&out) {
                // Central differences of gelu itself.
                let gelu = |v: f64| {
                    if tanh {
                        0.5 * v
                            * (1.0
                                + ((2.0 / std::f64::consts::PI).sqrt()
                                    * (v + 0.044715 * v * v * v))
                                    .tanh())
                    } else {
                        0.5 * v * (1.0 + libm::erf(v / std::f64::consts::SQRT_2))
                    }
                };
                let slope = (gelu(x + 1e-6) - gelu(x - 1e-6)) / 2e-6;
                assert!(
                    (o - 2.0 * slope).abs() < 1e-8,
                    "{x} {tanh}: {o} vs {}",
                    2.0 * slope
                );
            }
            let f32_out =
                gelu_backward(&g.to_dtype(DType::F32), &x.to_dtype(DType::F32), tanh).unwrap();
            assert!(
                f32_out
                    .to_vec::<f64>()
                    .iter()
                    .zip(&out)
                    .all(|(a, b)| (a - b).abs() < 1e-5)
            );
        }
    }
}
