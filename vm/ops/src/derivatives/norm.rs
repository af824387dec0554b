//! Normalizations and embeddings.

use std::sync::Arc;

use fxvm_tensor::{Result, Tensor};

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Save, derivative};
use crate::value::Value;

/// `x̂ = (x - mean) / sqrt(var + eps)` over `dims` (biased variance), and
/// `1 / sqrt(var + eps)`, both keeping the reduced dims.
fn normalized(x: &Tensor, dims: &[i64], eps: f64) -> Result<(Tensor, Tensor)> {
    let mean = call_mean(x, dims)?;
    let centered = o::sub(x, &mean)?;
    let var = call_mean(&o::mul(&centered, &centered)?, dims)?;
    let invstd = o::unary("rsqrt", &o::add_s(&var, eps)?)?;
    Ok((o::mul(&centered, &invstd)?, invstd))
}

fn call_mean(x: &Tensor, dims: &[i64]) -> Result<Tensor> {
    o::call(
        "mean",
        vec![
            Value::Tensor(x.clone()),
            Value::Ints(dims.to_vec()),
            Value::Bool(true),
        ],
        vec![],
    )
}

/// The input's gradient through a normalization over `dims`:
/// `invstd (gγ - mean(gγ) - x̂ mean(gγ x̂))`.
fn through(gw: &Tensor, xhat: &Tensor, invstd: &Tensor, dims: &[i64]) -> Result<Tensor> {
    let a = call_mean(gw, dims)?;
    let b = call_mean(&o::mul(gw, xhat)?, dims)?;
    o::mul(invstd, &o::sub(&o::sub(gw, &a)?, &o::mul(xhat, &b)?)?)
}

/// Where a batch norm row keeps each argument.
#[derive(Clone, Copy)]
pub(crate) struct BatchNormArgs {
    pub running_mean: usize,
    pub running_var: usize,
    pub weight: usize,
    pub bias: usize,
    pub training: usize,
    pub eps: usize,
}

impl BatchNormArgs {
    /// What a batch or instance norm's derivative reads: the input, the
    /// running statistics and the weight (made once per row).
    fn saves(self) -> &'static [Save] {
        Box::leak(
            vec![
                Save::In(0),
                Save::In(self.running_mean),
                Save::In(self.running_var),
                Save::In(self.weight),
            ]
            .into_boxed_slice(),
        )
    }
}

/// `batch_norm`: batch statistics in training (or without running
/// ones), the running statistics in evaluation.
pub(crate) fn batch_norm(at: BatchNormArgs) -> Derivative {
    let saves = at.saves();
    derivative("NativeBatchNormBackward0", saves, move |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        let dims: Vec<i64> = (0..x.ndim() as i64).filter(|&d| d != 1).collect();
        let channel = |t: &Tensor| -> Result<Tensor> {
            let mut shape = vec![1; x.ndim()];
            shape[1] = t.numel();
            o::reshape(t, &shape)
        };
        let eps = c.float(at.eps);
        let weight = c.opt_input(at.weight)?.map(|w| channel(&w)).transpose()?;
        let running = match (c.opt_input(at.running_mean)?, c.opt_input(at.running_var)?) {
            (Some(m), Some(v)) if !c.bool(at.training) => Some((m, v)),
            _ => None,
        };
        let (xhat, invstd) = match &running {
            Some((m, v)) => {
                let invstd = channel(&o::unary("rsqrt", &o::add_s(v, eps)?)?)?;
                (o::mul(&o::sub(&x, &channel(m)?)?, &invstd)?, invstd)
            }
            None => normalized(&x, &dims, eps)?,
        };
        if c.needs(0) {
            let gw = match &weight {
                Some(w) => o::mul(&g, w)?,
                None => g.clone(),
            };
            let d = match running {
                Some(_) => o::mul(&gw, &invstd)?,
                None => through(&gw, &xhat, &invstd, &dims)?,
            };
            c.set(0, d);
        }
        if c.needs(at.weight) {
            let d = o::sum(&o::mul(&g, &xhat)?, &dims, false)?;
            c.set(at.weight, d);
        }
        if c.needs(at.bias) {
            let d = o::sum(&g, &dims, false)?;
            c.set(at.bias, d);
        }
        Ok(())
    })
}

/// `layer_norm(input, normalized_shape, weight, bias, eps)`.
pub(crate) fn layer_norm() -> Derivative {
    derivative(
        "NativeLayerNormBackward0",
        &[Save::In(0), Save::In(2)],
        |c| {
            let (x, g) = (c.input(0)?, c.grad()?);
            if !fxvm_tensor::autograd::is_grad_enabled() {
                return layer_norm_fused(c, &x, &g);
            }
            let k = c.ints(1).len();
            let dims: Vec<i64> = ((x.ndim() - k) as i64..x.ndim() as i64).collect();
            let (xhat, invstd) = normalized(&x, &dims, c.float(4))?;
            if c.needs(0) {
                let gw = match c.opt_input(2)? {
                    Some(w) => o::mul(&g, &w)?,
                    None => g.clone(),
                };
                let d = through(&gw, &xhat, &invstd, &dims)?;
                c.set(0, d);
            }
            // Summed down to the weight's shape by the engine.
            if c.needs(2) {
                let d = o::mul(&g, &xhat)?;
                c.set(2, d);
            }
            if c.needs(3) {
                c.set(3, g);
            }
            Ok(())
        },
    )
}

/// A layer norm's gradients by the one-pass row, when the backward pass
/// records no graph of its own.
fn layer_norm_fused(c: &mut Back<'_>, x: &Tensor, g: &Tensor) -> Result<()> {
    let weight = c.opt_input(2)?.map_or(Value::None, Value::Tensor);
    let grads = o::call_value(
        "native_layer_norm_backward",
        vec![
            o::value(g),
            o::value(x),
            Value::Ints(c.ints(1)),
            weight,
            Value::Float(c.float(4)),
        ],
        vec![],
    )?;
    let Value::Tuple(mut parts) = grads else {
        unreachable!("native_layer_norm_backward returns three tensors")
    };
    for (i, slot) in [(0, 0), (1, 2), (2, 3)] {
        if c.needs(slot)
            && let Value::Tensor(t) = std::mem::replace(&mut parts[i], Value::None)
        {
            c.set(slot, t);
        }
    }
    Ok(())
}

/// `embedding`: each looked-up row's gradient added into its row of the
/// table; the padding row gets none. `weight`/`indices` are the
/// parameters' positions; `padding` reads the padding index (`None` for
/// none; the aten row's -1 too).
pub(crate) fn embedding(weight: usize, indices: usize, padding: usize) -> Derivative {
    let saves: &'static [Save] = if indices == 0 {
        &[Save::In(0)]
    } else {
        &[Save::In(1)]
    };
    derivative("EmbeddingBackward0", saves, move |c: &mut Back<'_>| {
        let idx = c.input(indices)?;
        let g = c.grad()?;
        let table = c.shape(weight).to_vec();
        let dim = table.get(1).copied().unwrap_or(1);
        let flat = o::reshape(&idx, &[idx.numel()])?;
        let mut rows = o::reshape(&g, &[idx.numel(), dim])?;
        if let Some(p) = c.opt_int(padding).filter(|&p| p >= 0 || indices == 0) {
            let p = if p < 0 { p + table[0] as i64 } else { p };
            let keep = o::cmp_s("ne", &flat, p as f64)?;
            rows = o::mask(&o::unsqueeze(&keep, 1)?, &rows)?;
        }
        let zeros = o::zeros(&table, g.dtype())?;
        let d = o::call(
            "index_add",
            vec![
                Value::Tensor(zeros),
                Value::Int(0),
                Value::Tensor(flat),
                Value::Tensor(rows),
            ],
            vec![],
        )?;
        c.set(weight, d);
        Ok(())
    })
}

/// `t` (one value per channel) shaped to broadcast over `ndim` dims with
/// channels at dim 1.
fn per_channel(t: &Tensor, ndim: usize) -> Result<Tensor> {
    let mut shape = vec![1; ndim];
    shape[1] = t.numel();
    o::reshape(t, &shape)
}

/// `group_norm(input, num_groups, weight, bias, eps)`: a layer norm over
/// each group's channels and positions, then a per-channel affine map.
pub(crate) fn group_norm() -> Derivative {
    derivative(
        "NativeGroupNormBackward0",
        &[Save::In(0), Save::In(2)],
        |c| {
            let (x, g) = (c.input(0)?, c.grad()?);
            let shape = x.shape().to_vec();
            let groups = c.int(1).max(1) as usize;
            let grouped = [shape[0], groups, x.numel() / (shape[0] * groups).max(1)];
            let xg = o::reshape(&x, &grouped)?;
            let (xhat, invstd) = normalized(&xg, &[2], c.float(4))?;
            let weight = c.opt_input(2)?;
            if c.needs(0) {
                let gw = match &weight {
                    Some(w) => o::mul(&g, &per_channel(w, shape.len())?)?,
                    None => g.clone(),
                };
                let d = through(&o::reshape(&gw, &grouped)?, &xhat, &invstd, &[2])?;
                c.set(0, o::reshape(&d, &shape)?);
            }
            let dims: Vec<i64> = (0..shape.len() as i64).filter(|&d| d != 1).collect();
            if c.needs(2) {
                let xhat = o::reshape(&xhat, &shape)?;
                c.set(2, o::sum(&o::mul(&g, &xhat)?, &dims, false)?);
            }
            if c.needs(3) {
                c.set(3, o::sum(&g, &dims, false)?);
            }
            Ok(())
        },
    )
}

/// `rms_norm(input, normalized_shape, weight, eps)`: `y = x r w` with
/// `r = 1 / sqrt(mean(x²) + eps)` over the trailing dims;
/// `dx = r (gw - x r² mean(gw x))`.
pub(crate) fn rms_norm() -> Derivative {
    derivative("MulBackward0", &[Save::In(0), Save::In(2)], |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        let k = c.ints(1).len();
        let dims: Vec<i64> = ((x.ndim() - k) as i64..x.ndim() as i64).collect();
        // None: the machine epsilon of the input's dtype.
        let eps = match c.value(3) {
            Value::Float(e) => *e,
            _ if x.dtype() == fxvm_tensor::DType::F32 => f64::from(f32::EPSILON),
            _ => f64::EPSILON,
        };
        let r = o::unary(
            "rsqrt",
            &o::add_s(&call_mean(&o::mul(&x, &x)?, &dims)?, eps)?,
        )?;
        let weight = c.opt_input(2)?;
        if c.needs(0) {
            let gw = match &weight {
                Some(w) => o::mul(&g, w)?,
                None => g.clone(),
            };
            let m = call_mean(&o::mul(&gw, &x)?, &dims)?;
            let inner = o::sub(&gw, &o::mul(&o::mul(&x, &o::mul(&r, &r)?)?, &m)?)?;
            c.set(0, o::mul(&r, &inner)?);
        }
        // Summed down to the weight's shape by the engine.
        if c.needs(2) {
            c.set(2, o::mul(&g, &o::mul(&x, &r)?)?);
        }
        Ok(())
    })
}

/// `instance_norm`: a layer norm over each instance's channel positions
/// (or, without input statistics, the running ones' affine map), then a
/// per-channel affine map. `at.training` is `use_input_stats`.
pub(crate) fn instance_norm(at: BatchNormArgs) -> Derivative {
    let saves = at.saves();
    derivative("NativeBatchNormBackward0", saves, move |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        let n = x.ndim();
        let dims: Vec<i64> = (2..n as i64).collect();
        let eps = c.float(at.eps);
        let weight = c
            .opt_input(at.weight)?
            .map(|w| per_channel(&w, n))
            .transpose()?;
        let use_input_stats = c.bool(at.training);
        let (xhat, invstd) = match c.opt_input(at.running_var)? {
            Some(rv) if !use_input_stats => {
                let rm = per_channel(&c.input(at.running_mean)?, n)?;
                let invstd = per_channel(&o::unary("rsqrt", &o::add_s(&rv, eps)?)?, n)?;
                (o::mul(&o::sub(&x, &rm)?, &invstd)?, invstd)
            }
            _ => normalized(&x, &dims, eps)?,
        };
        if c.needs(0) {
            let gw = match &weight {
                Some(w) => o::mul(&g, w)?,
                None => g.clone(),
            };
            let d = if use_input_stats {
                through(&gw, &xhat, &invstd, &dims)?
            } else {
                o::mul(&gw, &invstd)?
            };
            c.set(0, d);
        }
        let all: Vec<i64> = (0..n as i64).filter(|&d| d != 1).collect();
        if c.needs(at.weight) {
            c.set(at.weight, o::sum(&o::mul(&g, &xhat)?, &all, false)?);
        }
        if c.needs(at.bias) {
            c.set(at.bias, o::sum(&g, &all, false)?);
        }
        Ok(())
    })
}

/// `local_response_norm(input, size, alpha, beta, k)` with history, as
/// PyTorch composes it: the squares averaged over a window of `size`
/// channels (zero padded, `size/2` before and `(size-1)/2` after) by an
/// average pool, then `input / (k + alpha · average)^beta`.
pub(crate) fn local_response_norm() -> Derivative {
    Derivative::Decompose(Arc::new(|op, values: Vec<Value>| {
        let kernel = |v| crate::tape::run_plain(op, v);
        let (
            Value::Tensor(x),
            &Value::Int(size),
            &Value::Float(alpha),
            &Value::Float(beta),
            &Value::Float(k),
        ) = (&values[0], &values[1], &values[2], &values[3], &values[4])
        else {
            return kernel(values);
        };
        // The kernel's errors, and inputs with nothing to normalize.
        if x.ndim() < 3 || x.numel() == 0 || !x.dtype().is_float() || size <= 0 {
            return kernel(values);
        }
        let x = x.clone();
        let (before, after) = (size / 2, (size - 1) / 2);
        let squares = o::mul(&x, &x)?;
        let shape = x.shape().to_vec();
        let average = if x.ndim() == 3 {
            let d = o::unsqueeze(&squares, 1)?;
            let d = o::call_functional(
                "pad",
                vec![o::value(&d), Value::Ints(vec![0, 0, before, after])],
            )?;
            let d = o::call(
                "avg_pool2d",
                vec![
                    o::value(&d),
                    Value::Ints(vec![size, 1]),
                    Value::Ints(vec![1]),
                ],
                vec![],
            )?;
            o::call("squeeze", vec![o::value(&d), Value::Int(1)], vec![])?
        } else {
            let grouped = [shape[0] as i64, 1, shape[1] as i64, shape[2] as i64, -1];
            let d = o::shape::reshape(&squares, &grouped)?;
            let d = o::call_functional(
                "pad",
                vec![o::value(&d), Value::Ints(vec![0, 0, 0, 0, before, after])],
            )?;
            let d = o::call(
                "avg_pool3d",
                vec![
                    o::value(&d),
                    Value::Ints(vec![size, 1, 1]),
                    Value::Ints(vec![1]),
                ],
                vec![],
            )?;
            let d = o::call("squeeze", vec![o::value(&d), Value::Int(1)], vec![])?;
            o::reshape(&d, &shape)?
        };
        let divisor = o::pow_s(&o::add_s(&o::mul_s(&average, alpha)?, k)?, beta)?;
        o::div(&x, &divisor).map(Value::Tensor)
    }))
}

/// `embedding_bag(input, weight, offsets, max_norm, norm_type,
/// scale_grad_by_freq, mode, sparse, per_sample_weights,
/// include_last_offset, padding_idx)` with history: checked and computed
/// by the kernel, then recorded as rows — the bags' rows gathered (scaled
/// by the per-sample weights) and added into their bags, over the bag's
/// size for `mean`; for `max`, each bag's largest entry per feature.
pub(crate) fn embedding_bag() -> Derivative {
    use fxvm_tensor::ops::bag::{self, BagMode};
    Derivative::Decompose(Arc::new(|op, values: Vec<Value>| {
        let checked = crate::tape::run_plain(op, values.clone())?;
        let (Value::Tensor(input), Value::Tensor(w)) = (&values[0], &values[1]) else {
            return Ok(checked);
        };
        let offsets = match &values[2] {
            Value::Tensor(t) => Some(t),
            _ => None,
        };
        let mode = match &values[6] {
            Value::Str(m) => BagMode::parse(m)?,
            _ => BagMode::Mean,
        };
        let last = matches!(values[9], Value::Bool(true));
        let padding = match values[10] {
            Value::Int(p) => Some(p),
            _ => None,
        };
        let bags = bag::bags_of(input, w.shape()[0], offsets, last, padding)?;
        let (count, dim) = (bags.members.len(), w.shape()[1]);
        let index = |v: Vec<i64>| {
            let n = v.len();
            Value::Tensor(Tensor::from_vec(v, &[n]))
        };
        let select = |t: &Tensor, v: Vec<i64>| {
            o::call(
                "index_select",
                vec![o::value(t), Value::Int(0), index(v)],
                vec![],
            )
        };
        if mode == BagMode::Max {
            // Each bag's first largest entry per feature, read from the
            // flattened table.
            let table: Vec<f64> = w.contiguous().to_dtype(fxvm_tensor::DType::F64).to_vec();
            let (mut flat, mut filled) = (vec![0i64; count * dim], vec![0.0; count]);
            for (b, members) in bags.members.iter().enumerate() {
                let Some(&first) = members.first() else {
                    continue;
                };
                filled[b] = 1.0;
                for d in 0..dim {
                    let at = |k: usize| bags.rows[k] as usize * dim + d;
                    let best = members.iter().fold(first, |best, &k| {
                        if table[at(k)] > table[at(best)] {
                            k
                        } else {
                            best
                        }
                    });
                    flat[b * dim + d] = at(best) as i64;
                }
            }
            let picked = select(&o::shape::reshape(w, &[-1])?, flat)?;
            let filled = o::to_dtype(&Tensor::from_vec(filled, &[count, 1]), w.dtype())?;
            return o::mul(&o::reshape(&picked, &[count, dim])?, &filled).map(Value::Tensor);
        }
        let (mut positions, mut owners, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
        for (b, members) in bags.members.iter().enumerate() {
            positions.extend(members.iter().map(|&k| k as i64));
            owners.extend(std::iter::repeat_n(b as i64, members.len()));
            sizes.push(members.len().max(1) as f64);
        }
        let rows = positions.iter().map(|&k| bags.rows[k as usize]).collect();
        let mut picked = select(w, rows)?;
        if let Value::Tensor(psw) = &values[8] {
            let scale = select(&o::shape::reshape(psw, &[-1])?, positions)?;
            picked = o::mul(&picked, &o::unsqueeze(&scale, 1)?)?;
        }
        let summed = o::call(
            "index_add",
            vec![
                Value::Tensor(o::zeros(&[count, dim], w.dtype())?),
                Value::Int(0),
                index(owners),
                Value::Tensor(picked),
            ],
            vec![],
        )?;
        if mode == BagMode::Sum {
            return Ok(Value::Tensor(summed));
        }
        let sizes = o::to_dtype(&Tensor::from_vec(sizes, &[count, 1]), w.dtype())?;
        o::div(&summed, &sizes).map(Value::Tensor)
    }))
}
