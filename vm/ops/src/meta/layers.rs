//! Shape rules of the nn layers whose sizes follow from their arguments:
//! embedding, attention, losses, convolution and pooling windows, padding,
//! interpolation, recurrent layers.

use fxvm_symbolic::Expr;
use fxvm_tensor::{DType, Result, TensorError};

use super::{Ctx, MetaOut, TensorMeta};
use crate::value::Value;

/// `pad(input, pad)`: from the last dim backwards, each pair of the pad
/// list widens one dim.
pub(crate) fn pad(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let pad = cx.ints("pad")?;
    if pad.len() % 2 != 0 || pad.len() / 2 > x.ndim() {
        return Err(TensorError::Runtime {
            op: cx.name(),
            message:
                "Padding length must be divisible by 2 and at most twice the number of dimensions"
                    .into(),
        });
    }
    let mut sizes = x.sizes.clone();
    for (i, pair) in pad.chunks(2).enumerate() {
        let d = x.ndim() - 1 - i;
        sizes[d] = cx.sym(sizes[d].add(&pair[0]).and_then(|s| s.add(&pair[1])))?;
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `interpolate(input, size=…)` or `scale_factor=…`: the leading two dims,
/// then the requested sizes (`floor(size * scale)`).
pub(crate) fn interpolate(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let n = x.ndim().saturating_sub(2);
    let mut sizes = x.sizes[..x.ndim().min(2)].to_vec();
    if let Some(size) = cx.opt_ints("size")? {
        let size = if size.len() == 1 {
            vec![size[0].clone(); n]
        } else {
            size
        };
        sizes.extend(size);
    } else {
        let scales = match cx.value("scale_factor") {
            Value::Floats(f) if f.len() == 1 => vec![f[0]; n],
            Value::Floats(f) => f.clone(),
            _ => return Err(cx.bad("interpolate without size or scale_factor")),
        };
        for (s, f) in x.sizes[2..].iter().zip(scales) {
            let out = if f.fract() == 0.0 {
                s.mul(&Expr::int(f as i128))
            } else {
                s.to_float()
                    .mul(&Expr::float(f))
                    .and_then(|e| e.round_to_int(fxvm_symbolic::Rounding::Floor))
            };
            sizes.push(cx.sym(out)?);
        }
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `embedding(input, weight)`: a row of `weight` per index.
pub(crate) fn embedding(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let idx = cx.tensor("input")?;
    let w = cx.tensor("weight")?;
    let mut sizes = idx.sizes;
    sizes.extend(w.sizes.last().cloned());
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, w.dtype)))
}

/// `scaled_dot_product_attention(q, k, v)`: the query's sizes with the
/// value's last.
pub(crate) fn attention(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let q = cx.tensor("query")?;
    let v = cx.tensor("value")?;
    let mut sizes = q.sizes.clone();
    if let (Some(last), Some(vl)) = (sizes.last_mut(), v.sizes.last()) {
        *last = vl.clone();
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, q.dtype)))
}

/// A reducing loss (`cross_entropy`, `mse_loss` …): a 0-dim result unless
/// `reduction='none'`, where it keeps the target's sizes.
pub(crate) fn loss(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let target = cx.tensor("target")?;
    let sizes = match cx.value("reduction") {
        Value::Str(r) if r == "none" => target.sizes,
        _ => Vec::new(),
    };
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// One spatial size of a convolution or pooling window:
/// `(size + 2·pad − dilation·(kernel − 1) − 1) // stride + 1`, rounded up
/// with `ceil_mode` (a window may not start in the right padding).
fn window(
    cx: &mut Ctx<'_>,
    size: &Expr,
    kernel: i64,
    stride: i64,
    pad: i64,
    dilation: i64,
    ceil: bool,
) -> Result<Expr> {
    let span = pad * 2 - dilation * (kernel - 1) - 1;
    let extent = cx.sym(size.add(&Expr::int(span as i128)))?;
    if !ceil {
        let q = cx.sym(extent.floor_div(&Expr::int(stride as i128)))?;
        return cx.sym(q.add(&Expr::int(1)));
    }
    let up = cx.sym(
        extent
            .add(&Expr::int((stride - 1) as i128))
            .and_then(|e| e.floor_div(&Expr::int(stride as i128))),
    )?;
    let out = cx.sym(up.add(&Expr::int(1)))?;
    // The last window must start inside the input or the left padding.
    let start = cx.sym(up.mul(&Expr::int(stride as i128)))?;
    let limit = cx.sym(size.add(&Expr::int(pad as i128)))?;
    if cx.at_most(&limit, &start)? {
        return cx.sym(out.sub(&Expr::int(1)));
    }
    Ok(out)
}

/// [`window`] for each spatial size.
fn windows(
    cx: &mut Ctx<'_>,
    sizes: &[Expr],
    kernel: &[i64],
    stride: &[i64],
    padding: &[i64],
    dilation: &[i64],
    ceil: bool,
) -> Result<Vec<Expr>> {
    (0..sizes.len())
        .map(|d| {
            window(
                cx,
                &sizes[d],
                kernel[d],
                stride[d],
                padding[d],
                dilation[d],
                ceil,
            )
        })
        .collect()
}

/// A per-dimension parameter (`stride=2` or `(2, 1)`) for `n` dims.
fn per_dim(cx: &Ctx<'_>, param: &str, n: usize, default: &[i64]) -> Result<Vec<i64>> {
    let v = match cx.arg(param) {
        super::Meta::Value(Value::None) => default.to_vec(),
        _ => cx.const_ints(param)?,
    };
    Ok(match v.len() {
        0 => default.to_vec(),
        1 => vec![v[0]; n],
        _ => v,
    })
}

/// A convolution's input, weight, spatial dim count and (constant)
/// kernel sizes.
fn conv_operands(cx: &Ctx<'_>) -> Result<(TensorMeta, TensorMeta, usize, Vec<i64>)> {
    let x = cx.tensor("input")?;
    let w = cx.tensor("weight")?;
    let n = w.ndim().saturating_sub(2);
    if x.ndim() < n + 1 {
        return Err(cx.bad("input"));
    }
    let kernel: Vec<i64> = w.sizes[2..]
        .iter()
        .map(|k| k.as_int().map(|k| k as i64))
        .collect::<Option<_>>()
        .ok_or_else(|| cx.bad("weight"))?;
    Ok((x, w, n, kernel))
}

/// `convN(input, weight, bias, stride, padding, dilation, groups)`.
pub(crate) fn conv(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let (x, w, n, kernel) = conv_operands(cx)?;
    let stride = per_dim(cx, "stride", n, &[1])?;
    let dilation = per_dim(cx, "dilation", n, &[1])?;
    let padding = match cx.value("padding") {
        Value::Str(mode) if mode == "valid" => vec![0; n],
        Value::Str(_) => {
            // 'same' keeps the sizes.
            let mut sizes = x.sizes.clone();
            sizes[x.ndim() - n - 1] = w.sizes[0].clone();
            return Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)));
        }
        _ => per_dim(cx, "padding", n, &[0])?,
    };
    let lead = x.ndim() - n;
    let mut sizes: Vec<Expr> = x.sizes[..lead - 1].to_vec();
    sizes.push(w.sizes[0].clone());
    let spatial = &x.sizes[lead..];
    sizes.extend(windows(
        cx, spatial, &kernel, &stride, &padding, &dilation, false,
    )?);
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `conv_transposeN(input, weight, bias, stride, padding, output_padding,
/// groups, dilation)`: `(size − 1)·stride − 2·pad + dilation·(k − 1) +
/// output_padding + 1` per spatial dim, `weight[1]·groups` channels.
pub(crate) fn conv_transpose(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let (x, w, n, kernel) = conv_operands(cx)?;
    let stride = per_dim(cx, "stride", n, &[1])?;
    let padding = per_dim(cx, "padding", n, &[0])?;
    let output_padding = per_dim(cx, "output_padding", n, &[0])?;
    let dilation = per_dim(cx, "dilation", n, &[1])?;
    let groups = cx.const_int("groups")?;
    let lead = x.ndim() - n;
    let mut sizes: Vec<Expr> = x.sizes[..lead - 1].to_vec();
    sizes.push(cx.sym(w.sizes[1].mul(&Expr::int(groups as i128)))?);
    for d in 0..n {
        let extra = dilation[d] * (kernel[d] - 1) + output_padding[d] + 1 - 2 * padding[d];
        let s = cx.sym(
            x.sizes[lead + d]
                .sub(&Expr::int(1))
                .and_then(|e| e.mul(&Expr::int(stride[d] as i128)))
                .and_then(|e| e.add(&Expr::int(extra as i128))),
        )?;
        sizes.push(s);
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}

/// `lstm`/`gru`/`rnn_*(input, hx, params, …, bidirectional, …)`: the output
/// keeps the input's sizes but the last, the initial states' last size
/// times the directions; the final states are shaped as the initial ones
/// (`h_n`, and `c_n` for an LSTM).
pub(crate) fn recurrent(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    // An LSTM's `[h_0, c_0]`, the others' `h_0`.
    let hx = match cx.arg("hx") {
        super::Meta::Tensor(h) => vec![h.clone()],
        _ => cx.tensors("hx")?,
    };
    let Some(h0) = hx.first() else {
        return Err(cx.bad("hx"));
    };
    let dirs = if cx.bool("bidirectional") { 2 } else { 1 };
    let mut sizes = x.sizes.clone();
    if let (Some(last), Some(h)) = (sizes.last_mut(), h0.sizes.last()) {
        *last = cx.sym(h.mul(&Expr::int(dirs)))?;
    }
    let mut out = vec![TensorMeta::new(sizes, x.dtype)];
    out.extend(hx.iter().map(|h| TensorMeta::new(h.sizes.clone(), x.dtype)));
    Ok(MetaOut::Tuple(out))
}

/// `lstm_cell(input, (h, c), …)` → `(h', c')`; `gru_cell`/`rnn_*_cell(input,
/// h, …)` → `h'`: shaped as the state.
pub(crate) fn recurrent_cell(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    match cx.arg("hx") {
        super::Meta::Tensors(hx) => Ok(MetaOut::Tuple(
            hx.iter()
                .map(|h| TensorMeta::new(h.sizes.clone(), x.dtype))
                .collect(),
        )),
        super::Meta::Tensor(h) => Ok(MetaOut::Tensor(TensorMeta::new(h.sizes.clone(), x.dtype))),
        _ => Err(cx.bad("hx")),
    }
}

/// `max_poolNd`/`avg_poolNd(input, kernel_size, stride, padding, …)`; the
/// dimensionality is the number in the op's name.
pub(crate) fn pool(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let n = pool_dims(cx.name());
    let kernel = per_dim(cx, "kernel_size", n, &[1])?;
    let stride = per_dim(cx, "stride", n, &kernel)?;
    let padding = per_dim(cx, "padding", n, &[0])?;
    let dilation = match cx.op.schema.position("dilation") {
        Some(_) => per_dim(cx, "dilation", n, &[1])?,
        None => vec![1; n],
    };
    let ceil = cx.bool("ceil_mode");
    if x.ndim() < n {
        return Err(cx.bad("input"));
    }
    let lead = x.ndim() - n;
    let mut sizes: Vec<Expr> = x.sizes[..lead].to_vec();
    let spatial = &x.sizes[lead..];
    sizes.extend(windows(
        cx, spatial, &kernel, &stride, &padding, &dilation, ceil,
    )?);
    let out = TensorMeta::new(sizes, x.dtype);
    if cx.op.schema.position("return_indices").is_some() && cx.bool("return_indices") {
        let indices = TensorMeta::new(out.sizes.clone(), DType::I64);
        return Ok(MetaOut::Tuple(vec![out, indices]));
    }
    Ok(MetaOut::Tensor(out))
}

fn pool_dims(name: &str) -> usize {
    if name.contains("3d") {
        3
    } else if name.contains("2d") {
        2
    } else {
        1
    }
}

/// `adaptive_*_poolNd(input, output_size)`: the leading sizes, then the
/// requested ones (`None` keeps the input's).
pub(crate) fn adaptive_pool(cx: &mut Ctx<'_>) -> Result<MetaOut> {
    let x = cx.tensor("input")?;
    let n = pool_dims(cx.name());
    let requested: Vec<Option<i64>> = match cx.value("output_size") {
        Value::OptInts(v) => v.clone(),
        Value::Ints(v) => v.iter().map(|&i| Some(i)).collect(),
        Value::Int(i) => vec![Some(*i)],
        _ => cx
            .const_ints("output_size")?
            .into_iter()
            .map(Some)
            .collect(),
    };
    let requested = if requested.len() == 1 {
        vec![requested[0]; n]
    } else {
        requested
    };
    if x.ndim() < n || requested.len() != n {
        return Err(cx.bad("output_size"));
    }
    let lead = x.ndim() - n;
    let mut sizes: Vec<Expr> = x.sizes[..lead].to_vec();
    for (d, r) in requested.iter().enumerate() {
        sizes.push(r.map_or_else(|| x.sizes[lead + d].clone(), |r| Expr::int(r as i128)));
    }
    Ok(MetaOut::Tensor(TensorMeta::new(sizes, x.dtype)))
}
