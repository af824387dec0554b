//! Recurrent layers and cells (`torch.lstm`, `torch.gru_cell`, …: what
//! `nn.LSTM` & co. call through `_VF`), and sequence packing.

use fxvm_tensor::ops::rnn::{self, Cell, Sequence, Stack};
use fxvm_tensor::random::Generator;
use fxvm_tensor::{Result, Scalar, Tensor};

use crate::derivatives::rnn::LSTM_MODE;
use crate::meta;
use crate::op::{Op, T, op};
use crate::value::Value;

/// A stack's initial states: `[h_0, c_0]` for an LSTM, `h_0` for the others.
trait States {
    fn into_states(self) -> Vec<Tensor>;
}

impl States for Vec<Tensor> {
    fn into_states(self) -> Vec<Tensor> {
        self
    }
}

impl States for Tensor {
    fn into_states(self) -> Vec<Tensor> {
        vec![self]
    }
}

type StackArgs<H> = (
    Tensor,
    H,
    Vec<Tensor>,
    bool,
    i64,
    f64,
    bool,
    bool,
    bool,
    Option<Tensor>,
    Generator,
);

/// A layer stack: `(output, h_n)`, or `(output, h_n, c_n)` for an LSTM.
/// Packed input comes as its data with `batch_sizes=`.
fn stack_row<H: States + crate::value::FromValue + 'static>(decl: &'static str, cell: Cell) -> Op {
    op(
        decl,
        T,
        move |(
            x,
            hx,
            params,
            has_biases,
            layers,
            dropout,
            train,
            bidirectional,
            batch_first,
            batch_sizes,
            g,
        ): StackArgs<H>|
              -> Result<Value> {
            let hx = hx.into_states();
            let stack = Stack {
                cell,
                params: &params,
                has_biases,
                num_layers: layers.max(0) as usize,
                dropout,
                train,
                bidirectional,
            };
            let sequence = match &batch_sizes {
                Some(sizes) => Sequence::Packed { batch_sizes: sizes },
                None => Sequence::Padded { batch_first },
            };
            let (output, states) = rnn::run(&stack, &x, &hx, sequence, &g)?;
            let mut all = vec![output];
            all.extend(states);
            Ok(Value::Tensors(all))
        },
    )
    .grad(crate::derivatives::rnn::stack(cell))
}

type LayerArgs = (
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    bool,
    Vec<i64>,
    i64,
    i64,
    i64,
    bool,
    bool,
    bool,
    bool,
);

type LayerBackwardArgs = (
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Tensor,
    Option<Tensor>,
    Option<Tensor>,
    Option<Tensor>,
    bool,
    i64,
    i64,
    i64,
    bool,
    bool,
    bool,
    Vec<i64>,
    bool,
    Tensor,
);

/// `mkldnn_rnn_layer`'s operands as the tensor crate's layer: only an
/// LSTM (mode 2) of the weights' hidden size; without biases the two
/// bias operands (zeros, as PyTorch passes them) are not read.
fn lstm_layer<'a>(
    x: &'a Tensor,
    [w_ih, w_hh, b_ih, b_hh]: [&'a Tensor; 4],
    has_biases: bool,
    [hx, cx]: [&'a Tensor; 2],
    reverse: bool,
    mode: i64,
    hidden: i64,
) -> Result<rnn::LstmLayer<'a>> {
    if mode != LSTM_MODE {
        return Err(fxvm_tensor::TensorError::runtime(
            "mkldnn_rnn_layer",
            format!("mkldnn_rnn_layer: mode {mode} is not an LSTM (mode {LSTM_MODE})"),
        ));
    }
    if w_hh.ndim() != 2 || w_hh.shape()[1] as i64 != hidden {
        return Err(fxvm_tensor::TensorError::runtime(
            "mkldnn_rnn_layer",
            format!(
                "mkldnn_rnn_layer: hidden_size {hidden} does not match weight1's shape {:?}",
                w_hh.shape()
            ),
        ));
    }
    Ok(rnn::LstmLayer {
        input: x,
        w_ih,
        w_hh,
        biases: has_biases.then_some((b_ih, b_hh)),
        hx,
        cx,
        reverse,
    })
}

type CellArgs<H> = (Tensor, H, Tensor, Tensor, Option<Tensor>, Option<Tensor>);

/// One step of an RNN or GRU cell: the new hidden state.
fn cell_row(decl: &'static str, cell: Cell) -> Op {
    op(
        decl,
        T,
        move |(x, h, w_ih, w_hh, b_ih, b_hh): CellArgs<Tensor>| -> Result<Tensor> {
            let mut states = rnn::cell(cell, &x, &[h], &w_ih, &w_hh, b_ih.as_ref(), b_hh.as_ref())?;
            Ok(states.remove(0))
        },
    )
    .grad(crate::derivatives::rnn::cell(cell))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        stack_row::<Vec<Tensor>>(
            "lstm(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor? batch_sizes=None, Generator? generator=None)",
            Cell::Lstm,
        ).meta(meta::recurrent),
        stack_row::<Tensor>(
            "gru(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor? batch_sizes=None, Generator? generator=None)",
            Cell::Gru,
        ).meta(meta::recurrent),
        stack_row::<Tensor>(
            "rnn_tanh(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor? batch_sizes=None, Generator? generator=None)",
            Cell::RnnTanh,
        ).meta(meta::recurrent),
        stack_row::<Tensor>(
            "rnn_relu(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first, *, Tensor? batch_sizes=None, Generator? generator=None)",
            Cell::RnnRelu,
        ).meta(meta::recurrent),
        op(
            "lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
            T,
            |(x, hx, w_ih, w_hh, b_ih, b_hh): CellArgs<Vec<Tensor>>| {
                rnn::cell(
                    Cell::Lstm,
                    &x,
                    &hx,
                    &w_ih,
                    &w_hh,
                    b_ih.as_ref(),
                    b_hh.as_ref(),
                )
            },
        )
        .grad(crate::derivatives::rnn::cell(Cell::Lstm))
        .meta(meta::recurrent_cell),
        cell_row(
            "gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
            Cell::Gru,
        ).meta(meta::recurrent_cell),
        cell_row(
            "rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
            Cell::RnnTanh,
        ).meta(meta::recurrent_cell),
        cell_row(
            "rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None)",
            Cell::RnnRelu,
        ).meta(meta::recurrent_cell),
        // What a float32 LSTM with gradients records per layer and
        // direction, as PyTorch's CPU build (oneDNN) records it, and its
        // backward (not bound in Python).
        op(
            "mkldnn_rnn_layer(Tensor input, Tensor weight0, Tensor weight1, Tensor weight2, Tensor weight3, Tensor hx_, Tensor cx_, bool reverse, int[] batch_sizes, int mode, int hidden_size, int num_layers, bool has_biases, bool bidirectional, bool batch_first, bool train) -> tuple[Tensor, Tensor, Tensor, Tensor]",
            T,
            |(x, w_ih, w_hh, b_ih, b_hh, hx, cx, reverse, _sizes, mode, hidden, _layers, has_biases, _bidirectional, _batch_first, _train): LayerArgs| -> Result<Value> {
                let layer = lstm_layer(&x, [&w_ih, &w_hh, &b_ih, &b_hh], has_biases, [&hx, &cx], reverse, mode, hidden)?;
                let out = rnn::lstm_layer(&layer)?;
                Ok(Value::Tuple(
                    [out.output, out.hy, out.cy, out.workspace].into_iter().map(Value::Tensor).collect(),
                ))
            },
        )
        .grad(crate::derivatives::rnn::lstm_layer())
        .nondiff_outputs(&[3]),
        op(
            "mkldnn_rnn_layer_backward(Tensor input, Tensor weight1, Tensor weight2, Tensor weight3, Tensor weight4, Tensor hx_, Tensor cx_tmp, Tensor output, Tensor hy_, Tensor cy_, Tensor? grad_output, Tensor? grad_hy, Tensor? grad_cy, bool reverse, int mode, int hidden_size, int num_layers, bool has_biases, bool train, bool bidirectional, int[] batch_sizes, bool batch_first, Tensor workspace) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]",
            &[],
            |(x, w_ih, w_hh, b_ih, b_hh, hx, cx, output, _hy, _cy, g_out, g_hy, g_cy, reverse, mode, hidden, _layers, has_biases, _train, _bidirectional, _sizes, _batch_first, workspace): LayerBackwardArgs| -> Result<Value> {
                let layer = lstm_layer(&x, [&w_ih, &w_hh, &b_ih, &b_hh], has_biases, [&hx, &cx], reverse, mode, hidden)?;
                let g = rnn::lstm_layer_backward(&layer, &output, &workspace, [g_out.as_ref(), g_hy.as_ref(), g_cy.as_ref()])?;
                Ok(Value::Tuple(
                    [g.input, g.w_ih, g.w_hh, g.bias.clone(), g.bias, g.hx, g.cx].into_iter().map(Value::Tensor).collect(),
                ))
            },
        ),
        op(
            "_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first)",
            T,
            |(x, lengths, batch_first): (Tensor, Tensor, bool)| {
                let (data, sizes) = rnn::pack_padded(&x, &lengths, batch_first)?;
                Ok(vec![data, sizes])
            },
        )
        .grad(crate::derivatives::rnn::pack_padded()),
        op(
            "_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, int total_length)",
            T,
            |(data, sizes, batch_first, padding, total): (Tensor, Tensor, bool, Scalar, i64)| {
                let (padded, lengths) =
                    rnn::pad_packed(&data, &sizes, batch_first, padding, total.max(0) as usize)?;
                Ok(vec![padded, lengths])
            },
        )
        .grad(crate::derivatives::rnn::pad_packed()),
    ]
}
