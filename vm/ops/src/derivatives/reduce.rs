//! Reductions.

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Name, derivative};
use crate::value::Value;
use fxvm_tensor::{Result, Tensor};

/// `g` (the gradient of a reduction over `dims`, all when `None`) spread
/// back over the input's shape.
pub(crate) fn spread(
    g: &Tensor,
    shape: &[usize],
    dims: Option<Vec<i64>>,
    keepdim: bool,
) -> Result<Tensor> {
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

/// `var`/`std(input, dim, unbiased, keepdim, correction)`: `2 (x - mean)
/// / (N - correction)` per element (over `2 std` for the deviation);
/// `var_mean`/`std_mean` add the mean's gradient (output 1).
pub(crate) fn variance(sqrt: bool, with_mean: bool) -> Derivative {
    let name = match (sqrt, with_mean) {
        (true, false) => "StdBackward0",
        (false, false) => "VarBackward0",
        (true, true) => "StdMeanBackward0",
        (false, true) => "VarMeanBackward0",
    };
    let saves: &'static [crate::autograd::Save] = if sqrt {
        &[crate::autograd::Save::In(0), crate::autograd::Save::Out(0)]
    } else {
        &[crate::autograd::Save::In(0)]
    };
    derivative(name, saves, move |c| {
        let x = c.input(0)?;
        let shape = x.shape().to_vec();
        let n_dims = shape.len() as i64;
        // `var(x, False)`: the legacy positional `unbiased`.
        let (dims, legacy) = match c.value(1) {
            Value::Ints(d) if !d.is_empty() => (Some(d.clone()), None),
            Value::Bool(b) => (None, Some(*b)),
            _ => (None, None),
        };
        let correction = match c.value(4) {
            Value::Scalar(s) => s.to_f64(),
            _ => {
                let unbiased = legacy.or(match c.value(2) {
                    Value::Bool(b) => Some(*b),
                    _ => None,
                });
                if unbiased.unwrap_or(true) { 1.0 } else { 0.0 }
            }
        };
        let keepdim = c.bool(3);
        let all: Vec<i64> = (0..n_dims).collect();
        let reduced = dims.clone().unwrap_or_else(|| all.clone());
        let count: usize = reduced
            .iter()
            .map(|&d| shape[(if d < 0 { d + n_dims } else { d }) as usize])
            .product();
        let mean = o::call(
            "mean",
            vec![
                Value::Tensor(x.clone()),
                Value::Ints(reduced),
                Value::Bool(true),
            ],
            vec![],
        )?;
        if let Some(g) = c.grad_n(0) {
            let centered = o::sub(&x, &mean)?;
            let g = spread(&g, &shape, dims.clone(), keepdim)?;
            let scale = 1.0 / (count as f64 - correction);
            let d = if sqrt {
                let std = spread(&c.output(0)?, &shape, dims.clone(), keepdim)?;
                o::div(&o::mul_s(&o::mul(&g, &centered)?, scale)?, &std)?
            } else {
                o::mul_s(&o::mul(&g, &centered)?, 2.0 * scale)?
            };
            c.add(0, d)?;
        }
        if let Some(g) = c.grad_n(1).filter(|_| with_mean) {
            let d = o::mul_s(&spread(&g, &shape, dims, keepdim)?, 1.0 / count as f64)?;
            c.add(0, d)?;
        }
        Ok(())
    })
}
