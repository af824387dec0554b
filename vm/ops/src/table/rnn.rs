//! Recurrent layers and cells (`torch.lstm`, `torch.gru_cell`, …: what
//! `nn.LSTM` & co. call through `_VF`), and sequence packing.

use fxvm_tensor::ops::rnn::{self, Cell, Sequence, Stack};
use fxvm_tensor::random::Generator;
use fxvm_tensor::{Result, Scalar, Tensor};

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
