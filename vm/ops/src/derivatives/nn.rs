//! Activations and dropout.

use std::f64::consts::PI;
use std::sync::Arc;

use fxvm_tensor::autograd::GradMode;
use fxvm_tensor::ops::attention::{self, FlashForm};
use fxvm_tensor::{Result, Tensor};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Save, derivative};
use crate::value::Value;

/// `gelu(input, approximate)`: ATen's `gelu_backward`.
pub(crate) fn gelu() -> Derivative {
    derivative("GeluBackward0", &[Save::In(0)], |c| {
        let g = o::call(
            "gelu_backward",
            vec![o::value(&c.grad()?), o::value(&c.input(0)?)],
            vec![("approximate", c.value(1).clone())],
        )?;
        c.set(0, g);
        Ok(())
    })
}

/// `gelu_backward(grad, input, approximate)`: linear in the gradient; in
/// the input, the gradient times gelu's second derivative.
pub(crate) fn gelu_backward() -> Derivative {
    derivative("GeluBackwardBackward0", &[Save::In(0), Save::In(1)], |c| {
        let gg = c.grad()?;
        let x = c.input(1)?;
        let approximate = c.value(2).clone();
        if c.needs(0) {
            let d = o::call(
                "gelu_backward",
                vec![o::value(&gg), o::value(&x)],
                vec![("approximate", approximate.clone())],
            )?;
            c.set(0, d);
        }
        if c.needs(1) {
            let tanh = matches!(&approximate, Value::Str(s) if s == "tanh");
            let curve = if tanh {
                gelu_tanh_curvature(&x)?
            } else {
                gelu_curvature(&x)?
            };
            let d = o::mul(&o::mul(&gg, &c.input(0)?)?, &curve)?;
            c.set(1, d);
        }
        Ok(())
    })
}

/// gelu''(x) = φ(x)·(2 - x²).
fn gelu_curvature(x: &Tensor) -> Result<Tensor> {
    let pdf = o::mul_s(
        &o::unary("exp", &o::mul_s(&o::mul(x, x)?, -0.5)?)?,
        1.0 / (2.0 * PI).sqrt(),
    )?;
    o::mul(&pdf, &o::add_s(&o::neg(&o::mul(x, x)?)?, 2.0)?)
}

/// The second derivative of `0.5 x (1 + tanh(u))`, u = k (x + c x³):
/// `(1 - t²) u' + x (1 - t²) (u'' - 2 t u'²) / 2`.
fn gelu_tanh_curvature(x: &Tensor) -> Result<Tensor> {
    let (k, c) = ((2.0 / PI).sqrt(), 0.044715);
    let x2 = o::mul(x, x)?;
    let u = o::mul_s(&o::add(x, &o::mul_s(&o::mul(&x2, x)?, c)?)?, k)?;
    let t = o::unary("tanh", &u)?;
    let du = o::mul_s(&o::add_s(&o::mul_s(&x2, 3.0 * c)?, 1.0)?, k)?;
    let ddu = o::mul_s(x, 6.0 * c * k)?;
    let sech2 = o::add_s(&o::neg(&o::mul(&t, &t)?)?, 1.0)?;
    let bend = o::sub(&ddu, &o::mul_s(&o::mul(&t, &o::mul(&du, &du)?)?, 2.0)?)?;
    let right = o::mul_s(&o::mul(&o::mul(x, &sech2)?, &bend)?, 0.5)?;
    o::add(&o::mul(&sech2, &du)?, &right)
}

/// `threshold_backward(grad, input, threshold)`: the gradient passes where
/// the input did, so its own gradient does too (none reaches the input).
pub(crate) fn threshold_backward() -> Derivative {
    derivative("ThresholdBackwardBackward0", &[Save::In(1)], |c| {
        let d = o::call(
            "threshold_backward",
            vec![
                o::value(&c.grad()?),
                o::value(&c.input(1)?),
                c.value(2).clone(),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// Dropout with history: the mask is drawn by the kernel itself on ones
/// (the same draws as on the input, so the random stream moves as it
/// would), then multiplied in — `x * mask` is what the gradient follows.
/// Alpha dropout (`alpha`) maps the input affinely: `x * scale + shift`,
/// both from the mask of kept elements, which are the positive ones of the
/// ones input's output.
pub(crate) fn dropout(alpha: bool) -> Derivative {
    Derivative::Decompose(Arc::new(move |op, mut values: Vec<Value>| {
        let kernel = |v| crate::tape::run_plain(op, v);
        let Value::Tensor(x) = values[0].clone() else {
            return kernel(values);
        };
        let p = match values[1] {
            Value::Float(p) => p,
            _ => 0.5,
        };
        // Laid out as the input: the kernel draws in memory order.
        values[0] = Value::Tensor(o::call("ones_like", vec![o::value(&x)], vec![])?);
        let mask = {
            let _off = GradMode::set(false);
            kernel(values)?
        };
        let Value::Tensor(m) = mask else {
            // Not training: the input itself.
            return Ok(mask);
        };
        // p of 0 or 1 keeps or zeroes the input whatever the kind.
        if !alpha || p <= 0.0 || p >= 1.0 || x.numel() == 0 {
            return o::mul(&x, &m).map(Value::Tensor);
        }
        let (scale, shift) = {
            let _off = GradMode::set(false);
            let kept = o::call(
                "gt",
                vec![Value::Tensor(m), o::value(&Tensor::zeros(&[], x.dtype()))],
                vec![],
            )?;
            fxvm_tensor::ops::create::alpha_dropout_affine(&kept.to_dtype(x.dtype()), p)?
        };
        o::add(&o::mul(&x, &scale)?, &shift).map(Value::Tensor)
    }))
}

/// `g * slope(x)` where the slope is computed from the saved input and the
/// row's other arguments.
pub(crate) fn sloped(
    name: impl Into<crate::autograd::Name>,
    slope: fn(&Tensor, &crate::autograd::Back<'_>) -> Result<Tensor>,
) -> Derivative {
    derivative(name, &[Save::In(0)], move |c| {
        let d = slope(&c.input(0)?, c)?;
        let g = o::mul(&c.grad()?, &d)?;
        c.set(0, g);
        Ok(())
    })
}

/// 1 where `lo < x < hi`, else 0, in `x`'s dtype.
fn inside(x: &Tensor, lo: f64, hi: f64) -> Result<Tensor> {
    let above = o::cmp_s("gt", x, lo)?;
    let below = o::cmp_s("lt", x, hi)?;
    let both = o::call(
        "logical_and",
        vec![Value::Tensor(above), Value::Tensor(below)],
        vec![],
    )?;
    o::to_dtype(&both, x.dtype())
}

/// `softplus(input, beta, threshold)`: σ(βx), or 1 where βx > threshold.
pub(crate) fn softplus() -> Derivative {
    sloped("SoftplusBackward0", |x, c| {
        let beta = c.scalar(1).to_f64();
        let bx = o::mul_s(x, beta)?;
        let linear = o::cmp_s("gt", &bx, c.scalar(2).to_f64())?;
        let ones = o::add_s(&o::mul_s(x, 0.0)?, 1.0)?;
        o::select_where(&linear, &ones, &o::unary("sigmoid", &bx)?)
    })
}

/// `hardtanh(input, min_val, max_val)` (and `relu6`: 0 and 6): the
/// gradient strictly inside the bounds, +0 outside.
pub(crate) fn hardtanh(bounds: Option<(f64, f64)>) -> Derivative {
    derivative("HardtanhBackward0", &[Save::In(0)], move |c| {
        let (lo, hi) = bounds.unwrap_or((c.float(1), c.float(2)));
        let x = c.input(0)?;
        let both = o::call(
            "logical_and",
            vec![
                Value::Tensor(o::cmp_s("gt", &x, lo)?),
                Value::Tensor(o::cmp_s("lt", &x, hi)?),
            ],
            vec![],
        )?;
        let g = o::mask(&both, &c.grad()?)?;
        c.set(0, g);
        Ok(())
    })
}

/// `leaky_relu(input, negative_slope)` (in place: `…Backward1`).
pub(crate) fn leaky_relu(name: crate::autograd::Name) -> Derivative {
    sloped(name, |x, c| {
        let positive = o::cmp_s("gt", x, 0.0)?;
        let one = o::add_s(&o::mul_s(x, 0.0)?, 1.0)?;
        o::select_where(&positive, &one, &o::add_s(&o::mul_s(x, 0.0)?, c.float(1))?)
    })
}

/// `elu(input, alpha)`: 1 above zero, α eˣ below (in place: `…Backward1`).
pub(crate) fn elu(name: crate::autograd::Name) -> Derivative {
    sloped(name, |x, c| {
        let positive = o::cmp_s("gt", x, 0.0)?;
        let one = o::add_s(&o::mul_s(x, 0.0)?, 1.0)?;
        o::select_where(
            &positive,
            &one,
            &o::mul_s(&o::unary("exp", x)?, c.float(1))?,
        )
    })
}

/// `hardsigmoid`: 1/6 inside (-3, 3).
pub(crate) fn hardsigmoid() -> Derivative {
    sloped("HardsigmoidBackward0", |x, _| {
        o::mul_s(&inside(x, -3.0, 3.0)?, 1.0 / 6.0)
    })
}

/// `hardswish`: x/3 + 1/2 inside [-3, 3], 1 above.
pub(crate) fn hardswish() -> Derivative {
    sloped("HardswishBackward0", |x, _| {
        let mid = o::add_s(&o::mul_s(x, 1.0 / 3.0)?, 0.5)?;
        let above = o::cmp_s("gt", x, 3.0)?;
        let below = o::cmp_s("lt", x, -3.0)?;
        let one = o::add_s(&o::mul_s(x, 0.0)?, 1.0)?;
        let d = o::select_where(&above, &one, &mid)?;
        o::mask(&o::unary("logical_not", &below)?, &d)
    })
}

/// `log_sigmoid`: σ(-x).
pub(crate) fn log_sigmoid() -> Derivative {
    sloped("LogSigmoidBackward0", |x, _| {
        o::unary("sigmoid", &o::neg(x)?)
    })
}

/// `scaled_dot_product_attention` with history, as PyTorch's math
/// backend composes it: `softmax(q kᵀ · scale + mask) v` (causal and
/// boolean masks fill -inf), dropout on the weights, shared key/value
/// heads repeated for grouped queries.
pub(crate) fn attention() -> Derivative {
    Derivative::Decompose(Arc::new(|_op, values: Vec<Value>| {
        let tensor = |v: &Value| match v {
            Value::Tensor(t) => Some(t.clone()),
            _ => None,
        };
        let (Some(q), Some(mut k), Some(mut v)) =
            (tensor(&values[0]), tensor(&values[1]), tensor(&values[2]))
        else {
            return _op.run_plain(values);
        };
        let mask = tensor(&values[3]);
        if let Some(out) = flash_recorded(&q, &k, &v, mask.as_ref(), &values)? {
            return Ok(Value::Tensor(out));
        }
        let dropout_p = match values[4] {
            Value::Float(p) => p,
            _ => 0.0,
        };
        let causal = matches!(values[5], Value::Bool(true));
        let scale = match values[6] {
            Value::Float(s) => s,
            _ => attention::default_scale(&q),
        };
        if matches!(values[7], Value::Bool(true)) && q.ndim() >= 3 && k.ndim() >= 3 {
            let (hq, hk) = (q.shape()[q.ndim() - 3], k.shape()[k.ndim() - 3]);
            if hk > 0 && hq != hk {
                let repeat = |t: &Tensor| {
                    o::call(
                        "repeat_interleave",
                        vec![
                            Value::Tensor(t.clone()),
                            Value::Int((hq / hk) as i64),
                            Value::Int(-3),
                        ],
                        vec![],
                    )
                };
                k = repeat(&k)?;
                v = repeat(&v)?;
            }
        }
        let mut scores = o::mul_s(&o::matmul(&q, &o::mt(&k)?)?, scale)?;
        let (l, s) = (q.shape()[q.ndim() - 2], k.shape()[k.ndim() - 2]);
        let fill = |scores: &Tensor, keep: &Tensor| {
            o::call(
                "masked_fill",
                vec![
                    Value::Tensor(scores.clone()),
                    Value::Tensor(o::unary("logical_not", keep)?),
                    Value::Scalar(fxvm_tensor::Scalar::Float(f64::NEG_INFINITY)),
                ],
                vec![],
            )
        };
        if causal {
            let ones = o::full(
                &[l, s],
                fxvm_tensor::Scalar::Bool(true),
                fxvm_tensor::DType::Bool,
            )?;
            let keep = o::call("tril", vec![Value::Tensor(ones), Value::Int(0)], vec![])?;
            scores = fill(&scores, &keep)?;
        }
        if let Some(m) = mask {
            scores = if m.dtype() == fxvm_tensor::DType::Bool {
                fill(&scores, &m)?
            } else {
                o::add(&scores, &m)?
            };
        }
        // PyTorch's safe softmax: a row masking every key gives zeros (its
        // scores are zeroed first so that neither value nor gradient is NaN).
        let ninf = Value::Scalar(fxvm_tensor::Scalar::Float(f64::NEG_INFINITY));
        let is_ninf = o::call("eq", vec![Value::Tensor(scores.clone()), ninf], vec![])?;
        let all_masked = o::call(
            "all",
            vec![Value::Tensor(is_ninf), Value::Int(-1), Value::Bool(true)],
            vec![],
        )?;
        let zero = Value::Scalar(fxvm_tensor::Scalar::Float(0.0));
        let scores = o::call(
            "masked_fill",
            vec![
                Value::Tensor(scores),
                Value::Tensor(all_masked.clone()),
                zero.clone(),
            ],
            vec![],
        )?;
        let weights = o::call(
            "softmax",
            vec![Value::Tensor(scores), Value::Int(-1), Value::None],
            vec![],
        )?;
        let mut weights = o::call(
            "masked_fill",
            vec![Value::Tensor(weights), Value::Tensor(all_masked), zero],
            vec![],
        )?;
        if dropout_p > 0.0 {
            let dropout = crate::registry()
                .functional("dropout")
                .expect("a dropout row");
            weights = match dropout.call(
                vec![
                    Value::Tensor(weights),
                    Value::Float(dropout_p),
                    Value::Bool(true),
                ],
                vec![],
            )? {
                Value::Tensor(t) => t,
                _ => unreachable!("dropout in training returns a tensor"),
            };
        }
        o::matmul(&weights, &v).map(Value::Tensor)
    }))
}

/// Attention as PyTorch's CPU build records it where it runs flash
/// attention: the flash row with its own node (3-d operands unsqueezed into
/// one batch, the output squeezed back); `None` for the other calls. A mask
/// requiring grad takes the composed path, which differentiates it.
fn flash_recorded(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    values: &[Value],
) -> Result<Option<Tensor>> {
    let dropout_p = match values[4] {
        Value::Float(p) => p,
        _ => 0.0,
    };
    let gqa = matches!(values[7], Value::Bool(true));
    if mask.is_some_and(Tensor::requires_grad) {
        return Ok(None);
    }
    let Some(form) = attention::flash_form(q, k, v, mask, dropout_p, gqa) else {
        return Ok(None);
    };
    let batched = |t: &Tensor| match form {
        FlashForm::Batched => Ok(t.clone()),
        FlashForm::Unbatched => o::unsqueeze(t, 0),
    };
    let mask = mask.map_or(Value::None, |m| {
        Value::Tensor(attention::additive_mask(m, q.dtype()))
    });
    let out = o::call_value(
        "_scaled_dot_product_flash_attention_for_cpu",
        vec![
            o::value(&batched(q)?),
            o::value(&batched(k)?),
            o::value(&batched(v)?),
            Value::Float(0.0),
            values[5].clone(),
        ],
        vec![("attn_mask", mask), ("scale", values[6].clone())],
    )?;
    let Value::Tuple(mut parts) = out else {
        unreachable!("flash attention returns its output and log-sum-exp")
    };
    let Value::Tensor(out) = parts.swap_remove(0) else {
        unreachable!("flash attention's output is a tensor")
    };
    match form {
        FlashForm::Batched => Ok(Some(out)),
        FlashForm::Unbatched => {
            o::call("squeeze", vec![o::value(&out), Value::Int(0)], vec![]).map(Some)
        }
    }
}

/// `_scaled_dot_product_flash_attention_for_cpu`: its backward row, from
/// the saved operands, mask, output and log-sum-exp — itself without a
/// derivative, as PyTorch's.
pub(crate) fn flash_attention() -> Derivative {
    derivative(
        "ScaledDotProductFlashAttentionForCpuBackward0",
        &[
            Save::In(0),
            Save::In(1),
            Save::In(2),
            Save::In(5),
            Save::Out(0),
            Save::Out(1),
        ],
        |c| {
            let mask = c.opt_input(5)?.map_or(Value::None, Value::Tensor);
            let grads = o::call_value(
                "_scaled_dot_product_flash_attention_for_cpu_backward",
                vec![
                    o::value(&c.grad()?),
                    o::value(&c.input(0)?),
                    o::value(&c.input(1)?),
                    o::value(&c.input(2)?),
                    o::value(&c.output(0)?),
                    o::value(&c.output(1)?),
                    Value::Float(c.float(3)),
                    Value::Bool(c.bool(4)),
                ],
                vec![("attn_mask", mask), ("scale", c.value(6).clone())],
            )?;
            let Value::Tuple(parts) = grads else {
                unreachable!("the backward returns three gradients")
            };
            for (i, part) in parts.into_iter().enumerate() {
                if c.needs(i)
                    && let Value::Tensor(t) = part
                {
                    c.set(i, t);
                }
            }
            Ok(())
        },
    )
}
