//! Losses.

use std::sync::Arc;

use fxvm_tensor::ops::nn::Reduction;
use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Name, Save, derivative};
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
    let ones = o::full(target.shape(), fxvm_tensor::Scalar::Float(1.0), g.dtype())?;
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
    let zeros = o::zeros(input_shape, g.dtype())?;
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
/// reduce, reduction, label_smoothing)`: the gradient of the log-softmax
/// it takes the loss of, through `log_softmax`'s. Class-index targets give
/// `nll_loss`'s gradient, mixed with the uniform one (`-w_c g / C` per
/// class) when smoothing; probability targets give `-g t_c w_c`, with
/// smoothing mixed into the targets.
pub(crate) fn cross_entropy() -> Derivative {
    // PyTorch's node: nll_loss's, or the last op of its composite forms.
    fn name(values: &[Value]) -> &'static str {
        let probabilities = matches!(&values[1], Value::Tensor(t) if t.dtype().is_float());
        let mean = !matches!(&values[6], Value::Str(s) if s != "mean");
        match (probabilities, &values[7]) {
            (true, _) if mean => "DivBackward1",
            (true, _) => "NegBackward0",
            (false, Value::Float(e)) if *e > 0.0 => "AddBackward0",
            _ => "NllLossBackward0",
        }
    }
    derivative(
        Name::Pick(name),
        &[Save::In(0), Save::In(1), Save::In(2)],
        |c| {
            if c.needs(1) {
                return Err(TensorError::not_implemented(
                    "the derivative of 'cross_entropy' with respect to target is not implemented.",
                ));
            }
            let (x, target) = (c.input(0)?, c.input(1)?);
            let weight = c.opt_input(2)?;
            let smoothing = c.float(7);
            let r = reduction_of(c, Some((3, 5)), 6)?;
            let dim = if x.ndim() == 1 { 0 } else { 1 };
            let classes = x.shape()[dim as usize] as f64;
            let logp = o::call(
                "log_softmax",
                vec![Value::Tensor(x.clone()), Value::Int(dim), Value::None],
                vec![],
            )?;
            let g = c.grad()?;
            // A per-class weight broadcast along the class dim.
            let class_weight = |t: &Tensor| -> Result<Tensor> {
                match &weight {
                    Some(w) => {
                        let mut shape = vec![1; x.ndim()];
                        shape[dim as usize] = w.numel();
                        o::mul(t, &o::reshape(w, &shape)?)
                    }
                    None => Ok(t.clone()),
                }
            };
            let dlogp = if target.dtype().is_float() {
                let t = if smoothing > 0.0 {
                    o::add_s(&o::mul_s(&target, 1.0 - smoothing)?, smoothing / classes)?
                } else {
                    target.clone()
                };
                let per_sample = x.numel() as f64 / classes;
                let g = match r {
                    Reduction::Mean => o::mul_s(&g, 1.0 / per_sample)?,
                    _ => g,
                };
                let g = if r == Reduction::None {
                    o::unsqueeze(&g, dim)?
                } else {
                    g
                };
                o::neg(&o::mul(&class_weight(&t)?, &g)?)?
            } else {
                let ignore = c.int(4);
                let name = match r {
                    Reduction::Mean => "mean",
                    Reduction::Sum => "sum",
                    Reduction::None => "none",
                };
                let nll = nll_grad(&g, x.shape(), &target, weight.as_ref(), ignore, name)?;
                if smoothing > 0.0 {
                    // -w_c g / C for every class of each counted sample.
                    let valid = o::cmp_s("ne", &target, ignore as f64)?;
                    let per_sample = match r {
                        Reduction::Mean => {
                            let counted = match &weight {
                                Some(w) => {
                                    let t0 = o::mask(&valid, &target)?;
                                    let flat = o::reshape(&t0, &[t0.numel()])?;
                                    let picked = o::call(
                                        "index_select",
                                        vec![
                                            Value::Tensor(w.clone()),
                                            Value::Int(0),
                                            Value::Tensor(flat),
                                        ],
                                        vec![],
                                    )?;
                                    let picked = o::reshape(&picked, target.shape())?;
                                    o::sum(&o::mask(&valid, &picked)?, &[], false)?
                                }
                                None => o::sum(&o::to_dtype(&valid, g.dtype())?, &[], false)?,
                            };
                            o::expand(&o::div(&g, &counted)?, target.shape())?
                        }
                        Reduction::Sum => o::expand(&g, target.shape())?,
                        Reduction::None => g.clone(),
                    };
                    let per_sample = o::mask(&valid, &per_sample)?;
                    let uniform = o::mul_s(&o::unsqueeze(&per_sample, dim)?, -smoothing / classes)?;
                    let uniform = class_weight(&o::expand(&uniform, x.shape())?)?;
                    o::add(&o::mul_s(&nll, 1.0 - smoothing)?, &uniform)?
                } else {
                    nll
                }
            };
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

/// The reduction of a loss row: the legacy `size_average`/`reduce` flags
/// (parameters `legacy`, when the row has them) or the string at `name`.
fn reduction_of(c: &Back<'_>, legacy: Option<(usize, usize)>, name: usize) -> Result<Reduction> {
    let flag = |i: usize| match c.value(i) {
        Value::Bool(b) => Some(*b),
        _ => None,
    };
    let (sa, re) = legacy.map_or((None, None), |(a, b)| (flag(a), flag(b)));
    Reduction::from_args(sa, re, reduction(c.value(name)))
}

/// The gradient of a reduced loss spread over the elementwise losses of
/// `shape` (divided by their count for a mean).
fn unreduce(g: &Tensor, shape: &[usize], r: Reduction) -> Result<Tensor> {
    match r {
        Reduction::None => Ok(g.clone()),
        Reduction::Sum => o::expand(g, shape),
        Reduction::Mean => {
            let n = shape.iter().product::<usize>().max(1);
            o::mul_s(&o::expand(g, shape)?, 1.0 / n as f64)
        }
    }
}

/// `g` times the optional per-element weight (parameter `i`).
fn weighted(c: &Back<'_>, g: Tensor, i: usize) -> Result<Tensor> {
    match c.opt_input(i)? {
        Some(w) => o::mul(&g, &w),
        None => Ok(g),
    }
}

fn refuse_grad(c: &Back<'_>, i: usize, op: &str, what: &str) -> Result<()> {
    if c.needs(i) {
        return Err(TensorError::not_implemented(format!(
            "the derivative of '{op}' with respect to {what} is not implemented."
        )));
    }
    Ok(())
}

/// `binary_cross_entropy(input, target, weight, size_average, reduce,
/// reduction)`: `(x - t) / max(x (1 - x), 1e-12)` for the input, and
/// `log(1 - x) - log(x)` (each clamped at -100) for the target.
pub(crate) fn binary_cross_entropy() -> Derivative {
    derivative(
        "BinaryCrossEntropyBackward0",
        &[Save::In(0), Save::In(1), Save::In(2)],
        |c| {
            refuse_grad(c, 2, "binary_cross_entropy", "weight")?;
            let (x, t) = (c.input(0)?, c.input(1)?);
            let r = reduction_of(c, Some((3, 4)), 5)?;
            let g = weighted(c, unreduce(&c.grad()?, x.shape(), r)?, 2)?;
            if c.needs(0) {
                let one_minus = o::add_s(&o::neg(&x)?, 1.0)?;
                let denom = o::clamp_min(&o::mul(&x, &one_minus)?, 1e-12)?;
                c.set(0, o::div(&o::mul(&g, &o::sub(&x, &t)?)?, &denom)?);
            }
            if c.needs(1) {
                let log = |v: &Tensor| o::clamp_min(&o::unary("log", v)?, -100.0);
                let one_minus = o::add_s(&o::neg(&x)?, 1.0)?;
                c.set(1, o::mul(&g, &o::sub(&log(&one_minus)?, &log(&x)?)?)?);
            }
            Ok(())
        },
    )
}

/// `binary_cross_entropy_with_logits(input, target, weight, size_average,
/// reduce, reduction, pos_weight)`: `σ(x) (p t + 1 - t) - p t` for the
/// input, `log σ(-x) - p log σ(x)` for the target.
pub(crate) fn binary_cross_entropy_with_logits() -> Derivative {
    derivative(
        "BinaryCrossEntropyWithLogitsBackward0",
        &[Save::In(0), Save::In(1), Save::In(2), Save::In(6)],
        |c| {
            let op = "binary_cross_entropy_with_logits";
            refuse_grad(c, 2, op, "weight")?;
            refuse_grad(c, 6, op, "pos_weight")?;
            let (x, t) = (c.input(0)?, c.input(1)?);
            let r = reduction_of(c, Some((3, 4)), 5)?;
            let g = weighted(c, unreduce(&c.grad()?, x.shape(), r)?, 2)?;
            let p = c.opt_input(6)?;
            if c.needs(0) {
                let s = o::unary("sigmoid", &x)?;
                let d = match &p {
                    Some(p) => {
                        let pt = o::mul(p, &t)?;
                        let coeff = o::add_s(&o::sub(&pt, &t)?, 1.0)?;
                        o::sub(&o::mul(&s, &coeff)?, &pt)?
                    }
                    None => o::sub(&s, &t)?,
                };
                c.set(0, o::mul(&g, &d)?);
            }
            if c.needs(1) {
                let log_sig = |v: &Tensor| o::neg(&o::unary("softplus", &o::neg(v)?)?);
                let pos = log_sig(&x)?;
                let pos = match &p {
                    Some(p) => o::mul(p, &pos)?,
                    None => pos,
                };
                let d = o::sub(&log_sig(&o::neg(&x)?)?, &pos)?;
                c.set(1, o::mul(&g, &d)?);
            }
            Ok(())
        },
    )
}

/// `smooth_l1_loss(input, target, …, reduction, beta)` (`d / β` inside
/// β, `sign(d)` outside) and `huber_loss(input, target, reduction, delta,
/// weight)` (`d` inside δ, `δ sign(d)` outside), with `d = x - t`.
pub(crate) fn smooth_l1(huber: bool) -> Derivative {
    let (name, saves): (&'static str, &'static [Save]) = if huber {
        (
            "HuberLossBackward0",
            &[Save::In(0), Save::In(1), Save::In(4)],
        )
    } else {
        ("SmoothL1LossBackward0", &[Save::In(0), Save::In(1)])
    };
    derivative(name, saves, move |c| {
        let (x, t) = (c.input(0)?, c.input(1)?);
        let (r, bound) = if huber {
            (reduction_of(c, None, 2)?, c.float(3))
        } else {
            (reduction_of(c, Some((2, 3)), 4)?, c.float(5))
        };
        let d = o::sub(&x, &t)?;
        let shape = d.shape().to_vec();
        let mut g = unreduce(&c.grad()?, &shape, r)?;
        if huber {
            refuse_grad(c, 4, "huber_loss", "weight")?;
            g = weighted(c, g, 4)?;
        }
        let sign = o::unary("sign", &d)?;
        let slope = if bound == 0.0 {
            sign
        } else {
            let inside = o::cmp_s("lt", &o::unary("abs", &d)?, bound)?;
            let (near, far) = if huber {
                (d.clone(), o::mul_s(&sign, bound)?)
            } else {
                (o::mul_s(&d, 1.0 / bound)?, sign)
            };
            o::select_where(&inside, &near, &far)?
        };
        let gi = o::mul(&g, &slope)?;
        if c.needs(1) {
            c.set(1, o::neg(&gi)?);
        }
        c.set(0, gi);
        Ok(())
    })
}

/// The reduction of a loss row whose `size_average`, `reduce` and
/// `reduction` parameters start at `at`.
fn legacy_reduction(values: &[Value], at: usize) -> Result<Reduction> {
    let flag = |v: &Value| match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    };
    let name = match &values[at + 2] {
        Value::Str(s) => s.as_str(),
        _ => "mean",
    };
    Reduction::from_args(flag(&values[at]), flag(&values[at + 1]), name)
}

/// A loss over `(N, C)` frames (or one `(C)` frame) as rows: `x` with a
/// batch dim, and whether it had none.
fn frames(x: &Tensor) -> Result<(Tensor, bool)> {
    if x.ndim() <= 1 {
        Ok((o::reshape(x, &[1, x.numel()])?, true))
    } else {
        Ok((x.clone(), false))
    }
}

/// A mask of `(N, C)` from per-frame flags, as a float tensor like `x`.
fn mask_like(x: &Tensor, flags: Vec<bool>) -> Result<Tensor> {
    let values: Vec<f64> = flags.into_iter().map(|b| f64::from(u8::from(b))).collect();
    o::to_dtype(&Tensor::from_vec(values, x.shape()), x.dtype())
}

/// `multi_margin_loss(input, target, p, margin, weight, …)` with history:
/// checked and computed by the kernel, then recorded as rows —
/// `Σ_{i≠y} w_y · max(0, margin - x_y + x_i)^p / C` per frame.
pub(crate) fn multi_margin() -> Derivative {
    Derivative::Decompose(Arc::new(|op, values: Vec<Value>| {
        let checked = crate::tape::run_plain(op, values.clone())?;
        let (Value::Tensor(input), Value::Tensor(target)) = (&values[0], &values[1]) else {
            return Ok(checked);
        };
        let p = match values[2] {
            Value::Int(p) => p,
            _ => 1,
        };
        let margin = match values[3] {
            Value::Float(m) => m,
            _ => 1.0,
        };
        let (x, single) = frames(input)?;
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let targets: Vec<i64> = target
            .contiguous()
            .to_dtype(fxvm_tensor::DType::I64)
            .to_vec();
        let t = Tensor::from_vec(targets.clone(), &[n, 1]);
        let picked = o::call(
            "gather",
            vec![o::value(&x), Value::Int(1), Value::Tensor(t)],
            vec![],
        )?;
        let z = o::add_s(&o::sub(&x, &picked)?, margin)?;
        let mut h = o::clamp_min(&z, 0.0)?;
        if p == 2 {
            h = o::mul(&h, &h)?;
        }
        if let Value::Tensor(w) = &values[4] {
            let wy = o::call(
                "index_select",
                vec![
                    o::value(w),
                    Value::Int(0),
                    Value::Tensor(Tensor::from_vec(targets.clone(), &[n])),
                ],
                vec![],
            )?;
            h = o::mul(&h, &o::reshape(&wy, &[n, 1])?)?;
        }
        let others = (0..n * c)
            .map(|k| k % c != targets[k / c] as usize)
            .collect();
        h = o::mul(&h, &mask_like(&x, others)?)?;
        let mut loss = o::mul_s(&o::sum(&h, &[1], false)?, 1.0 / c as f64)?;
        if single {
            loss = o::reshape(&loss, &[])?;
        }
        o::reduced(legacy_reduction(&values, 5)?, loss).map(Value::Tensor)
    }))
}

/// `multilabel_margin_loss(input, target, …)` with history: checked and
/// computed by the kernel, then recorded as rows — each frame's labels
/// (its target up to the first -1) against its other classes,
/// `Σ_j Σ_{i∉labels} max(0, 1 - x_j + x_i) / C`.
pub(crate) fn multilabel_margin() -> Derivative {
    Derivative::Decompose(Arc::new(|op, values: Vec<Value>| {
        let checked = crate::tape::run_plain(op, values.clone())?;
        let (Value::Tensor(input), Value::Tensor(target)) = (&values[0], &values[1]) else {
            return Ok(checked);
        };
        let (x, single) = frames(input)?;
        let (n, c) = (x.shape()[0], x.shape()[1]);
        let t: Vec<i64> = target
            .contiguous()
            .to_dtype(fxvm_tensor::DType::I64)
            .to_vec();
        // Per frame: which target slots are labels, which classes are not.
        let (mut labels, mut others) = (vec![false; n * c], vec![true; n * c]);
        let mut slots = vec![0i64; n * c];
        for f in 0..n {
            for k in 0..c {
                let l = t[f * c + k];
                if l < 0 {
                    break;
                }
                labels[f * c + k] = true;
                slots[f * c + k] = l;
                others[f * c + l as usize] = false;
            }
        }
        let picked = o::call(
            "gather",
            vec![
                o::value(&x),
                Value::Int(1),
                Value::Tensor(Tensor::from_vec(slots, &[n, c])),
            ],
            vec![],
        )?;
        // z[f, k, i] = 1 - x[f, label k] + x[f, i]
        let z = o::add_s(
            &o::sub(&o::unsqueeze(&x, 1)?, &o::unsqueeze(&picked, 2)?)?,
            1.0,
        )?;
        let h = o::clamp_min(&z, 0.0)?;
        let pairs = o::mul(
            &o::unsqueeze(&mask_like(&x, labels)?, 2)?,
            &o::unsqueeze(&mask_like(&x, others)?, 1)?,
        )?;
        let mut loss = o::mul_s(
            &o::sum(&o::mul(&h, &pairs)?, &[1, 2], false)?,
            1.0 / c as f64,
        )?;
        if single {
            loss = o::reshape(&loss, &[])?;
        }
        o::reduced(legacy_reduction(&values, 2)?, loss).map(Value::Tensor)
    }))
}

/// `ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
/// reduction, zero_infinity)`: the alpha–beta gradient, by its own row
/// (not differentiable again, as PyTorch's).
pub(crate) fn ctc_loss() -> Derivative {
    derivative(
        "CtcLossBackward0",
        &[Save::In(0), Save::In(1), Save::In(2), Save::In(3)],
        |c| {
            let lengths = |i: usize| -> Result<Value> {
                Ok(match c.value(i) {
                    Value::Ints(v) => Value::Ints(v.clone()),
                    _ => Value::Ints(
                        c.input(i)?
                            .to_dtype(fxvm_tensor::DType::I64)
                            .contiguous()
                            .to_vec(),
                    ),
                })
            };
            // The functional names its reduction; the builtin passes its code.
            let reduction = match c.value(5) {
                Value::Str(s) => Reduction::parse(s)?,
                Value::Int(1) => Reduction::Mean,
                Value::Int(2) => Reduction::Sum,
                _ => Reduction::None,
            };
            let code = match reduction {
                Reduction::None => 0,
                Reduction::Mean => 1,
                Reduction::Sum => 2,
            };
            let d = o::call(
                "ctc_loss_backward",
                vec![
                    Value::Tensor(c.grad()?),
                    Value::Tensor(c.input(0)?),
                    Value::Tensor(c.input(1)?),
                    lengths(2)?,
                    lengths(3)?,
                    c.value(4).clone(),
                    Value::Int(code),
                    c.value(6).clone(),
                ],
                vec![],
            )?;
            c.set(0, d);
            Ok(())
        },
    )
}
