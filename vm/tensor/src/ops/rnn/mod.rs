//! Recurrent layers — `rnn_tanh`, `rnn_relu`, `lstm` (with projections),
//! `gru` — over padded or packed sequences, stacked and bidirectional, and
//! their one-step cells. Each layer runs the input projection for every
//! time step as one gemm, then one small gemm per step for the hidden
//! state, with PyTorch's gate order and arithmetic.

use crate::dtype::DType;
use crate::error::{Result, TensorError, legacy_name};
use crate::layout::Layout;
use crate::ops::create::{self, DropoutKind};
use crate::ops::elementwise::sigmoid;
use crate::ops::fastmath;
use crate::ops::linalg::{Matrix, PARALLEL_FLOPS, Real, gemm_into};
use crate::ops::shape;
use crate::random::Generator;
use crate::tensor::Tensor;

mod lstm_layer;
mod recurrent;

pub use lstm_layer::{LstmLayer, LstmLayerGrads, LstmLayerOutput, lstm_layer, lstm_layer_backward};

use recurrent::Packed;

/// The recurrence a layer computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cell {
    RnnTanh,
    RnnRelu,
    Lstm,
    Gru,
}

impl Cell {
    pub fn name(self) -> &'static str {
        match self {
            Cell::RnnTanh => "rnn_tanh",
            Cell::RnnRelu => "rnn_relu",
            Cell::Lstm => "lstm",
            Cell::Gru => "gru",
        }
    }

    /// Gate blocks stacked in the weights (`4*hidden` rows for an LSTM).
    fn gates(self) -> usize {
        match self {
            Cell::RnnTanh | Cell::RnnRelu => 1,
            Cell::Lstm => 4,
            Cell::Gru => 3,
        }
    }

    /// Hidden-state tensors: `(h, c)` for an LSTM, `h` otherwise.
    fn states(self) -> usize {
        if self == Cell::Lstm { 2 } else { 1 }
    }
}

/// A stack of recurrent layers, as `_VF.lstm` & co. receive it.
#[derive(Clone, Copy, Debug)]
pub struct Stack<'a> {
    pub cell: Cell,
    /// Per layer and direction: `w_ih, w_hh[, b_ih, b_hh][, w_hr]`.
    pub params: &'a [Tensor],
    pub has_biases: bool,
    pub num_layers: usize,
    pub dropout: f64,
    pub train: bool,
    pub bidirectional: bool,
}

/// How the input holds its sequences.
#[derive(Clone, Copy, Debug)]
pub enum Sequence<'a> {
    /// `(T, B, F)`, or `(B, T, F)` when `batch_first`.
    Padded { batch_first: bool },
    /// A packed sequence's data `(sum of lengths, F)`, `batch_sizes[t]`
    /// sequences still running at step `t` (longest first).
    Packed { batch_sizes: &'a Tensor },
}

fn fail<T>(op: &'static str, message: impl Into<String>) -> Result<T> {
    Err(TensorError::runtime(op, message))
}

/// One direction of one layer's weights, dense in the compute type.
struct Weights<T> {
    w_ih: Vec<T>,
    /// `(gates * hidden, out)`, packed for the per-step product.
    w_hh: Packed<T>,
    b_ih: Option<Vec<T>>,
    b_hh: Option<Vec<T>>,
    /// LSTM projection `(out, hidden)`.
    w_hr: Option<Packed<T>>,
    input: usize,
    hidden: usize,
    /// Size of the state carried between steps: `hidden`, or the projection's.
    out: usize,
}

impl<T: Activate> Weights<T> {
    fn read(cell: Cell, params: &[Tensor], has_biases: bool) -> Result<Weights<T>> {
        let (hidden, out) = weight_sizes(cell, params, has_biases)?;
        let dense = |t: &Tensor| t.to_dtype(T::DTYPE).contiguous().to_vec::<T>();
        let (w_ih, w_hh) = (&params[0], &params[1]);
        let biases = if has_biases { &params[2..4] } else { &[][..] };
        let w_hr = params.get(if has_biases { 4 } else { 2 });
        Ok(Weights {
            w_ih: dense(w_ih),
            w_hh: Packed::new(&dense(w_hh), cell.gates() * hidden, out),
            b_ih: biases.first().map(dense),
            b_hh: biases.get(1).map(dense),
            w_hr: w_hr.map(|w| Packed::new(&dense(w), out, hidden)),
            input: w_ih.shape()[1],
            hidden,
            out,
        })
    }
}

/// One direction of one layer's weights (`w_ih, w_hh[, b_ih, b_hh][, w_hr]`)
/// checked against each other: the hidden size and the carried state's.
fn weight_sizes(cell: Cell, params: &[Tensor], has_biases: bool) -> Result<(usize, usize)> {
    let op = cell.name();
    let (w_ih, w_hh) = (&params[0], &params[1]);
    if w_ih.ndim() != 2 || w_hh.ndim() != 2 || w_ih.shape()[0] % cell.gates() != 0 {
        return fail(op, "weights must be matrices with a row block per gate");
    }
    let hidden = w_ih.shape()[0] / cell.gates();
    let biases = if has_biases { &params[2..4] } else { &[][..] };
    let w_hr = params.get(if has_biases { 4 } else { 2 });
    let out = w_hr.map_or(hidden, |w| w.shape()[0]);
    if w_hh.shape() != [cell.gates() * hidden, out]
        || biases.iter().any(|b| b.shape() != [cell.gates() * hidden])
        || w_hr.is_some_and(|w| w.shape() != [out, hidden])
    {
        return fail(op, "the weights' shapes do not agree with each other");
    }
    Ok((hidden, out))
}

/// Gate activations over whole slices: vectorised for f32.
trait Activate: Real {
    fn sigmoid_all(v: &mut [Self]);
    fn tanh_all(v: &mut [Self]);
    /// One LSTM step over its rows (see [`fastmath::lstm_cell`]).
    fn lstm_cell(gates: &mut [Self], c: &mut [Self], h: &mut [Self], hidden: usize);
    /// Its gradient, one row (see [`fastmath::lstm_cell_backward`]).
    fn lstm_cell_backward(
        saved: &[Self],
        c_prev: &[Self],
        dh: &[Self],
        dc: &mut [Self],
        d: &mut [Self],
    );
}

impl Activate for f32 {
    fn sigmoid_all(v: &mut [f32]) {
        fastmath::sigmoid_in_place(v);
    }

    fn tanh_all(v: &mut [f32]) {
        fastmath::tanh_in_place(v);
    }

    fn lstm_cell(gates: &mut [f32], c: &mut [f32], h: &mut [f32], hidden: usize) {
        fastmath::lstm_cell(gates, c, h, hidden);
    }

    fn lstm_cell_backward(
        saved: &[f32],
        c_prev: &[f32],
        dh: &[f32],
        dc: &mut [f32],
        d: &mut [f32],
    ) {
        fastmath::lstm_cell_backward(saved, c_prev, dh, dc, d);
    }
}

impl Activate for f64 {
    fn sigmoid_all(v: &mut [f64]) {
        v.iter_mut().for_each(|x| *x = sigmoid(*x));
    }

    fn tanh_all(v: &mut [f64]) {
        v.iter_mut().for_each(|x| *x = x.tanh());
    }

    fn lstm_cell(gates: &mut [f64], c: &mut [f64], h: &mut [f64], hidden: usize) {
        for ((g, c), h) in gates
            .chunks_exact_mut(4 * hidden)
            .zip(c.chunks_exact_mut(hidden))
            .zip(h.chunks_exact_mut(hidden))
        {
            let (if_, rest) = g.split_at_mut(2 * hidden);
            let (cand, o) = rest.split_at_mut(hidden);
            Self::sigmoid_all(if_);
            Self::tanh_all(cand);
            Self::sigmoid_all(o);
            let (i, f) = if_.split_at(hidden);
            for ((((c, h), &i), &f), (&cand, &o)) in c
                .iter_mut()
                .zip(h)
                .zip(i)
                .zip(f)
                .zip(cand.iter().zip(o.iter()))
            {
                *c = f * *c + i * cand;
                *h = o * c.tanh();
            }
        }
    }

    fn lstm_cell_backward(
        saved: &[f64],
        c_prev: &[f64],
        dh: &[f64],
        dc: &mut [f64],
        d: &mut [f64],
    ) {
        let hidden = dh.len();
        let at = |q: usize, k: usize| saved[q * hidden + k];
        for k in 0..hidden {
            let (i, f, g, o) = (at(0, k), at(1, k), at(2, k), at(3, k));
            let tc = at(4, k).tanh();
            let dc_in = dc[k] + dh[k] * o * (1.0 - tc * tc);
            dc[k] = dc_in * f;
            d[k] = dc_in * g * i * (1.0 - i);
            d[hidden + k] = dc_in * c_prev[k] * f * (1.0 - f);
            d[2 * hidden + k] = dc_in * i * (1.0 - g * g);
            d[3 * hidden + k] = dh[k] * tc * o * (1.0 - o);
        }
    }
}

/// `dst[i] += src[i]`.
fn add<T: Real>(dst: &mut [T], src: &[T]) {
    dst.iter_mut().zip(src).for_each(|(d, &s)| *d = *d + s);
}

/// `dst = a · wᵀ` for an `m×k` row-major `a` and an `n×k` row-major `w`.
fn times_transposed<T: Real>(m: usize, n: usize, k: usize, dst: &mut [T], a: &[T], w: &[T]) {
    let lhs = Matrix {
        data: a,
        row_stride: k,
        col_stride: 1,
    };
    let rhs = Matrix {
        data: w,
        row_stride: 1,
        col_stride: k,
    };
    gemm_into(m, n, k, dst, lhs, rhs, m * n * k >= PARALLEL_FLOPS, false);
}

/// The rows each step covers, `(first row, rows)`, in time order.
type Spans = [(usize, usize)];

/// One direction of one layer over `x` (`rows × input`): the output rows
/// (`rows × out`) and the final states. An LSTM given `saved`
/// (`rows × 5·hidden`) writes there, per row, its four gates after their
/// activations and the new cell state — what its backward reads.
fn layer<T: Activate>(
    cell: Cell,
    w: &Weights<T>,
    x: &[T],
    spans: &Spans,
    (h0, c0): (&[T], Option<&[T]>),
    reverse: bool,
    mut saved: Option<&mut [T]>,
) -> (Vec<T>, Vec<T>, Option<Vec<T>>) {
    let rows = x.len() / w.input.max(1);
    let gh = cell.gates() * w.hidden;
    let (hid, out) = (w.hidden, w.out);
    // The input's share of every gate, for all steps at once.
    let mut pre = vec![T::zero(); rows * gh];
    times_transposed(rows, gh, w.input, &mut pre, x, &w.w_ih);
    if let Some(b) = &w.b_ih {
        for row in pre.chunks_mut(gh.max(1)) {
            row.iter_mut().zip(b).for_each(|(v, &b)| *v = *v + b);
        }
    }
    let batch = h0.len() / out.max(1);
    let mut h = h0.to_vec();
    let mut c = c0.map(<[T]>::to_vec);
    let mut hh = vec![T::zero(); batch * gh];
    let mut cell_out = vec![T::zero(); if w.w_hr.is_some() { batch * hid } else { 0 }];
    let mut output = vec![T::zero(); rows * out];
    let order: Box<dyn Iterator<Item = &(usize, usize)>> = if reverse {
        Box::new(spans.iter().rev())
    } else {
        Box::new(spans.iter())
    };
    for &(first, b) in order {
        w.w_hh.product(&h[..b * out], b, &mut hh[..b * gh]);
        if let Some(bias) = &w.b_hh {
            for row in hh[..b * gh].chunks_mut(gh) {
                row.iter_mut().zip(bias).for_each(|(v, &b)| *v = *v + b);
            }
        }
        let pre = &pre[first * gh..(first + b) * gh];
        // (A zero hidden size has nothing to compute, and no rows to chunk.)
        if cell == Cell::Lstm && hid > 0 {
            let g = &mut hh[..b * gh];
            add(g, pre);
            let c = &mut c.as_mut().expect("an LSTM carries a cell state")[..b * hid];
            let dst = if w.w_hr.is_some() {
                &mut cell_out[..b * hid]
            } else {
                &mut h[..b * out]
            };
            T::lstm_cell(g, c, dst, hid);
            if let Some(saved) = saved.as_deref_mut() {
                let rows = &mut saved[first * 5 * hid..(first + b) * 5 * hid];
                for ((row, g), c) in rows
                    .chunks_exact_mut(5 * hid)
                    .zip(g.chunks_exact(gh))
                    .zip(c.chunks_exact(hid))
                {
                    row[..gh].copy_from_slice(g);
                    row[gh..].copy_from_slice(c);
                }
            }
        }
        for r in (0..b).filter(|_| cell != Cell::Lstm) {
            let g = &mut hh[r * gh..(r + 1) * gh];
            let p = &pre[r * gh..(r + 1) * gh];
            let h = &mut h[r * out..(r + 1) * out];
            match cell {
                Cell::RnnTanh | Cell::RnnRelu => {
                    add(g, p);
                    if cell == Cell::RnnTanh {
                        T::tanh_all(g);
                    } else {
                        g.iter_mut().for_each(|v| *v = v.max(T::zero()));
                    }
                    h.copy_from_slice(g);
                }
                Cell::Gru => {
                    let (rz, n) = g.split_at_mut(2 * hid);
                    add(rz, &p[..2 * hid]);
                    T::sigmoid_all(rz);
                    let (reset, update) = rz.split_at(hid);
                    for ((n, &r), &x) in n.iter_mut().zip(reset).zip(&p[2 * hid..]) {
                        *n = x + *n * r;
                    }
                    T::tanh_all(n);
                    for ((h, &z), &n) in h.iter_mut().zip(update).zip(n.iter()) {
                        *h = (*h - n) * z + n;
                    }
                }
                Cell::Lstm => unreachable!("an LSTM's step runs above"),
            }
        }
        if let Some(w_hr) = &w.w_hr {
            w_hr.product(&cell_out[..b * hid], b, &mut h[..b * out]);
        }
        output[first * out..(first + b) * out].copy_from_slice(&h[..b * out]);
    }
    (output, h, c)
}

/// The input's rows, time-major, which rows each step covers, and the batch.
struct Steps {
    x: Tensor,
    spans: Vec<(usize, usize)>,
    batch: usize,
}

fn steps(input: &Tensor, sequence: Sequence, op: &'static str) -> Result<Steps> {
    match sequence {
        Sequence::Padded { batch_first } => {
            if input.ndim() != 3 {
                return fail(
                    op,
                    format!("input must have 3 dimensions, got {}", input.ndim()),
                );
            }
            let x = if batch_first {
                input.with_layout(input.layout().transpose(0, 1))
            } else {
                input.clone()
            };
            let (t, b) = (x.shape()[0], x.shape()[1]);
            if t == 0 {
                return fail(op, "Expected sequence length to be larger than 0 in RNN");
            }
            let x = x.contiguous();
            Ok(Steps {
                x,
                spans: (0..t).map(|i| (i * b, b)).collect(),
                batch: b,
            })
        }
        Sequence::Packed { batch_sizes } => {
            let sizes = batch_sizes.to_dtype(DType::I64).to_vec::<i64>();
            if input.ndim() != 2
                || sizes.windows(2).any(|w| w[1] > w[0])
                || sizes.iter().any(|&s| s <= 0)
            {
                return fail(
                    op,
                    "a packed sequence's batch sizes must be positive and non-increasing",
                );
            }
            let total: i64 = sizes.iter().sum();
            if total as usize != input.shape()[0] {
                return fail(
                    op,
                    "a packed sequence's batch sizes must add up to its number of rows",
                );
            }
            let mut first = 0;
            let spans = sizes
                .iter()
                .map(|&s| {
                    let span = (first, s as usize);
                    first += s as usize;
                    span
                })
                .collect();
            Ok(Steps {
                x: input.contiguous(),
                spans,
                batch: sizes.first().copied().unwrap_or(0) as usize,
            })
        }
    }
}

/// Checks a stack's parameters and states against its input as `_VF`'s
/// recurrent ops do; the number of parameter tensors per layer and
/// direction.
pub fn check(stack: &Stack, input: &Tensor, hx: &[Tensor]) -> Result<usize> {
    let op = stack.cell.name();
    let dtype = input.dtype();
    if !dtype.is_float() {
        return Err(TensorError::not_implemented_for(format!("{op}_cpu"), dtype));
    }
    if let Some(p) = stack.params.iter().find(|p| p.dtype() != dtype) {
        return fail(
            op,
            format!(
                "Input and parameter tensors are not the same dtype, found input tensor with {} and parameter tensor with {}",
                legacy_name(dtype),
                legacy_name(p.dtype())
            ),
        );
    }
    let dirs = if stack.bidirectional { 2 } else { 1 };
    let units = stack.num_layers * dirs;
    let per = stack.params.len().checked_div(units).unwrap_or(0);
    let base = if stack.has_biases { 4 } else { 2 };
    if units == 0 || !stack.params.len().is_multiple_of(units) || !(base..=base + 1).contains(&per)
    {
        return fail(
            op,
            format!(
                "expected {} or {} parameter tensors per layer and direction, got {} in all",
                base,
                base + 1,
                stack.params.len()
            ),
        );
    }
    if hx.len() != stack.cell.states() {
        return fail(
            op,
            format!(
                "expected {} hidden state tensors, got {}",
                stack.cell.states(),
                hx.len()
            ),
        );
    }
    Ok(per)
}

/// The steps of a sequence: the rows of the time-major input each step
/// covers (`(first, count)`), and the batch size.
pub fn spans(
    input: &Tensor,
    sequence: Sequence,
    op: &'static str,
) -> Result<(Vec<(usize, usize)>, usize)> {
    steps(input, sequence, op).map(|s| (s.spans, s.batch))
}

/// Runs a stack of recurrent layers: the output (padded like the input, or
/// packed data) and the final states (`[h_n]`, or `[h_n, c_n]` for an LSTM).
pub fn run(
    stack: &Stack,
    input: &Tensor,
    hx: &[Tensor],
    sequence: Sequence,
    g: &Generator,
) -> Result<(Tensor, Vec<Tensor>)> {
    let op = stack.cell.name();
    let dtype = input.dtype();
    let per = check(stack, input, hx)?;
    let dirs = if stack.bidirectional { 2 } else { 1 };
    let Steps { x, spans, batch } = steps(input, sequence, op)?;
    // On a pool thread, the per-step splits are cheap joins rather than a
    // blocking hand-over from outside the pool at every step.
    rayon::scope(|_| match dtype {
        DType::F32 => run_typed::<f32>(stack, &x, hx, &spans, batch, sequence, g, dirs, per),
        _ => run_typed::<f64>(stack, &x, hx, &spans, batch, sequence, g, dirs, per),
    })
}

#[allow(clippy::too_many_arguments)] // the checked pieces of `run`
fn run_typed<T: Activate>(
    stack: &Stack,
    x: &Tensor,
    hx: &[Tensor],
    spans: &Spans,
    batch: usize,
    sequence: Sequence,
    g: &Generator,
    dirs: usize,
    per: usize,
) -> Result<(Tensor, Vec<Tensor>)> {
    let op = stack.cell.name();
    let rows = x.shape()[..x.ndim() - 1].iter().product::<usize>();
    let mut features = x.shape()[x.ndim() - 1];
    let mut data: Vec<T> = x.to_vec();
    let states: Vec<Vec<T>> = hx.iter().map(|h| h.contiguous().to_vec()).collect();
    let mut finals: Vec<Vec<Vec<T>>> = vec![Vec::new(); hx.len()];
    let mut width = 0;
    for layer_index in 0..stack.num_layers {
        let mut outputs = Vec::with_capacity(dirs);
        for d in 0..dirs {
            let unit = layer_index * dirs + d;
            let w = Weights::<T>::read(
                stack.cell,
                &stack.params[unit * per..(unit + 1) * per],
                stack.has_biases,
            )?;
            if w.input != features {
                return fail(
                    op,
                    format!(
                        "input.size(-1) must be equal to input_size. Expected {}, got {features}",
                        w.input
                    ),
                );
            }
            let h_len = batch * w.out;
            let c_len = batch * w.hidden;
            let h0 = states[0].get(unit * h_len..(unit + 1) * h_len);
            let c0 = states
                .get(1)
                .map(|c| c.get(unit * c_len..(unit + 1) * c_len));
            let (Some(h0), Some(c0)) = (h0, c0.map_or(Some(None), |c| c.map(Some))) else {
                return fail(
                    op,
                    "the hidden state does not match the layers, directions, batch and hidden size",
                );
            };
            let (out, h, c) = layer(stack.cell, &w, &data, spans, (h0, c0), d == 1, None);
            finals[0].push(h);
            if let Some(c) = c {
                finals[1].push(c);
            }
            width = w.out;
            outputs.push(out);
        }
        features = dirs * width;
        data = if dirs == 1 {
            outputs.pop().expect("one direction")
        } else {
            let mut both = Vec::with_capacity(rows * features);
            for r in 0..rows {
                both.extend_from_slice(&outputs[0][r * width..(r + 1) * width]);
                both.extend_from_slice(&outputs[1][r * width..(r + 1) * width]);
            }
            both
        };
        if stack.dropout > 0.0 && stack.train && layer_index + 1 < stack.num_layers {
            let t = Tensor::from_vec(data, &[rows, features]);
            data = create::dropout(
                &t,
                stack.dropout,
                DropoutKind {
                    feature: false,
                    alpha: false,
                },
                g,
            )?
            .contiguous()
            .to_vec();
        }
    }
    let output = Tensor::from_vec(data, &[rows * features]);
    let output = match sequence {
        Sequence::Packed { .. } => output.with_layout(Layout::contiguous(&[rows, features])),
        Sequence::Padded { batch_first } => {
            let steps = spans.len();
            let o = output.with_layout(Layout::contiguous(&[steps, batch, features]));
            if batch_first {
                o.with_layout(o.layout().transpose(0, 1)).contiguous()
            } else {
                o
            }
        }
    };
    let hidden = finals
        .into_iter()
        .map(|parts| {
            let size = parts.first().map_or(0, Vec::len) / batch.max(1);
            Tensor::from_vec(parts.concat(), &[stack.num_layers * dirs, batch, size])
        })
        .collect();
    Ok((output, hidden))
}

/// Checks one cell step's input and states against its weights as
/// `_VF`'s cells do.
pub fn check_cell(
    cell: Cell,
    input: &Tensor,
    hx: &[Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
) -> Result<()> {
    let op = cell.name();
    if input.ndim() != 2 {
        return fail(
            op,
            format!(
                "{op}_cell: Expected input to be 2D, got {}D instead",
                input.ndim()
            ),
        );
    }
    if w_ih.ndim() == 2 && input.shape()[1] != w_ih.shape()[1] {
        return fail(
            op,
            format!(
                "input has inconsistent input_size: got {} expected {}",
                input.shape()[1],
                w_ih.shape()[1]
            ),
        );
    }
    for (k, h) in hx.iter().enumerate() {
        if h.ndim() != 2 || h.shape()[0] != input.shape()[0] {
            return fail(
                op,
                format!(
                    "Input batch size {} doesn't match hidden{k} batch size {}",
                    input.shape()[0],
                    h.shape().first().copied().unwrap_or(0)
                ),
            );
        }
        if w_hh.ndim() == 2 && h.shape()[1] != w_hh.shape()[1] {
            return fail(
                op,
                format!(
                    "hidden{k} has inconsistent hidden_size: got {}, expected {}",
                    h.shape()[1],
                    w_hh.shape()[1]
                ),
            );
        }
    }
    Ok(())
}

/// One step of a cell on a `(B, input)` batch: the new states (`[h]`, or
/// `[h, c]` for an LSTM).
pub fn cell(
    cell: Cell,
    input: &Tensor,
    hx: &[Tensor],
    w_ih: &Tensor,
    w_hh: &Tensor,
    b_ih: Option<&Tensor>,
    b_hh: Option<&Tensor>,
) -> Result<Vec<Tensor>> {
    check_cell(cell, input, hx, w_ih, w_hh)?;
    let mut params = vec![w_ih.clone(), w_hh.clone()];
    let has_biases = match (b_ih, b_hh) {
        (Some(a), Some(b)) => {
            params.extend([a.clone(), b.clone()]);
            true
        }
        _ => false,
    };
    let stack = Stack {
        cell,
        params: &params,
        has_biases,
        num_layers: 1,
        dropout: 0.0,
        train: false,
        bidirectional: false,
    };
    let states: Vec<Tensor> = hx
        .iter()
        .map(|h| h.with_layout(h.layout().unsqueeze(0)))
        .collect();
    let steps = input.with_layout(input.layout().unsqueeze(0));
    let (_, finals) = run(
        &stack,
        &steps,
        &states,
        Sequence::Padded { batch_first: false },
        &Generator::default_cpu(),
    )?;
    Ok(finals
        .into_iter()
        .map(|h| {
            let shape = h.shape()[1..].to_vec();
            h.with_layout(Layout::contiguous(&shape))
        })
        .collect())
}

/// `_pack_padded_sequence`: the rows of a padded `(T, B, *)` input (or
/// `(B, T, *)`) that lie within each sequence's length, step by step, and
/// how many sequences each step holds. `lengths` must be sorted, longest first.
pub fn pack_padded(
    input: &Tensor,
    lengths: &Tensor,
    batch_first: bool,
) -> Result<(Tensor, Tensor)> {
    let op = "_pack_padded_sequence";
    let x = if batch_first {
        shape::transpose(input, 0, 1)?
    } else {
        input.clone()
    };
    if x.ndim() < 2 {
        return fail(
            op,
            "the padded input must have a time and a batch dimension",
        );
    }
    let lengths = lengths.to_dtype(DType::I64).to_vec::<i64>();
    let batch = x.shape()[1];
    if lengths.len() != batch {
        return fail(
            op,
            format!(
                "Expected `len(lengths)` to be equal to batch_size, but got {} (batch_size={batch})",
                lengths.len()
            ),
        );
    }
    if lengths.iter().any(|&l| l <= 0) {
        return fail(
            op,
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0",
        );
    }
    if lengths.windows(2).any(|w| w[1] > w[0]) {
        return fail(
            op,
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.",
        );
    }
    let longest = lengths[0] as usize;
    if longest > x.shape()[0] {
        return fail(
            op,
            format!(
                "Expected the longest length, {longest}, to be at most the padded length {}",
                x.shape()[0]
            ),
        );
    }
    let sizes: Vec<i64> = (0..longest as i64)
        .map(|t| lengths.iter().filter(|&&l| l > t).count() as i64)
        .collect();
    let rows = sizes
        .iter()
        .enumerate()
        .map(|(t, &b)| shape::narrow(&shape::select(&x, 0, t as i64)?, 0, 0, b))
        .collect::<Result<Vec<_>>>()?;
    let n = sizes.len();
    Ok((shape::cat(&rows, 0)?, Tensor::from_vec(sizes, &[n])))
}

/// `_pad_packed_sequence`: the packed rows back into a `(total_length, B, *)`
/// tensor (or `(B, total_length, *)`), the rest `padding`, and each
/// sequence's length.
pub fn pad_packed(
    data: &Tensor,
    batch_sizes: &Tensor,
    batch_first: bool,
    padding: crate::dtype::Scalar,
    total_length: usize,
) -> Result<(Tensor, Tensor)> {
    let sizes = batch_sizes.to_dtype(DType::I64).to_vec::<i64>();
    let batch = sizes.first().copied().unwrap_or(0).max(0) as usize;
    if data.ndim() == 0
        || sizes.iter().map(|&s| s.max(0) as usize).sum::<usize>() != data.shape()[0]
    {
        return fail(
            "_pad_packed_sequence",
            "the batch sizes do not add up to the packed data's rows",
        );
    }
    let mut shape = vec![total_length.max(sizes.len()), batch];
    shape.extend(&data.shape()[1..]);
    let out = Tensor::full(&shape, padding, data.dtype());
    let mut first = 0i64;
    for (t, &b) in sizes.iter().enumerate() {
        let dst = shape::narrow(&shape::select(&out, 0, t as i64)?, 0, 0, b)?;
        dst.copy_from(&shape::narrow(data, 0, first, b)?)?;
        first += b;
    }
    let lengths: Vec<i64> = (0..batch as i64)
        .map(|i| sizes.iter().filter(|&&s| s > i).count() as i64)
        .collect();
    let out = if batch_first {
        shape::transpose(&out, 0, 1)?.contiguous()
    } else {
        out
    };
    Ok((out, Tensor::from_vec(lengths, &[batch])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(v.to_vec(), shape)
    }

    #[test]
    fn an_rnn_step_is_tanh_of_both_projections() {
        // h1 = tanh(x·w_ih + h0·w_hh + biases), one unit.
        let h = cell(
            Cell::RnnTanh,
            &t(&[0.5], &[1, 1]),
            &[t(&[0.25], &[1, 1])],
            &t(&[2.0], &[1, 1]),
            &t(&[-1.0], &[1, 1]),
            Some(&t(&[0.1], &[1])),
            Some(&t(&[0.2], &[1])),
        )
        .unwrap();
        let want = (0.5f64 * 2.0 - 0.25 + 0.1 + 0.2).tanh();
        assert!((h[0].to_vec::<f64>()[0] - want).abs() < 1e-15);
    }

    #[test]
    fn an_lstm_step_gates_the_cell() {
        // Zero weights: every gate sees only its bias.
        let zeros = |n| t(&vec![0.0; n], &[n, 1]);
        let bias = t(&[0.0, 1.0, 2.0, 3.0], &[4]);
        let hc = cell(
            Cell::Lstm,
            &t(&[1.0], &[1, 1]),
            &[t(&[0.0], &[1, 1]), t(&[0.5], &[1, 1])],
            &zeros(4),
            &zeros(4),
            Some(&bias),
            Some(&t(&[0.0; 4], &[4])),
        )
        .unwrap();
        let s = |x: f64| 1.0 / (1.0 + (-x).exp());
        let c = s(1.0) * 0.5 + s(0.0) * 2f64.tanh();
        assert!((hc[1].to_vec::<f64>()[0] - c).abs() < 1e-15);
        assert!((hc[0].to_vec::<f64>()[0] - s(3.0) * c.tanh()).abs() < 1e-15);
    }

    #[test]
    fn packing_and_padding_round_trip() {
        // Two sequences of lengths 3 and 1, batch-first, one feature.
        let x = t(&[1.0, 2.0, 3.0, 4.0, 0.0, 0.0], &[2, 3, 1]);
        let lengths = Tensor::from_vec(vec![3i64, 1], &[2]);
        let (data, sizes) = pack_padded(&x, &lengths, true).unwrap();
        assert_eq!(data.to_vec::<f64>(), [1.0, 4.0, 2.0, 3.0]);
        assert_eq!(sizes.to_vec::<i64>(), [2, 1, 1]);
        let (back, lens) =
            pad_packed(&data, &sizes, true, crate::dtype::Scalar::Float(-1.0), 4).unwrap();
        assert_eq!(back.shape(), [2, 4, 1]);
        assert_eq!(
            back.to_vec::<f64>(),
            [1.0, 2.0, 3.0, -1.0, 4.0, -1.0, -1.0, -1.0]
        );
        assert_eq!(lens.to_vec::<i64>(), [3, 1]);
        assert!(pack_padded(&x, &Tensor::from_vec(vec![1i64, 3], &[2]), true).is_err());
    }

    #[test]
    fn packed_sequences_keep_each_sequence_own_final_state() {
        // Lengths 2 and 1: the second sequence's final state is after step 0.
        let w = [t(&[1.0], &[1, 1]), t(&[1.0], &[1, 1])];
        let stack = Stack {
            cell: Cell::RnnRelu,
            params: &w,
            has_biases: false,
            num_layers: 1,
            dropout: 0.0,
            train: false,
            bidirectional: false,
        };
        let data = t(&[1.0, 10.0, 2.0], &[3, 1]);
        let sizes = Tensor::from_vec(vec![2i64, 1], &[2]);
        let (out, h) = run(
            &stack,
            &data,
            &[t(&[0.0, 0.0], &[1, 2, 1])],
            Sequence::Packed {
                batch_sizes: &sizes,
            },
            &Generator::default_cpu(),
        )
        .unwrap();
        assert_eq!(out.to_vec::<f64>(), [1.0, 10.0, 3.0]);
        assert_eq!(h[0].to_vec::<f64>(), [3.0, 10.0]);
    }
}
