//! Activations beyond the common ones: CELU/SELU, shrinkage, thresholds,
//! PReLU, GLU.

use std::sync::Arc;

use fxvm_tensor::autograd::GradMode;
use fxvm_tensor::{Result, Tensor};

use super::nn::sloped;
use crate::autograd::ops as o;
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

const SELU_ALPHA: f64 = 1.673_263_242_354_377_3;
const SELU_SCALE: f64 = 1.050_700_987_355_480_5;

/// `scale` above zero, `scale · α · exp(x / α)` below (ELU's family).
fn elu_slope(x: &Tensor, alpha: f64, scale: f64, input_scale: f64) -> Result<Tensor> {
    let positive = o::cmp_s("gt", x, 0.0)?;
    let above = o::add_s(&o::mul_s(x, 0.0)?, scale)?;
    let below = o::mul_s(
        &o::unary("exp", &o::mul_s(x, input_scale)?)?,
        alpha * scale * input_scale,
    )?;
    o::select_where(&positive, &above, &below)
}

/// `celu(input, alpha)`: 1 above zero, `exp(x / α)` below.
pub(crate) fn celu(name: Name) -> Derivative {
    sloped(name, |x, c| {
        let alpha = c.float(1);
        elu_slope(x, alpha, 1.0, 1.0 / alpha)
    })
}

/// `selu(input)`: ELU with PyTorch's fixed scale and α (its node is ELU's).
pub(crate) fn selu(name: Name) -> Derivative {
    sloped(name, |x, _| elu_slope(x, SELU_ALPHA, SELU_SCALE, 1.0))
}

/// The gradient where `keep(x)`, zero (+0) elsewhere.
fn masked(
    name: impl Into<Name>,
    keep: fn(&Tensor, &crate::autograd::Back<'_>) -> Result<Tensor>,
) -> Derivative {
    derivative(name, &[Save::In(0)], move |c| {
        let kept = keep(&c.input(0)?, c)?;
        let g = o::mask(&kept, &c.grad()?)?;
        c.set(0, g);
        Ok(())
    })
}

/// Where `|x| > λ` (hardshrink and softshrink alike).
fn outside(x: &Tensor, c: &crate::autograd::Back<'_>) -> Result<Tensor> {
    o::cmp_s("gt", &o::unary("abs", x)?, c.scalar(1).to_f64())
}

pub(crate) fn hardshrink() -> Derivative {
    masked("HardshrinkBackward0", outside)
}

pub(crate) fn softshrink() -> Derivative {
    masked("SoftshrinkBackward0", outside)
}

/// `threshold(input, threshold, value[, inplace])` and `threshold_`: the
/// gradient above the threshold (PyTorch's in-place node is `…1`).
pub(crate) fn threshold(in_place: bool) -> Derivative {
    let name: Name = if in_place {
        "ThresholdBackward1".into()
    } else {
        Name::Pick(|v| in_place_flag(v, 3, "ThresholdBackward0", "ThresholdBackward1"))
    };
    masked(name, |x, c| o::cmp_s("gt", x, c.float(1)))
}

/// `a`, or `b` when the call's `inplace` flag (parameter `i`) is set.
pub(crate) fn in_place_flag(
    values: &[crate::value::Value],
    i: usize,
    a: &'static str,
    b: &'static str,
) -> &'static str {
    match values.get(i) {
        Some(crate::value::Value::Bool(true)) => b,
        _ => a,
    }
}

/// `prelu(input, weight)`: the slope below zero is the channel's weight,
/// whose gradient is `g · x` there, summed over all but the channel dim.
pub(crate) fn prelu() -> Derivative {
    derivative("PreluKernelBackward0", &[Save::In(0), Save::In(1)], |c| {
        let (x, w, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let mut shape = vec![1; x.ndim().max(1)];
        if x.ndim() >= 2 {
            shape[1] = w.numel();
        }
        let slope = o::reshape(&w, &shape)?;
        let positive = o::cmp_s("gt", &x, 0.0)?;
        if c.needs(0) {
            let d = o::select_where(&positive, &g, &o::mul(&g, &slope)?)?;
            c.set(0, d);
        }
        if c.needs(1) {
            let below = o::mask(&o::unary("logical_not", &positive)?, &o::mul(&g, &x)?)?;
            let dims: Vec<i64> = (0..below.ndim() as i64)
                .filter(|&d| !(x.ndim() >= 2 && d == 1 && w.numel() > 1))
                .collect();
            let d = o::reshape(&o::sum(&below, &dims, false)?, c.shape(1))?;
            c.set(1, d);
        }
        Ok(())
    })
}

/// `glu(input, dim)` = `a σ(b)` for the halves `a`, `b`.
pub(crate) fn glu() -> Derivative {
    derivative("GluBackward0", &[Save::In(0)], |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        let dim = c.int(1);
        let d = if dim < 0 { dim + x.ndim() as i64 } else { dim };
        let half = x.shape()[d as usize] / 2;
        let a = o::narrow(&x, d, 0, half)?;
        let s = o::unary("sigmoid", &o::narrow(&x, d, half, half)?)?;
        let ga = o::mul(&g, &s)?;
        let gb = o::mul(&o::mul(&ga, &a)?, &o::add_s(&o::neg(&s)?, 1.0)?)?;
        c.set(0, o::cat(&[ga, gb], d)?);
        Ok(())
    })
}

/// How an rrelu row reads its call: the slopes its input is multiplied by
/// (drawn as the kernel draws them), and whether it writes in place.
pub(crate) type RreluCall = fn(&[Value]) -> Result<(Tensor, bool)>;

/// `rrelu`: the input times its slopes (drawn without history, as the
/// kernel draws them), so the gradient is the output's times the slopes;
/// in place, a `mul_` into the input.
pub(crate) fn rrelu(call: RreluCall) -> Derivative {
    Derivative::Decompose(Arc::new(move |_op, values: Vec<Value>| {
        let (slopes, in_place) = {
            let _off = GradMode::set(false);
            call(&values)?
        };
        let name = if in_place { "mul_" } else { "mul" };
        o::call_value(name, vec![values[0].clone(), Value::Tensor(slopes)], vec![])
    }))
}
