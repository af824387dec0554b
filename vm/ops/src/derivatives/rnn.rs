//! Recurrent layers and cells with history: the recurrence run step by
//! step over the rows (as PyTorch's CPU layers compose theirs), each step
//! recording its nodes; without history the fused kernels run.

use std::sync::Arc;

use fxvm_tensor::autograd::records_history;
use fxvm_tensor::ops::rnn::{self, Cell, Sequence, Stack};
use fxvm_tensor::{DType, Result, Tensor};

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Save, derivative};
use crate::value::Value;

fn tensor(v: &Value) -> Tensor {
    match v {
        Value::Tensor(t) => t.clone(),
        other => unreachable!("bound as a tensor: {other:?}"),
    }
}

/// A list of tensors, or the one tensor a GRU's or RNN's `hx` is.
fn tensors(v: &Value) -> Vec<Tensor> {
    match v {
        Value::Tensors(ts) => ts.clone(),
        Value::Tensor(t) => vec![t.clone()],
        other => unreachable!("bound as tensors: {other:?}"),
    }
}

fn opt_tensor(v: &Value) -> Option<Tensor> {
    match v {
        Value::Tensor(t) => Some(t.clone()),
        _ => None,
    }
}

/// `x wᵀ + b`.
fn linear(x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor> {
    o::call(
        "linear",
        vec![
            Value::Tensor(x.clone()),
            Value::Tensor(w.clone()),
            b.map_or(Value::None, |b| Value::Tensor(b.clone())),
        ],
        vec![],
    )
}

/// One direction of one layer's parameters.
struct Unit<'a> {
    w_hh: &'a Tensor,
    b_hh: Option<&'a Tensor>,
    w_hr: Option<&'a Tensor>,
}

/// One step from the input's share of the gates `pre`: the new hidden
/// (and cell) state, in the fused kernel's order of operations.
fn step(
    cell: Cell,
    u: &Unit<'_>,
    pre: &Tensor,
    h: &Tensor,
    c: Option<&Tensor>,
) -> Result<(Tensor, Option<Tensor>)> {
    let hh = linear(h, u.w_hh, u.b_hh)?;
    let gates = |t: &Tensor, k: usize, n: usize| o::narrow(t, 1, k * n, n);
    Ok(match cell {
        Cell::RnnTanh => (o::unary("tanh", &o::add(&hh, pre)?)?, None),
        Cell::RnnRelu => (o::unary("relu", &o::add(&hh, pre)?)?, None),
        Cell::Gru => {
            let hid = hh.shape()[1] / 3;
            let rz = o::unary(
                "sigmoid",
                &o::add(
                    &o::narrow(&hh, 1, 0, 2 * hid)?,
                    &o::narrow(pre, 1, 0, 2 * hid)?,
                )?,
            )?;
            let (r, z) = (gates(&rz, 0, hid)?, gates(&rz, 1, hid)?);
            let n = o::unary(
                "tanh",
                &o::add(&gates(pre, 2, hid)?, &o::mul(&gates(&hh, 2, hid)?, &r)?)?,
            )?;
            (o::add(&o::mul(&o::sub(h, &n)?, &z)?, &n)?, None)
        }
        Cell::Lstm => {
            let hid = hh.shape()[1] / 4;
            let g = o::add(&hh, pre)?;
            let i = o::unary("sigmoid", &gates(&g, 0, hid)?)?;
            let f = o::unary("sigmoid", &gates(&g, 1, hid)?)?;
            let cand = o::unary("tanh", &gates(&g, 2, hid)?)?;
            let out = o::unary("sigmoid", &gates(&g, 3, hid)?)?;
            let c = c.expect("an LSTM carries a cell state");
            let c = o::add(&o::mul(&f, c)?, &o::mul(&i, &cand)?)?;
            let mut h = o::mul(&out, &o::unary("tanh", &c)?)?;
            if let Some(w_hr) = u.w_hr {
                h = linear(&h, w_hr, None)?;
            }
            (h, Some(c))
        }
    })
}

/// Rows `[0, b)` of `t`, or all of it.
fn first_rows(t: &Tensor, b: usize) -> Result<Tensor> {
    if b == t.shape()[0] {
        Ok(t.clone())
    } else {
        o::narrow(t, 0, 0, b)
    }
}

/// `t` with its first rows replaced by `head` (sequences still running).
fn replace_head(t: &Tensor, head: Tensor) -> Result<Tensor> {
    let (b, batch) = (head.shape()[0], t.shape()[0]);
    if b == batch {
        return Ok(head);
    }
    o::cat(&[head, o::narrow(t, 0, b, batch - b)?], 0)
}

/// `ts` stacked along a new first dimension.
fn stacked(ts: Vec<Tensor>) -> Result<Tensor> {
    o::call("stack", vec![Value::Tensors(ts), Value::Int(0)], vec![])
}

/// One direction of one layer over time-major rows: its output at each
/// step, in time order, and its final states.
fn layer(
    cell: Cell,
    params: &[Tensor],
    has_biases: bool,
    data: &Tensor,
    spans: &[(usize, usize)],
    (h0, c0): (Tensor, Option<Tensor>),
    reverse: bool,
) -> Result<(Vec<Tensor>, Tensor, Option<Tensor>)> {
    let (b_ih, b_hh) = if has_biases {
        (Some(&params[2]), Some(&params[3]))
    } else {
        (None, None)
    };
    let unit = Unit {
        w_hh: &params[1],
        b_hh,
        w_hr: params.get(if has_biases { 4 } else { 2 }),
    };
    // Time-major steps `(T, B, F)` as rows.
    let rows = match data.shape() {
        &[steps, batch, features] => o::reshape(data, &[steps * batch, features])?,
        _ => data.clone(),
    };
    let pre = linear(&rows, &params[0], b_ih)?;
    let (mut h, mut c) = (h0, c0);
    let mut outputs = Vec::with_capacity(spans.len());
    let order: Vec<&(usize, usize)> = if reverse {
        spans.iter().rev().collect()
    } else {
        spans.iter().collect()
    };
    for &(first, b) in order {
        let p = o::narrow(&pre, 0, first, b)?;
        let cb = c.as_ref().map(|c| first_rows(c, b)).transpose()?;
        let (nh, nc) = step(cell, &unit, &p, &first_rows(&h, b)?, cb.as_ref())?;
        h = replace_head(&h, nh.clone())?;
        if let (Some(old), Some(new)) = (&c, nc) {
            c = Some(replace_head(old, new)?);
        }
        outputs.push(nh);
    }
    if reverse {
        outputs.reverse();
    }
    Ok((outputs, h, c))
}

/// `lstm`/`gru`/`rnn_*(input, hx, params, has_biases, num_layers,
/// dropout, train, bidirectional, batch_first, batch_sizes, generator)`.
pub(crate) fn stack(cell: Cell) -> Derivative {
    Derivative::Decompose(Arc::new(move |_op, values: Vec<Value>| {
        let (x, hx, params) = (tensor(&values[0]), tensors(&values[1]), tensors(&values[2]));
        let flag = |i: usize| matches!(values[i], Value::Bool(true));
        let layers = match values[4] {
            Value::Int(n) => n.max(0) as usize,
            _ => 0,
        };
        let dropout = match values[5] {
            Value::Float(p) => p,
            _ => 0.0,
        };
        let stack = Stack {
            cell,
            params: &params,
            has_biases: flag(3),
            num_layers: layers,
            dropout,
            train: flag(6),
            bidirectional: flag(7),
        };
        let per = rnn::check(&stack, &x, &hx)?;
        let batch_sizes = opt_tensor(&values[9]);
        let batch_first = flag(8);
        let sequence = match &batch_sizes {
            Some(sizes) => Sequence::Packed { batch_sizes: sizes },
            None => Sequence::Padded { batch_first },
        };
        let (spans, _) = rnn::spans(&x, sequence, cell.name())?;
        let has_projections = per > if stack.has_biases { 4 } else { 2 };
        if cell == Cell::Lstm
            && x.dtype() == DType::F32
            && batch_sizes.is_none()
            && !has_projections
            && x.numel() != 0
        {
            return layers_as_onednn(&stack, &x, &hx, per, batch_first);
        }
        // Packed rows, or time-major steps.
        let mut data = if batch_first && batch_sizes.is_none() {
            o::transpose(&x, 0, 1)?
        } else {
            x.clone()
        };
        let dirs = if stack.bidirectional { 2 } else { 1 };
        let mut finals: Vec<Vec<Tensor>> = vec![Vec::new(); hx.len()];
        for index in 0..layers {
            let mut outputs = Vec::with_capacity(dirs);
            for d in 0..dirs {
                let unit = index * dirs + d;
                let state = |k: usize| {
                    o::call(
                        "select",
                        vec![
                            Value::Tensor(hx[k].clone()),
                            Value::Int(0),
                            Value::Int(unit as i64),
                        ],
                        vec![],
                    )
                };
                let c0 = if hx.len() > 1 { Some(state(1)?) } else { None };
                let (out, h, c) = layer(
                    cell,
                    &params[unit * per..(unit + 1) * per],
                    stack.has_biases,
                    &data,
                    &spans,
                    (state(0)?, c0),
                    d == 1,
                )?;
                finals[0].push(h);
                if let Some(c) = c {
                    finals[1].push(c);
                }
                // Padded steps stack into (T, B, H), as PyTorch's
                // composed layers return them; packed ones join rows.
                outputs.push(match batch_sizes {
                    Some(_) => o::cat(&out, 0)?,
                    None => stacked(out)?,
                });
            }
            // Directions join along the features: the last dimension.
            let features = outputs[0].ndim() as i64 - 1;
            let mut joined = if dirs == 1 {
                outputs.remove(0)
            } else {
                o::cat(&outputs, features)?
            };
            if dropout > 0.0 && stack.train && index + 1 < layers {
                joined = o::call_functional(
                    "dropout",
                    vec![
                        Value::Tensor(joined),
                        Value::Float(dropout),
                        Value::Bool(true),
                    ],
                )?;
            }
            data = joined;
        }
        // PyTorch's composed layers turn a batch-first output in place.
        let output = if batch_first && batch_sizes.is_none() {
            o::call(
                "transpose_",
                vec![Value::Tensor(data), Value::Int(0), Value::Int(1)],
                vec![],
            )?
        } else {
            data
        };
        let mut all = vec![output];
        for parts in finals {
            all.push(stacked(parts)?);
        }
        Ok(Value::Tensors(all))
    }))
}

/// oneDNN's number for an LSTM cell in `mkldnn_rnn_layer`'s `mode`.
pub(crate) const LSTM_MODE: i64 = 2;

/// A float32 LSTM stack over padded sequences without projections, as
/// PyTorch's CPU build runs it with gradients: one `mkldnn_rnn_layer` per
/// layer and direction on time-major input, directions joined by `cat`,
/// dropout between layers, the final states stacked.
fn layers_as_onednn(
    stack: &Stack,
    x: &Tensor,
    hx: &[Tensor],
    per: usize,
    batch_first: bool,
) -> Result<Value> {
    let params = stack.params;
    let hidden = params[1].shape().get(1).copied().unwrap_or(0);
    let dirs = if stack.bidirectional { 2 } else { 1 };
    let mut data = if batch_first {
        o::transpose(x, 0, 1)?
    } else {
        x.clone()
    };
    let mut finals: [Vec<Tensor>; 2] = [Vec::new(), Vec::new()];
    for index in 0..stack.num_layers {
        let mut outputs = Vec::with_capacity(dirs);
        for d in 0..dirs {
            let unit = index * dirs + d;
            let p = &params[unit * per..(unit + 1) * per];
            let (b_ih, b_hh) = if stack.has_biases {
                (p[2].clone(), p[3].clone())
            } else {
                (
                    o::zeros(p[0].shape(), p[0].dtype())?,
                    o::zeros(p[1].shape(), p[1].dtype())?,
                )
            };
            let state = |k: usize| {
                o::call(
                    "select",
                    vec![o::value(&hx[k]), Value::Int(0), Value::Int(unit as i64)],
                    vec![],
                )
            };
            let results = o::call_value(
                "mkldnn_rnn_layer",
                vec![
                    o::value(&data),
                    o::value(&p[0]),
                    o::value(&p[1]),
                    o::value(&b_ih),
                    o::value(&b_hh),
                    o::value(&state(0)?),
                    o::value(&state(1)?),
                    Value::Bool(d == 1),
                    Value::Ints(vec![]),
                    Value::Int(LSTM_MODE),
                    Value::Int(hidden as i64),
                    Value::Int(stack.num_layers as i64),
                    Value::Bool(stack.has_biases),
                    Value::Bool(stack.bidirectional),
                    Value::Bool(batch_first),
                    Value::Bool(stack.train),
                ],
                vec![],
            )?;
            let Value::Tuple(parts) = results else {
                unreachable!("mkldnn_rnn_layer returns four tensors")
            };
            let mut parts = parts.into_iter().map(|v| tensor(&v));
            let mut next = || parts.next().expect("mkldnn_rnn_layer returns four tensors");
            outputs.push(next());
            finals[0].push(next());
            finals[1].push(next());
        }
        data = if dirs == 1 {
            outputs.remove(0)
        } else {
            o::cat(&outputs, 2)?
        };
        if stack.dropout > 0.0 && stack.train && index + 1 < stack.num_layers {
            data = o::call_functional(
                "dropout",
                vec![
                    Value::Tensor(data),
                    Value::Float(stack.dropout),
                    Value::Bool(true),
                ],
            )?;
        }
    }
    let mut all = vec![if batch_first {
        o::transpose(&data, 0, 1)?
    } else {
        data
    }];
    for parts in finals {
        all.push(stacked(parts)?);
    }
    Ok(Value::Tensors(all))
}

/// `mkldnn_rnn_layer`: its backward row, from the saved operands and
/// results — itself without a derivative, as PyTorch's.
pub(crate) fn lstm_layer() -> Derivative {
    const SAVES: &[Save] = &[
        Save::In(0),
        Save::In(1),
        Save::In(2),
        Save::In(3),
        Save::In(4),
        Save::In(5),
        Save::In(6),
        Save::Out(0),
        Save::Out(1),
        Save::Out(2),
        Save::Out(3),
    ];
    derivative("MkldnnRnnLayerBackward0", SAVES, |c| {
        if records_history() {
            return lstm_layer_differentiably(c);
        }
        let grad = |n: usize| c.grad_n(n).map_or(Value::None, Value::Tensor);
        let mut args = (0..7)
            .map(|i| c.input(i).map(Value::Tensor))
            .chain((0..3).map(|n| c.output(n).map(Value::Tensor)))
            .collect::<Result<Vec<_>>>()?;
        args.extend([grad(0), grad(1), grad(2)]);
        // reverse, mode, hidden_size, num_layers, has_biases, train,
        // bidirectional, batch_sizes, batch_first: the forward's in the
        // backward's order.
        args.extend([7, 9, 10, 11, 12, 15, 13, 8, 14].map(|i| c.value(i).clone()));
        args.push(Value::Tensor(c.output(3)?));
        let Value::Tuple(grads) = o::call_value("mkldnn_rnn_layer_backward", args, vec![])? else {
            unreachable!("the backward returns seven gradients")
        };
        for (i, g) in grads.into_iter().enumerate() {
            if c.needs(i) {
                c.set(i, tensor(&g));
            }
        }
        Ok(())
    })
}

/// `mkldnn_rnn_layer`'s gradients when the backward itself records
/// (`create_graph=True`): the layer recomputed as the composed recurrence
/// from its saved operands and differentiated with history, so the
/// gradients have derivatives of their own — where the backward row has
/// none, as PyTorch's (which differentiates a composed backward there).
fn lstm_layer_differentiably(c: &mut crate::autograd::Back<'_>) -> Result<()> {
    let operands = (0..7).map(|i| c.input(i)).collect::<Result<Vec<_>>>()?;
    let x = &operands[0];
    let (steps, batch) = (x.shape()[0], x.shape()[1]);
    let params = if c.bool(12) {
        &operands[1..5]
    } else {
        &operands[1..3]
    };
    let spans: Vec<(usize, usize)> = (0..steps).map(|t| (t * batch, batch)).collect();
    let states = (operands[5].clone(), Some(operands[6].clone()));
    let (out, h, cell) = layer(Cell::Lstm, params, c.bool(12), x, &spans, states, c.bool(7))?;
    let results = [
        stacked(out)?,
        h,
        cell.expect("an LSTM carries a cell state"),
    ];
    let (mut outputs, mut grads) = (Vec::new(), Vec::new());
    for (n, t) in results.into_iter().enumerate() {
        if let Some(g) = c.grad_n(n) {
            outputs.push(t);
            grads.push(Some(g));
        }
    }
    let wanted: Vec<usize> = (0..7)
        .filter(|&i| c.needs(i) && operands[i].requires_grad())
        .collect();
    let inputs: Vec<Tensor> = wanted.iter().map(|&i| operands[i].clone()).collect();
    let opts = crate::autograd::engine::Options {
        retain_graph: true,
        create_graph: true,
    };
    let got = crate::autograd::engine::grad(&outputs, grads, &inputs, opts, true)?;
    for (i, g) in wanted.into_iter().zip(got) {
        if let Some(g) = g {
            c.set(i, g);
        }
    }
    Ok(())
}

/// `lstm_cell`/`gru_cell`/`rnn_*_cell(input, hx, w_ih, w_hh, b_ih, b_hh)`.
pub(crate) fn cell(cell: Cell) -> Derivative {
    Derivative::Decompose(Arc::new(move |_op, values: Vec<Value>| {
        let x = tensor(&values[0]);
        let hx = match &values[1] {
            Value::Tensors(ts) => ts.clone(),
            v => vec![tensor(v)],
        };
        let (w_ih, w_hh) = (tensor(&values[2]), tensor(&values[3]));
        let (b_ih, b_hh) = (opt_tensor(&values[4]), opt_tensor(&values[5]));
        rnn::check_cell(cell, &x, &hx, &w_ih, &w_hh)?;
        let unit = Unit {
            w_hh: &w_hh,
            b_hh: b_hh.as_ref(),
            w_hr: None,
        };
        let pre = linear(&x, &w_ih, b_ih.as_ref())?;
        let (h, c) = step(cell, &unit, &pre, &hx[0], hx.get(1))?;
        Ok(match c {
            Some(c) => Value::Tensors(vec![h, c]),
            None => Value::Tensor(h),
        })
    }))
}

/// The first tensor a row returns.
fn first(v: Value) -> Tensor {
    match v {
        Value::Tensors(mut ts) => ts.swap_remove(0),
        Value::Tensor(t) => t,
        other => unreachable!("a packing row returns tensors: {other:?}"),
    }
}

/// `_pack_padded_sequence(input, lengths, batch_first)`: the packed rows'
/// gradient padded back (zeros past each sequence's end).
pub(crate) fn pack_padded() -> Derivative {
    crate::autograd::derivative(
        "PackPaddedSequenceBackward0",
        &[crate::autograd::Save::Out(1)],
        |c| {
            let g = c.grad()?;
            let batch_first = c.bool(2);
            let steps = c.shape(0)[if batch_first { 1 } else { 0 }];
            let padded = o::call_value(
                "_pad_packed_sequence",
                vec![
                    Value::Tensor(g),
                    Value::Tensor(c.output(1)?),
                    Value::Bool(batch_first),
                    Value::Scalar(fxvm_tensor::Scalar::Float(0.0)),
                    Value::Int(steps as i64),
                ],
                vec![],
            )?;
            c.set(0, first(padded));
            Ok(())
        },
    )
}

/// `_pad_packed_sequence(data, batch_sizes, batch_first, padding_value,
/// total_length)`: the padded gradient packed again.
pub(crate) fn pad_packed() -> Derivative {
    crate::autograd::derivative(
        "PadPackedSequenceBackward0",
        &[crate::autograd::Save::Out(1)],
        |c| {
            let g = c.grad()?;
            let batch_first = c.bool(2);
            let lengths = c.output(1)?;
            let longest = lengths
                .to_dtype(fxvm_tensor::DType::I64)
                .to_vec::<i64>()
                .into_iter()
                .max();
            // Steps past the longest sequence (a larger total_length) carry nothing.
            let dim = if batch_first { 1 } else { 0 };
            let g = match longest {
                Some(n) if (n as usize) < g.shape()[dim] => {
                    o::narrow(&g, dim as i64, 0, n as usize)?
                }
                _ => g,
            };
            let packed = o::call_value(
                "_pack_padded_sequence",
                vec![
                    Value::Tensor(g),
                    Value::Tensor(lengths),
                    Value::Bool(batch_first),
                ],
                vec![],
            )?;
            c.set(0, first(packed));
            Ok(())
        },
    )
}
