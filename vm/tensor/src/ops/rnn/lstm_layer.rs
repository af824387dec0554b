//! One LSTM layer in one direction, saving what its backward reads, and
//! that backward — the pair PyTorch's CPU build records a float32 LSTM
//! with gradients as (`mkldnn_rnn_layer`, `MkldnnRnnLayerBackward0`). The
//! backward walks the steps in reverse for the gates' gradients (one small
//! product per step carries the hidden state's gradient back), then forms
//! the input's and the weights' gradients as three products over all steps
//! at once.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::ops::linalg::{Matrix, PARALLEL_FLOPS, gemm_into};
use crate::tensor::Tensor;

use super::recurrent::Packed;
use super::{Activate, Cell, Weights, fail, layer, weight_sizes};

const OP: &str = "mkldnn_rnn_layer";

/// Values saved per time-major row: the input, forget, cell and output
/// gates after their activations, then the new cell state.
const SAVED: usize = 5;

/// One direction of one LSTM layer's operands.
#[derive(Clone, Copy, Debug)]
pub struct LstmLayer<'a> {
    /// Time-major `(T, B, input)`.
    pub input: &'a Tensor,
    /// `(4·hidden, input)`, gates stacked as input, forget, cell, output.
    pub w_ih: &'a Tensor,
    /// `(4·hidden, hidden)`.
    pub w_hh: &'a Tensor,
    /// `b_ih, b_hh`, each `(4·hidden)`.
    pub biases: Option<(&'a Tensor, &'a Tensor)>,
    /// Initial hidden and cell states, `(B, hidden)`.
    pub hx: &'a Tensor,
    pub cx: &'a Tensor,
    /// Runs from the last step to the first.
    pub reverse: bool,
}

/// The layer's results: `output` `(T, B, hidden)`, the final states
/// `(B, hidden)`, and the saved gates and cell states (`T·B·5·hidden`).
#[derive(Clone, Debug)]
pub struct LstmLayerOutput {
    pub output: Tensor,
    pub hy: Tensor,
    pub cy: Tensor,
    pub workspace: Tensor,
}

/// The gradients of every operand; both biases' are `bias`.
#[derive(Clone, Debug)]
pub struct LstmLayerGrads {
    pub input: Tensor,
    pub w_ih: Tensor,
    pub w_hh: Tensor,
    pub bias: Tensor,
    pub hx: Tensor,
    pub cx: Tensor,
}

/// The layer's sizes, checked against each other.
#[derive(Clone, Copy)]
struct Dims {
    steps: usize,
    batch: usize,
    input: usize,
    hidden: usize,
}

impl Dims {
    fn rows(self) -> usize {
        self.steps * self.batch
    }

    fn gates(self) -> usize {
        4 * self.hidden
    }

    /// The step whose states step `t` starts from, in time order; `None`
    /// for the first step run (it starts from `hx`, `cx`).
    fn previous(self, t: usize, reverse: bool) -> Option<usize> {
        if reverse {
            (t + 1 < self.steps).then_some(t + 1)
        } else {
            t.checked_sub(1)
        }
    }
}

impl LstmLayer<'_> {
    fn params(&self) -> Vec<Tensor> {
        let mut params = vec![self.w_ih.clone(), self.w_hh.clone()];
        if let Some((b_ih, b_hh)) = self.biases {
            params.extend([b_ih.clone(), b_hh.clone()]);
        }
        params
    }

    fn weights<T: Activate>(&self) -> Result<Weights<T>> {
        Weights::read(Cell::Lstm, &self.params(), self.biases.is_some())
    }

    fn check(&self) -> Result<Dims> {
        let dtype = self.input.dtype();
        if !matches!(dtype, DType::F32 | DType::F64) {
            return Err(TensorError::not_implemented_for(OP, dtype));
        }
        if self
            .params()
            .iter()
            .chain([self.hx, self.cx])
            .any(|t| t.dtype() != dtype)
        {
            return fail(OP, "the input, weights and states must have one dtype");
        }
        if self.input.ndim() != 3 {
            return fail(
                OP,
                format!("input must have 3 dimensions, got {}", self.input.ndim()),
            );
        }
        let [steps, batch, input] = [0, 1, 2].map(|d| self.input.shape()[d]);
        // The backward reads the weights by these sizes: checked here, for both.
        let (hidden, _) = weight_sizes(Cell::Lstm, &self.params(), self.biases.is_some())?;
        if self.w_ih.shape().get(1) != Some(&input) {
            return fail(
                OP,
                format!(
                    "input.size(-1) must be equal to input_size. Expected {}, got {input}",
                    self.w_ih.shape().get(1).copied().unwrap_or(0)
                ),
            );
        }
        for state in [self.hx, self.cx] {
            if state.shape() != [batch, hidden] {
                return fail(
                    OP,
                    format!(
                        "Expected hidden size [{batch}, {hidden}], got {:?}",
                        state.shape()
                    ),
                );
            }
        }
        Ok(Dims {
            steps,
            batch,
            input,
            hidden,
        })
    }
}

/// Runs the layer, saving its gates and cell states.
pub fn lstm_layer(l: &LstmLayer) -> Result<LstmLayerOutput> {
    let dims = l.check()?;
    match l.input.dtype() {
        DType::F32 => forward::<f32>(l, dims),
        _ => forward::<f64>(l, dims),
    }
}

fn forward<T: Activate>(l: &LstmLayer, dims: Dims) -> Result<LstmLayerOutput> {
    let w = l.weights::<T>()?;
    let x: Vec<T> = l.input.contiguous().to_vec();
    let (h0, c0): (Vec<T>, Vec<T>) = (l.hx.contiguous().to_vec(), l.cx.contiguous().to_vec());
    let spans: Vec<(usize, usize)> = (0..dims.steps)
        .map(|t| (t * dims.batch, dims.batch))
        .collect();
    let mut saved = vec![T::zero(); dims.rows() * SAVED * dims.hidden];
    // On a pool thread, as `run`: the per-step splits are cheap joins.
    let (output, h, c) = rayon::scope(|_| {
        layer(
            Cell::Lstm,
            &w,
            &x,
            &spans,
            (&h0, Some(&c0)),
            l.reverse,
            Some(&mut saved),
        )
    });
    let state = |v: Vec<T>| Tensor::from_vec(v, &[dims.batch, dims.hidden]);
    let saved_len = saved.len();
    Ok(LstmLayerOutput {
        output: Tensor::from_vec(output, &[dims.steps, dims.batch, dims.hidden]),
        hy: state(h),
        cy: state(c.expect("an LSTM carries a cell state")),
        workspace: Tensor::from_vec(saved, &[saved_len]),
    })
}

/// The gradients of the layer's operands from those of its `output`, `hy`
/// and `cy` (each absent when nothing flowed back), given the forward's
/// `output` and `workspace`.
pub fn lstm_layer_backward(
    l: &LstmLayer,
    output: &Tensor,
    workspace: &Tensor,
    grads: [Option<&Tensor>; 3],
) -> Result<LstmLayerGrads> {
    let dims = l.check()?;
    let shapes = [
        vec![dims.steps, dims.batch, dims.hidden],
        vec![dims.batch, dims.hidden],
        vec![dims.batch, dims.hidden],
    ];
    if output.shape() != shapes[0].as_slice()
        || workspace.numel() != dims.rows() * SAVED * dims.hidden
        || grads
            .iter()
            .zip(&shapes)
            .any(|(g, s)| g.is_some_and(|g| g.shape() != s.as_slice()))
    {
        return fail(
            "mkldnn_rnn_layer_backward",
            "the saved results or gradients do not match the layer",
        );
    }
    match l.input.dtype() {
        DType::F32 => backward::<f32>(l, dims, output, workspace, grads),
        _ => backward::<f64>(l, dims, output, workspace, grads),
    }
}

fn dense<T: Activate>(t: &Tensor) -> Vec<T> {
    t.to_dtype(T::DTYPE).contiguous().to_vec()
}

fn backward<T: Activate>(
    l: &LstmLayer,
    dims: Dims,
    output: &Tensor,
    workspace: &Tensor,
    [g_out, g_hy, g_cy]: [Option<&Tensor>; 3],
) -> Result<LstmLayerGrads> {
    let Dims {
        steps,
        batch,
        input,
        hidden,
    } = dims;
    let (gh, rows) = (dims.gates(), dims.rows());
    let zeros = || vec![T::zero(); batch * hidden];
    let saved: Vec<T> = dense(workspace);
    let out: Vec<T> = dense(output);
    let g_out: Option<Vec<T>> = g_out.map(dense);
    let (cx, hx): (Vec<T>, Vec<T>) = (dense(l.cx), dense(l.hx));
    let mut dh = g_hy.map_or_else(zeros, dense);
    let mut dc = g_cy.map_or_else(zeros, dense);
    // `dh · w_hh` carries the hidden state's gradient back a step: `w_hhᵀ`
    // packed as the `hidden × 4·hidden` matrix of that product.
    let w_hh: Vec<T> = dense(l.w_hh);
    let mut w_hh_t = vec![T::zero(); gh * hidden];
    for (g, row) in w_hh.chunks(hidden.max(1)).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            w_hh_t[j * gh + g] = v;
        }
    }
    let carry = Packed::new(&w_hh_t, hidden, gh);
    // The gates' gradients before their activations, per time-major row.
    let mut dg = vec![T::zero(); rows * gh];
    let order: Box<dyn Iterator<Item = usize>> = if l.reverse {
        Box::new(0..steps)
    } else {
        Box::new((0..steps).rev())
    };
    for t in order {
        let previous = dims.previous(t, l.reverse);
        if let Some(go) = &g_out {
            super::add(&mut dh, &go[t * batch * hidden..(t + 1) * batch * hidden]);
        }
        for r in 0..batch {
            let row = t * batch + r;
            let c_prev = match previous {
                Some(p) => {
                    let at = ((p * batch + r) * SAVED + 4) * hidden;
                    &saved[at..at + hidden]
                }
                None => &cx[r * hidden..(r + 1) * hidden],
            };
            T::lstm_cell_backward(
                &saved[row * SAVED * hidden..(row + 1) * SAVED * hidden],
                c_prev,
                &dh[r * hidden..(r + 1) * hidden],
                &mut dc[r * hidden..(r + 1) * hidden],
                &mut dg[row * gh..(row + 1) * gh],
            );
        }
        carry.product(&dg[t * batch * gh..(t + 1) * batch * gh], batch, &mut dh);
    }
    // The hidden state each row's step started from.
    let mut h_prev = Vec::with_capacity(rows * hidden);
    for t in 0..steps {
        match dims.previous(t, l.reverse) {
            Some(p) => h_prev.extend_from_slice(&out[p * batch * hidden..(p + 1) * batch * hidden]),
            None => h_prev.extend_from_slice(&hx),
        }
    }
    let x: Vec<T> = dense(l.input);
    let w_ih: Vec<T> = dense(l.w_ih);
    fn rows_major<T>(data: &[T], cols: usize) -> Matrix<'_, T> {
        Matrix {
            data,
            row_stride: cols,
            col_stride: 1,
        }
    }
    // `dgᵀ`: the gates as rows, the time-major rows as columns.
    let gates_t = Matrix {
        data: &dg,
        row_stride: 1,
        col_stride: gh,
    };
    let parallel = |m: usize, n: usize, k: usize| m * n * k >= PARALLEL_FLOPS;
    let mut dx = vec![T::zero(); rows * input];
    gemm_into(
        rows,
        input,
        gh,
        &mut dx,
        rows_major(&dg, gh),
        rows_major(&w_ih, input),
        parallel(rows, input, gh),
        false,
    );
    let mut dw_ih = vec![T::zero(); gh * input];
    gemm_into(
        gh,
        input,
        rows,
        &mut dw_ih,
        gates_t,
        rows_major(&x, input),
        parallel(gh, input, rows),
        false,
    );
    let mut dw_hh = vec![T::zero(); gh * hidden];
    gemm_into(
        gh,
        hidden,
        rows,
        &mut dw_hh,
        gates_t,
        rows_major(&h_prev, hidden),
        parallel(gh, hidden, rows),
        false,
    );
    let mut bias = vec![T::zero(); gh];
    for row in dg.chunks(gh.max(1)) {
        bias.iter_mut().zip(row).for_each(|(b, &g)| *b = *b + g);
    }
    let state = |v: Vec<T>| Tensor::from_vec(v, &[batch, hidden]);
    Ok(LstmLayerGrads {
        input: Tensor::from_vec(dx, &[steps, batch, input]),
        w_ih: Tensor::from_vec(dw_ih, &[gh, input]),
        w_hh: Tensor::from_vec(dw_hh, &[gh, hidden]),
        bias: Tensor::from_vec(bias, &[gh]),
        hx: state(dh),
        cx: state(dc),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic pseudo-random tensor in [-1, 1).
    fn filled(shape: &[usize], seed: u64) -> Tensor {
        let n: usize = shape.iter().product();
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let v: Vec<f64> = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect();
        Tensor::from_vec(v, shape)
    }

    struct Case {
        x: Tensor,
        w_ih: Tensor,
        w_hh: Tensor,
        b_ih: Tensor,
        b_hh: Tensor,
        hx: Tensor,
        cx: Tensor,
    }

    impl Case {
        fn new(steps: usize, batch: usize, input: usize, hidden: usize) -> Case {
            Case {
                x: filled(&[steps, batch, input], 1),
                w_ih: filled(&[4 * hidden, input], 2),
                w_hh: filled(&[4 * hidden, hidden], 3),
                b_ih: filled(&[4 * hidden], 4),
                b_hh: filled(&[4 * hidden], 5),
                hx: filled(&[batch, hidden], 6),
                cx: filled(&[batch, hidden], 7),
            }
        }

        fn layer(&self, reverse: bool) -> LstmLayer<'_> {
            LstmLayer {
                input: &self.x,
                w_ih: &self.w_ih,
                w_hh: &self.w_hh,
                biases: Some((&self.b_ih, &self.b_hh)),
                hx: &self.hx,
                cx: &self.cx,
                reverse,
            }
        }
    }

    /// `Σ output·a + hy·b + cy·c` for fixed weights `a, b, c`: a scalar
    /// whose gradient is `(a, b, c)` on the results.
    fn objective(l: &LstmLayer, weights: &[Tensor; 3]) -> f64 {
        let out = lstm_layer(l).unwrap();
        [&out.output, &out.hy, &out.cy]
            .iter()
            .zip(weights)
            .map(|(t, w)| {
                t.to_vec::<f64>()
                    .iter()
                    .zip(w.to_vec::<f64>())
                    .map(|(a, b)| a * b)
                    .sum::<f64>()
            })
            .sum()
    }

    /// Central differences of `objective` along each element of `t`.
    fn numeric(
        case: &Case,
        reverse: bool,
        weights: &[Tensor; 3],
        pick: fn(&mut Case) -> &mut Tensor,
    ) -> Vec<f64> {
        let mut case = clone(case);
        let base = pick(&mut case).to_vec::<f64>();
        let shape = pick(&mut case).shape().to_vec();
        let eps = 1e-6;
        (0..base.len())
            .map(|i| {
                let at = |delta: f64| {
                    let mut v = base.clone();
                    v[i] += delta;
                    let mut moved = clone(&case);
                    *pick(&mut moved) = Tensor::from_vec(v, &shape);
                    objective(&moved.layer(reverse), weights)
                };
                (at(eps) - at(-eps)) / (2.0 * eps)
            })
            .collect()
    }

    fn clone(c: &Case) -> Case {
        Case {
            x: c.x.clone(),
            w_ih: c.w_ih.clone(),
            w_hh: c.w_hh.clone(),
            b_ih: c.b_ih.clone(),
            b_hh: c.b_hh.clone(),
            hx: c.hx.clone(),
            cx: c.cx.clone(),
        }
    }

    fn close(got: &Tensor, want: &[f64]) {
        let got = got.to_vec::<f64>();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-7 * (1.0 + w.abs()), "{g} vs {w}");
        }
    }

    #[test]
    fn the_backward_matches_finite_differences_in_both_directions() {
        let case = Case::new(3, 2, 3, 2);
        let weights = [
            filled(&[3, 2, 2], 8),
            filled(&[2, 2], 9),
            filled(&[2, 2], 10),
        ];
        for reverse in [false, true] {
            let l = case.layer(reverse);
            let out = lstm_layer(&l).unwrap();
            let g = lstm_layer_backward(
                &l,
                &out.output,
                &out.workspace,
                [Some(&weights[0]), Some(&weights[1]), Some(&weights[2])],
            )
            .unwrap();
            close(&g.input, &numeric(&case, reverse, &weights, |c| &mut c.x));
            close(&g.w_ih, &numeric(&case, reverse, &weights, |c| &mut c.w_ih));
            close(&g.w_hh, &numeric(&case, reverse, &weights, |c| &mut c.w_hh));
            close(&g.bias, &numeric(&case, reverse, &weights, |c| &mut c.b_ih));
            close(&g.bias, &numeric(&case, reverse, &weights, |c| &mut c.b_hh));
            close(&g.hx, &numeric(&case, reverse, &weights, |c| &mut c.hx));
            close(&g.cx, &numeric(&case, reverse, &weights, |c| &mut c.cx));
        }
    }

    #[test]
    fn float32_runs_its_vectorised_kernels_to_float32_precision() {
        let case = Case::new(4, 3, 5, 17);
        let single = |t: &Tensor| t.to_dtype(DType::F32);
        let c32 = Case {
            x: single(&case.x),
            w_ih: single(&case.w_ih),
            w_hh: single(&case.w_hh),
            b_ih: single(&case.b_ih),
            b_hh: single(&case.b_hh),
            hx: single(&case.hx),
            cx: single(&case.cx),
        };
        for reverse in [false, true] {
            let grads_of = |c: &Case| {
                let l = c.layer(reverse);
                let out = lstm_layer(&l).unwrap();
                let gy = Tensor::full(
                    &[4, 3, 17],
                    crate::dtype::Scalar::Float(0.5),
                    l.input.dtype(),
                );
                let g =
                    lstm_layer_backward(&l, &out.output, &out.workspace, [Some(&gy), None, None])
                        .unwrap();
                [
                    out.output, out.cy, g.input, g.w_ih, g.w_hh, g.bias, g.hx, g.cx,
                ]
            };
            for (a, b) in grads_of(&case).iter().zip(grads_of(&c32)) {
                for (x, y) in a.to_vec::<f64>().iter().zip(b.to_vec::<f64>()) {
                    assert!((x - y).abs() < 2e-5 * (1.0 + x.abs()), "{x} vs {y}");
                }
            }
        }
    }

    #[test]
    fn absent_gradients_are_zeros() {
        let case = Case::new(2, 3, 2, 3);
        let l = case.layer(false);
        let out = lstm_layer(&l).unwrap();
        let zero = |s: &[usize]| Tensor::from_vec(vec![0.0f64; s.iter().product()], s);
        let gy = filled(&[2, 3, 3], 11);
        let with_zeros = lstm_layer_backward(
            &l,
            &out.output,
            &out.workspace,
            [Some(&gy), Some(&zero(&[3, 3])), Some(&zero(&[3, 3]))],
        )
        .unwrap();
        let absent =
            lstm_layer_backward(&l, &out.output, &out.workspace, [Some(&gy), None, None]).unwrap();
        assert_eq!(with_zeros.w_hh.to_vec::<f64>(), absent.w_hh.to_vec::<f64>());
        assert_eq!(with_zeros.cx.to_vec::<f64>(), absent.cx.to_vec::<f64>());
    }

    #[test]
    fn the_layer_computes_what_the_stacked_kernel_computes() {
        let case = Case::new(4, 2, 3, 5);
        let out = lstm_layer(&case.layer(false)).unwrap();
        let params = [
            case.w_ih.clone(),
            case.w_hh.clone(),
            case.b_ih.clone(),
            case.b_hh.clone(),
        ];
        let stack = super::super::Stack {
            cell: Cell::Lstm,
            params: &params,
            has_biases: true,
            num_layers: 1,
            dropout: 0.0,
            train: false,
            bidirectional: false,
        };
        let states = [
            case.hx.with_layout(case.hx.layout().unsqueeze(0)),
            case.cx.with_layout(case.cx.layout().unsqueeze(0)),
        ];
        let (want, finals) = super::super::run(
            &stack,
            &case.x,
            &states,
            super::super::Sequence::Padded { batch_first: false },
            &crate::random::Generator::default_cpu(),
        )
        .unwrap();
        assert_eq!(out.output.to_vec::<f64>(), want.to_vec::<f64>());
        assert_eq!(out.hy.to_vec::<f64>(), finals[0].to_vec::<f64>());
        assert_eq!(out.cy.to_vec::<f64>(), finals[1].to_vec::<f64>());
    }

    #[test]
    fn mismatched_states_are_refused() {
        let case = Case::new(2, 3, 2, 3);
        let bad = filled(&[2, 3], 12);
        let l = LstmLayer {
            hx: &bad,
            ..case.layer(false)
        };
        assert!(lstm_layer(&l).is_err());
        // A recurrent weight of the wrong height: refused, not read past.
        let short = filled(&[8, 3], 13);
        let l = LstmLayer {
            w_hh: &short,
            ..case.layer(false)
        };
        let out = lstm_layer(&case.layer(false)).unwrap();
        assert!(lstm_layer_backward(&l, &out.output, &out.workspace, [None, None, None]).is_err());
        let ints = Tensor::from_vec(vec![1i64; 18], &[3, 2, 3]);
        let l = LstmLayer {
            input: &ints,
            ..case.layer(false)
        };
        assert!(lstm_layer(&l).is_err());
    }
}
