//! Reductions.

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Name, derivative};
use crate::value::Value;
use fxvm_tensor::{Result, Tensor};

/// `g` (the gradient of a reduction over `dims`, all when `None`) spread
/// back over the input's shape.
fn spread(g: &Tensor, shape: &[usize], dims: Option<Vec<i64>>, keepdim: bool) -> Result<Tensor> {
    let n = shape.len() as i64;
    let g = match dims {
        Some(dims) if !keepdim && n > 0 => {
            let mut dims: Vec<i64> = dims
                .iter()
                .map(|&d| if d < 0 { d + n } else { d })
                .collect();
            dims.sort_unstable();
            dims.dedup();
            let mut g = g.clone();
            for d in dims {
                g = o::unsqueeze(&g, d)?;
            }
            g
        }
        None => o::reshape(g, &vec![1; shape.len()])?,
        _ => g.clone(),
    };
    o::expand(&g, shape)
}

/// The `dim` argument of a reduction: `None`, or the dims (an empty list
/// reduces everything, as PyTorch's `sum(x, [])`).
fn dims(c: &Back<'_>) -> Option<Vec<i64>> {
    let d = c.ints(1);
    (!d.is_empty()).then_some(d)
}

/// Whether a reduction was given `dim` (PyTorch's second overload).
fn has_dim(values: &[Value]) -> bool {
    !matches!(values.get(1), Some(Value::None) | None)
}

pub(crate) fn sum() -> Derivative {
    derivative(
        Name::Pick(|v| {
            if has_dim(v) {
                "SumBackward1"
            } else {
                "SumBackward0"
            }
        }),
        &[],
        |c| {
            let g = spread(&c.grad()?, c.shape(0), dims(c), c.bool(2))?;
            c.set(0, g);
            Ok(())
        },
    )
}

pub(crate) fn mean() -> Derivative {
    derivative(
        Name::Pick(|v| {
            if has_dim(v) {
                "MeanBackward1"
            } else {
                "MeanBackward0"
            }
        }),
        &[],
        |c| {
            let shape = c.shape(0).to_vec();
            let count: usize = match dims(c) {
                None => shape.iter().product(),
                Some(d) => d
                    .iter()
                    .map(|&d| shape[(if d < 0 { d + shape.len() as i64 } else { d }) as usize])
                    .product(),
            };
            let g = spread(&c.grad()?, &shape, dims(c), c.bool(2))?;
            let g = o::mul_s(&g, 1.0 / count as f64)?;
            c.set(0, g);
            Ok(())
        },
    )
}

/// `softmax(x, dim)`'s derivative, from its output `y`: `y (g - Σ g y)`.
pub(crate) fn softmax_grad(g: &Tensor, y: &Tensor, dim: i64) -> Result<Tensor> {
    let gy = o::mul(g, y)?;
    o::mul(y, &o::sub(g, &o::sum(&gy, &[dim], true)?)?)
}

/// `log_softmax`'s: `g - exp(y) Σ g`.
pub(crate) fn log_softmax_grad(g: &Tensor, y: &Tensor, dim: i64) -> Result<Tensor> {
    o::sub(g, &o::mul(&o::unary("exp", y)?, &o::sum(g, &[dim], true)?)?)
}

/// PyTorch's implicit softmax dim for `dim=None` (deprecated form).
pub(crate) fn implicit_dim(ndim: usize) -> i64 {
    if matches!(ndim, 0 | 1 | 3) { 0 } else { 1 }
}

/// `softmax`/`log_softmax` rows: `dim` is parameter 1 (`None` in the
/// functional form means PyTorch's implicit choice).
pub(crate) fn softmax(log: bool) -> Derivative {
    let name = if log {
        "LogSoftmaxBackward0"
    } else {
        "SoftmaxBackward0"
    };
    derivative(name, &[crate::autograd::Save::Out(0)], move |c| {
        let dim = c
            .opt_int(1)
            .unwrap_or_else(|| implicit_dim(c.shape(0).len()));
        let (g, y) = (c.grad()?, c.output(0)?);
        let d = if log {
            log_softmax_grad(&g, &y, dim)?
        } else {
            softmax_grad(&g, &y, dim)?
        };
        c.set(0, d);
        Ok(())
    })
}
