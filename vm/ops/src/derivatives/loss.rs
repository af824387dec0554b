//! Losses.

use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Save, derivative};
use crate::value::Value;

fn reduction(v: &Value) -> &str {
    match v {
        Value::Str(s) => s,
        _ => "mean",
    }
}

/// The gradient of `nll_loss` with respect to its (log-probability)
/// input: `-w[t] g` at each target class (divided by the total weight
/// for `mean`), zero elsewhere and at ignored targets.
fn nll_grad(
    g: &Tensor,
    input_shape: &[usize],
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore_index: i64,
    reduction: &str,
) -> Result<Tensor> {
    let class_dim = if input_shape.len() == 1 { 0 } else { 1 };
    let valid = o::cmp_s("ne", target, ignore_index as f64)?;
    let t0 = o::mask(&valid, target)?;
    let ones = Tensor::full(target.shape(), fxvm_tensor::Scalar::Float(1.0), g.dtype());
    let w = match weight {
        Some(w) => {
            let flat = o::reshape(&t0, &[t0.numel()])?;
            let picked = o::call(
                "index_select",
                vec![Value::Tensor(w.clone()), Value::Int(0), Value::Tensor(flat)],
                vec![],
            )?;
            o::reshape(&picked, target.shape())?
        }
        None => ones,
    };
    let w = o::mask(&valid, &w)?;
    let coeff = match reduction {
        "mean" => o::div(&o::mul(&o::neg(g)?, &w)?, &o::sum(&w, &[], false)?)?,
        _ => o::mul(&o::neg(g)?, &w)?,
    };
    // Ignored targets take +0 (`-g * 0` would be -0).
    let coeff = o::mask(&valid, &coeff)?;
    let zeros = o::zeros(input_shape, g.dtype());
    o::call(
        "scatter",
        vec![
            Value::Tensor(zeros),
            Value::Int(class_dim),
            Value::Tensor(o::unsqueeze(&t0, class_dim)?),
            Value::Tensor(o::unsqueeze(&coeff, class_dim)?),
        ],
        vec![],
    )
}

/// `nll_loss(input, target, weight, size_average, ignore_index, reduce, reduction)`.
pub(crate) fn nll_loss() -> Derivative {
    derivative("NllLossBackward0", &[Save::In(1), Save::In(2)], |c| {
        let d = nll_grad(
            &c.grad()?,
            c.shape(0),
            &c.input(1)?,
            c.opt_input(2)?.as_ref(),
            c.int(4),
            reduction(c.value(6)),
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `cross_entropy(input, target, weight, size_average, ignore_index,
/// reduce, reduction, label_smoothing)` with class-index targets: the
/// gradient of `nll_loss(log_softmax(input))`.
pub(crate) fn cross_entropy() -> Derivative {
    derivative(
        "NllLossBackward0",
        &[Save::In(0), Save::In(1), Save::In(2)],
        |c| {
            let target = c.input(1)?;
            if target.dtype().is_float() || c.float(7) != 0.0 {
                return Err(TensorError::not_implemented(
                    "the derivative for 'cross_entropy' with probability targets or label_smoothing is not implemented.",
                ));
            }
            let x = c.input(0)?;
            let dim = if x.ndim() == 1 { 0 } else { 1 };
            let logp = o::call(
                "log_softmax",
                vec![Value::Tensor(x.clone()), Value::Int(dim), Value::None],
                vec![],
            )?;
            let dlogp = nll_grad(
                &c.grad()?,
                x.shape(),
                &target,
                c.opt_input(2)?.as_ref(),
                c.int(4),
                reduction(c.value(6)),
            )?;
            let d = super::reduce::log_softmax_grad(&dlogp, &logp, dim)?;
            c.set(0, d);
            Ok(())
        },
    )
}

/// `mse_loss(input, target, size_average, reduce, reduction, weight)`.
pub(crate) fn mse_loss() -> Derivative {
    derivative(
        "MseLossBackward0",
        &[Save::In(0), Save::In(1), Save::In(5)],
        |c| {
            let (x, t, g) = (c.input(0)?, c.input(1)?, c.grad()?);
            let n = x.numel().max(t.numel()) as f64;
            let scale = if reduction(c.value(4)) == "mean" {
                2.0 / n
            } else {
                2.0
            };
            let mut d = o::mul(&o::mul_s(&o::sub(&x, &t)?, scale)?, &g)?;
            if let Some(w) = c.opt_input(5)? {
                d = o::mul(&d, &w)?;
            }
            if c.needs(1) {
                let nd = o::neg(&d)?;
                c.set(1, nd);
            }
            c.set(0, d);
            Ok(())
        },
    )
}
