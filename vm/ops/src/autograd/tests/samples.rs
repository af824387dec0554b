//! The sample call each differentiable row is checked with: float64
//! leaves away from the kinks, and the other arguments a real call passes.

use fxvm_tensor::{DType, Scalar, Tensor};

use crate::op::Op;
use crate::value::Value;

/// Deterministic values in ±[0.2, 0.9] (away from the kinks at 0).
pub(super) fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|i| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let u = (s >> 11) as f64 / (1u64 << 53) as f64;
            let m = 0.2 + 0.7 * u;
            if i % 2 == 0 { m } else { -m }
        })
        .collect()
}

pub(super) fn leaf(v: Vec<f64>, shape: &[usize]) -> Value {
    let t = Tensor::from_vec(v, shape);
    t.set_requires_grad(true).unwrap();
    Value::Tensor(t)
}

/// A float64 tensor requiring grad.
pub(super) fn x(shape: &[usize], seed: u64) -> Value {
    leaf(values(shape.iter().product(), seed), shape)
}

/// Positive values only.
pub(super) fn pos(shape: &[usize], seed: u64) -> Value {
    let v = values(shape.iter().product(), seed)
        .into_iter()
        .map(f64::abs)
        .collect();
    leaf(v, shape)
}

/// Values in (1.2, 1.9) (acosh's domain).
pub(super) fn above_one(shape: &[usize], seed: u64) -> Value {
    let v = values(shape.iter().product(), seed)
        .into_iter()
        .map(|v| 1.0 + v.abs())
        .collect();
    leaf(v, shape)
}

pub(super) fn ints(v: Vec<i64>, shape: &[usize]) -> Value {
    Value::Tensor(Tensor::from_vec(v, shape))
}

pub(super) fn consts(v: Vec<f64>, shape: &[usize]) -> Value {
    Value::Tensor(Tensor::from_vec(v, shape))
}

/// A 3×3 matrix far from singular, with a positive determinant.
pub(super) fn well_conditioned() -> Value {
    leaf(vec![2.0, 0.3, -0.2, 0.1, 1.5, 0.4, -0.3, 0.2, 1.8], &[3, 3])
}

pub(super) type Call = (Vec<Value>, Vec<(&'static str, Value)>);

/// Which row a sample is for: `F.` marks torch.nn.functional's rows.
pub(super) fn key(op: &Op) -> String {
    let functional = !op.places.is_empty() && op.places.iter().all(|p| p.is_functional());
    format!("{}{}", if functional { "F." } else { "" }, op.name())
}

/// The `n` of a row named `…{n}d`.
pub(super) fn spatial(name: &str) -> usize {
    let digit = name.chars().rev().nth(1).unwrap();
    digit.to_digit(10).unwrap() as usize
}

/// A call of the out-of-place row `name` (in-place rows reuse it).
pub(super) fn sample(name: &str, op: &Op) -> Option<Call> {
    let s = |v: Vec<Value>| Some((v, vec![]));
    let x23 = || x(&[2, 3], 1);
    Some(match name {
        "log" | "log2" | "log10" | "sqrt" | "rsqrt" | "lgamma" | "digamma" => {
            (vec![pos(&[2, 3], 1)], vec![])
        }
        // `torch.polygamma(n, input)`, `Tensor.polygamma(n)`.
        "polygamma" if op.places.contains(&crate::op::Place::Method) => {
            return s(vec![pos(&[2, 3], 1), Value::Int(2)]);
        }
        "polygamma" => return s(vec![Value::Int(1), pos(&[2, 3], 1)]),
        "acosh" | "arccosh" => (vec![above_one(&[2, 3], 1)], vec![]),
        "pow" | "float_power" => return s(vec![pos(&[2, 3], 1), x(&[3], 2)]),
        "sum" | "mean" => {
            return s(vec![
                x(&[2, 3, 4], 1),
                Value::Ints(vec![0, 2]),
                Value::Bool(false),
            ]);
        }
        "softmax" | "log_softmax" => return s(vec![x(&[2, 5], 1), Value::Int(1), Value::None]),
        "F.softmax" | "F.log_softmax" => return s(vec![x(&[2, 5], 1), Value::Int(-1)]),
        "F.gelu" | "gelu" => return s(vec![x23()]),
        "threshold_backward" => {
            return s(vec![
                x23(),
                x(&[2, 3], 2),
                Value::Scalar(Scalar::Float(0.1)),
            ]);
        }
        "gelu_backward" => {
            let approximate = Value::Str("tanh".into());
            return Some((
                vec![x23(), x(&[2, 3], 2)],
                vec![("approximate", approximate)],
            ));
        }
        "F.relu" => return s(vec![x23()]),
        "mm" => return s(vec![x(&[2, 3], 1), x(&[3, 4], 2)]),
        "bmm" => return s(vec![x(&[2, 2, 3], 1), x(&[2, 3, 4], 2)]),
        "matmul" => return s(vec![x(&[2, 2, 3], 1), x(&[3, 4], 2)]),
        "addmm" => return s(vec![x(&[4], 3), x(&[2, 3], 1), x(&[3, 4], 2)]),
        "F.linear" => return s(vec![x(&[2, 2, 3], 1), x(&[4, 3], 2), x(&[4], 3)]),
        "view" | "reshape" => return s(vec![x23(), Value::Ints(vec![3, 2])]),
        "view_as" | "reshape_as" => return s(vec![x23(), consts(vec![0.0; 6], &[6])]),
        "flatten" => return s(vec![x(&[2, 3, 2], 1)]),
        "unflatten" => return s(vec![x(&[2, 6], 1), Value::Int(1), Value::Ints(vec![2, 3])]),
        "squeeze" => return s(vec![x(&[2, 1, 3], 1)]),
        "unsqueeze" => return s(vec![x23(), Value::Int(1)]),
        "permute" => return s(vec![x(&[2, 3, 4], 1), Value::Ints(vec![2, 0, 1])]),
        "transpose" => return s(vec![x(&[2, 3, 4], 1), Value::Int(0), Value::Int(2)]),
        "t" => return s(vec![x23()]),
        "expand" => return s(vec![x(&[3, 1], 1), Value::Ints(vec![2, 3, 4])]),
        "expand_as" => return s(vec![x(&[3, 1], 1), consts(vec![0.0; 12], &[3, 4])]),
        "narrow" => {
            return s(vec![
                x(&[4, 3], 1),
                Value::Int(0),
                Value::Int(1),
                Value::Int(2),
            ]);
        }
        "select" => return s(vec![x(&[4, 3], 1), Value::Int(1), Value::Int(-1)]),
        "chunk" => return s(vec![x(&[5, 3], 1), Value::Int(2), Value::Int(0)]),
        "split" => return s(vec![x(&[5, 3], 1), Value::Ints(vec![1, 4]), Value::Int(0)]),
        "unbind" => return s(vec![x(&[2, 3], 1), Value::Int(1)]),
        "cat" | "concat" => {
            return s(vec![
                Value::Tensors(vec![tensor(x(&[2, 3], 1)), tensor(x(&[1, 3], 2))]),
                Value::Int(0),
            ]);
        }
        "stack" => {
            return s(vec![
                Value::Tensors(vec![tensor(x(&[2, 3], 1)), tensor(x(&[2, 3], 2))]),
                Value::Int(1),
            ]);
        }
        "where" if op.places.contains(&crate::op::Place::Torch) => {
            let cond = Value::Tensor(Tensor::from_vec(
                vec![true, false, true, true, false, false],
                &[2, 3],
            ));
            return s(vec![cond, x23(), x(&[3], 2)]);
        }
        "where" => {
            let cond = Value::Tensor(Tensor::from_vec(
                vec![true, false, true, true, false, false],
                &[2, 3],
            ));
            return s(vec![x23(), cond, x(&[3], 2)]);
        }
        "clamp" | "clip" => {
            return s(vec![
                x23(),
                Value::Scalar(Scalar::Float(-0.5)),
                Value::Scalar(Scalar::Float(0.5)),
            ]);
        }
        "clamp_min" | "clamp_max" => return s(vec![x23(), Value::Scalar(Scalar::Float(0.3))]),
        "F.cross_entropy" => return s(vec![x(&[3, 4], 1), ints(vec![0, 3, -100], &[3])]),
        "F.nll_loss" => {
            return Some((
                vec![x(&[3, 4], 1), ints(vec![0, 3, 1], &[3])],
                vec![("weight", consts(vec![0.5, 1.0, 2.0, 1.5], &[4]))],
            ));
        }
        "F.mse_loss" => return s(vec![x23(), x(&[2, 3], 2)]),
        "contiguous" | "clone" => return s(vec![x(&[2, 3], 1)]),
        "masked_fill" => {
            let mask = Value::Tensor(Tensor::from_vec(
                vec![true, false, true, false, false, true],
                &[2, 3],
            ));
            return s(vec![x23(), mask, Value::Scalar(Scalar::Float(0.5))]);
        }
        "gather" => {
            return s(vec![
                x(&[3, 4], 1),
                Value::Int(1),
                ints(vec![0, 3, 3, 1, 2, 2], &[3, 2]),
            ]);
        }
        "index_select" => {
            return s(vec![
                x(&[3, 4], 1),
                Value::Int(0),
                ints(vec![2, 0, 2], &[3]),
            ]);
        }
        "cumsum" => return s(vec![x(&[3, 4], 1), Value::Int(1)]),
        "var" | "std" | "var_mean" | "std_mean" => {
            return Some((
                vec![x(&[3, 4, 2], 1), Value::Ints(vec![0, 2])],
                vec![("correction", Value::Scalar(Scalar::Int(0)))],
            ));
        }
        "repeat_interleave" => return s(vec![x(&[2, 3], 1), Value::Int(2), Value::Int(1)]),
        "rsub" => return s(vec![x23(), x(&[3], 2)]),
        "F.softplus" => {
            return s(vec![
                x23(),
                Value::Scalar(Scalar::Float(2.0)),
                Value::Scalar(Scalar::Int(1)),
            ]);
        }
        "F.hardtanh" => return s(vec![x23(), Value::Float(-0.5), Value::Float(0.5)]),
        "F.leaky_relu" | "F.elu" => return s(vec![x23(), Value::Float(0.2)]),
        "F.relu6" | "F.hardsigmoid" | "F.hardswish" => {
            // Both sides of each kink.
            return s(vec![leaf(vec![-4.0, -2.5, -0.5, 0.5, 2.5, 6.5], &[2, 3])]);
        }
        "conv1d" | "conv2d" | "conv3d" => {
            let n: usize = name[4..5].parse().unwrap();
            let mut xs = vec![2, 4];
            xs.extend(std::iter::repeat_n(5, n));
            let mut ws = vec![6, 2];
            ws.extend(std::iter::repeat_n(3, n));
            // Grouped, strided, padded and dilated at once.
            return Some((
                vec![x(&xs, 1), x(&ws, 2), x(&[6], 3)],
                vec![
                    ("stride", Value::Ints(vec![2])),
                    ("padding", Value::Ints(vec![1])),
                    ("dilation", Value::Ints(vec![1])),
                    ("groups", Value::Int(2)),
                ],
            ));
        }
        "max_pool2d" | "F.max_pool2d_with_indices" => {
            return s(vec![x(&[2, 2, 5, 5], 1), Value::Ints(vec![2])]);
        }
        "F.max_pool1d" | "F.max_pool1d_with_indices" | "max_pool1d" => {
            return s(vec![
                x(&[2, 2, 7], 1),
                Value::Ints(vec![3]),
                Value::Ints(vec![2]),
            ]);
        }
        "F.max_pool3d" | "F.max_pool3d_with_indices" | "max_pool3d" => {
            return s(vec![x(&[1, 2, 4, 4, 4], 1), Value::Ints(vec![2])]);
        }
        "adaptive_avg_pool1d" => return s(vec![x(&[2, 3, 6], 1), Value::OptInts(vec![Some(3)])]),
        "F.adaptive_avg_pool2d" => {
            return s(vec![
                x(&[2, 3, 4, 4], 1),
                Value::OptInts(vec![Some(2), Some(1)]),
            ]);
        }
        "F.adaptive_avg_pool3d" => {
            return s(vec![
                x(&[1, 2, 2, 2, 4], 1),
                Value::OptInts(vec![Some(1), Some(1), Some(2)]),
            ]);
        }
        "F.batch_norm" => {
            return Some((
                vec![
                    x(&[4, 3, 2], 1),
                    consts(vec![0.0; 3], &[3]),
                    consts(vec![1.0; 3], &[3]),
                ],
                vec![
                    ("weight", x(&[3], 2)),
                    ("bias", x(&[3], 3)),
                    ("training", Value::Bool(true)),
                ],
            ));
        }
        "batch_norm" => {
            let rv = consts(vec![0.5, 1.0, 2.0], &[3]);
            return s(vec![
                x(&[4, 3, 2], 1),
                x(&[3], 2),
                x(&[3], 3),
                consts(vec![0.1, 0.0, -0.1], &[3]),
                rv,
                Value::Bool(false),
                Value::Float(0.1),
                Value::Float(1e-5),
                Value::Bool(false),
            ]);
        }
        "F.layer_norm" | "layer_norm" => {
            return s(vec![
                x(&[2, 3, 4], 1),
                Value::Ints(vec![3, 4]),
                x(&[3, 4], 2),
                x(&[3, 4], 3),
            ]);
        }
        // The padding row's gradient is zero by definition, not by
        // differences: the golden checks it.
        "F.embedding" => return s(vec![ints(vec![0, 2, 2, 1, 3, 0], &[2, 3]), x(&[4, 3], 1)]),
        "embedding" => return s(vec![x(&[4, 3], 1), ints(vec![0, 2, 2, 1, 3, 0], &[2, 3])]),
        "index_add" => {
            return Some((
                vec![
                    x(&[4, 3], 1),
                    Value::Int(0),
                    ints(vec![2, 0, 2], &[3]),
                    x(&[3, 3], 2),
                ],
                vec![("alpha", Value::Scalar(Scalar::Int(2)))],
            ));
        }
        "index_copy" => {
            return s(vec![
                x(&[4, 3], 1),
                Value::Int(0),
                ints(vec![2, 0], &[2]),
                x(&[2, 3], 2),
            ]);
        }
        "index_fill" => {
            return s(vec![
                x(&[4, 3], 1),
                Value::Int(1),
                ints(vec![0, 2], &[2]),
                x(&[], 2),
            ]);
        }
        "index_put" => {
            return s(vec![
                x(&[4, 3], 1),
                Value::Tensors(vec![tensor(ints(vec![3, 0], &[2]))]),
                x(&[2, 3], 2),
            ]);
        }
        "scatter" => {
            let index = ints(vec![0, 3, 1, 2, 2, 0], &[3, 2]);
            return s(vec![x(&[3, 4], 1), Value::Int(1), index, x(&[3, 2], 2)]);
        }
        "scatter_add" => {
            let index = ints(vec![0, 3, 3, 1, 2, 2], &[3, 2]);
            return s(vec![x(&[3, 4], 1), Value::Int(1), index, x(&[3, 2], 2)]);
        }
        "scatter_reduce" => {
            let index = ints(vec![0, 3, 3, 3, 2, 2], &[3, 2]);
            return Some((
                vec![
                    x(&[3, 4], 1),
                    Value::Int(1),
                    index,
                    x(&[3, 2], 2),
                    Value::Str("mean".into()),
                ],
                vec![("include_self", Value::Bool(false))],
            ));
        }
        "take" => return s(vec![x(&[3, 4], 1), ints(vec![0, 5, 11, 5], &[2, 2])]),
        "put" => return s(vec![x(&[3, 4], 1), ints(vec![1, 7, 10], &[3]), x(&[3], 2)]),
        "masked_select" | "masked_scatter" => {
            let mask = Value::Tensor(Tensor::from_vec(
                vec![true, false, true, false, true, true],
                &[2, 3],
            ));
            let mut args = vec![x23(), mask];
            if name == "masked_scatter" {
                args.push(x(&[5], 2));
            }
            return s(args);
        }
        "prod" | "max" | "min" | "cumprod" | "cummax" | "cummin" | "sort" | "median"
        | "logcumsumexp" | "nanmedian" => return s(vec![x(&[3, 4], 1), Value::Int(1)]),
        "amax" | "amin" | "logsumexp" | "nansum" | "nanmean" => {
            return s(vec![x(&[3, 4], 1), Value::Ints(vec![1])]);
        }
        "norm" => {
            return s(vec![
                x(&[3, 4], 1),
                Value::Scalar(Scalar::Float(3.0)),
                Value::Ints(vec![1]),
            ]);
        }
        "linalg_vector_norm" | "msort" => return s(vec![x(&[3, 4], 1)]),
        "aminmax" => return Some((vec![x(&[3, 4], 1)], vec![("dim", Value::Int(0))])),
        "topk" | "kthvalue" => return s(vec![x(&[3, 4], 1), Value::Int(2), Value::Int(1)]),
        "flip" => return s(vec![x23(), Value::Ints(vec![0, 1])]),
        "roll" => {
            return s(vec![
                x(&[3, 4], 1),
                Value::Ints(vec![1, -2]),
                Value::Ints(vec![0, 1]),
            ]);
        }
        "rot90" => return s(vec![x(&[3, 4], 1), Value::Int(1)]),
        "repeat" | "tile" => return s(vec![x23(), Value::Ints(vec![2, 1, 2])]),
        "diagonal" => {
            return s(vec![
                x(&[3, 4, 2], 1),
                Value::Int(1),
                Value::Int(1),
                Value::Int(0),
            ]);
        }
        "diag" => return s(vec![x(&[3, 4], 1), Value::Int(-1)]),
        "diag_embed" => return s(vec![x23(), Value::Int(1)]),
        "unfold" => {
            return s(vec![
                x(&[2, 7], 1),
                Value::Int(1),
                Value::Int(3),
                Value::Int(2),
            ]);
        }
        "pixel_shuffle" => return s(vec![x(&[1, 8, 2, 3], 1), Value::Int(2)]),
        "pixel_unshuffle" => return s(vec![x(&[1, 2, 4, 6], 1), Value::Int(2)]),
        "channel_shuffle" | "native_channel_shuffle" => {
            return s(vec![x(&[1, 6, 2, 2], 1), Value::Int(2)]);
        }
        "meshgrid" => {
            return Some((
                vec![Value::Tensors(vec![tensor(x(&[3], 1)), tensor(x(&[4], 2))])],
                vec![("indexing", Value::Str("xy".into()))],
            ));
        }
        "broadcast_tensors" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[3, 1], 1)),
                tensor(x(&[4], 2)),
            ])]);
        }
        "split_with_sizes" => {
            return s(vec![x(&[5, 3], 1), Value::Ints(vec![2, 3]), Value::Int(0)]);
        }
        "movedim" | "moveaxis" => return s(vec![x(&[2, 3, 4], 1), Value::Int(0), Value::Int(2)]),
        "swapaxes" | "swapdims" => {
            return s(vec![x(&[2, 3, 4], 1), Value::Int(0), Value::Int(2)]);
        }
        "broadcast_to" => return s(vec![x(&[3, 1], 1), Value::Ints(vec![2, 3, 4])]),
        "tensor_split" => return s(vec![x(&[5, 3], 1), Value::Int(2)]),
        "hsplit" => return s(vec![x(&[3, 4], 1), Value::Int(2)]),
        "vsplit" => return s(vec![x(&[4, 3], 1), Value::Int(2)]),
        "dsplit" => return s(vec![x(&[2, 2, 4], 1), Value::Int(2)]),
        "atleast_1d" | "atleast_2d" | "atleast_3d" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[3], 1)),
                tensor(x(&[], 2)),
            ])]);
        }
        "hstack" | "vstack" | "row_stack" | "dstack" | "column_stack" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[2, 3], 1)),
                tensor(x(&[2, 3], 2)),
            ])]);
        }
        "block_diag" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[2, 3], 1)),
                tensor(x(&[3], 2)),
            ])]);
        }
        "cartesian_prod" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[3], 1)),
                tensor(x(&[2], 2)),
            ])]);
        }
        "kron" => return s(vec![x23(), x(&[2, 2], 2)]),
        "avg_pool1d" => {
            // Padded, strided, ceil mode, padding not counted: every divisor case.
            return s(vec![
                x(&[2, 2, 7], 1),
                Value::Ints(vec![3]),
                Value::Ints(vec![2]),
                Value::Ints(vec![1]),
                Value::Bool(true),
                Value::Bool(false),
            ]);
        }
        "avg_pool2d" | "avg_pool3d" | "F.avg_pool2d" | "F.avg_pool3d" => {
            let n = spatial(name);
            let mut xs = vec![1, 2];
            xs.extend(std::iter::repeat_n(5, n));
            return s(vec![
                x(&xs, 1),
                Value::Ints(vec![2]),
                Value::Ints(vec![2]),
                Value::Ints(vec![1]),
                Value::Bool(true),
                Value::Bool(true),
            ]);
        }
        "F.adaptive_max_pool1d" | "F.adaptive_max_pool1d_with_indices" => {
            return s(vec![x(&[2, 2, 7], 1), Value::OptInts(vec![Some(3)])]);
        }
        "adaptive_max_pool1d" => return s(vec![x(&[2, 2, 7], 1), Value::Ints(vec![3])]),
        "F.adaptive_max_pool2d" | "F.adaptive_max_pool2d_with_indices" => {
            return s(vec![
                x(&[1, 2, 5, 4], 1),
                Value::OptInts(vec![Some(2), Some(3)]),
            ]);
        }
        "F.adaptive_max_pool3d" | "F.adaptive_max_pool3d_with_indices" => {
            return s(vec![
                x(&[1, 1, 3, 4, 3], 1),
                Value::OptInts(vec![Some(2), Some(2), Some(1)]),
            ]);
        }
        "conv_transpose1d" | "conv_transpose2d" | "conv_transpose3d" => {
            let n = spatial(name);
            let mut xs = vec![2, 4];
            xs.extend(std::iter::repeat_n(3, n));
            let mut ws = vec![4, 3];
            ws.extend(std::iter::repeat_n(2, n));
            return Some((
                vec![x(&xs, 1), x(&ws, 2), x(&[6], 3)],
                vec![
                    ("stride", Value::Ints(vec![2])),
                    ("padding", Value::Ints(vec![1])),
                    ("output_padding", Value::Ints(vec![1])),
                    ("groups", Value::Int(2)),
                ],
            ));
        }
        "F.pad" => {
            return s(vec![
                x(&[1, 2, 3, 4], 1),
                Value::Ints(vec![2, 1, 1, 2]),
                Value::Str("reflect".into()),
            ]);
        }
        "F.interpolate" => {
            return Some((
                vec![x(&[1, 2, 3, 4], 1), Value::Ints(vec![5, 3])],
                vec![
                    ("mode", Value::Str("bilinear".into())),
                    ("align_corners", Value::Bool(false)),
                ],
            ));
        }
        "F.threshold" | "threshold" => {
            return s(vec![x23(), Value::Float(0.3), Value::Float(-1.0)]);
        }
        "F.glu" => return s(vec![x(&[2, 4], 1)]),
        "F.unfold" => {
            return s(vec![
                x(&[1, 2, 4, 5], 1),
                Value::Ints(vec![2, 3]),
                Value::Ints(vec![1]),
                Value::Ints(vec![1]),
                Value::Ints(vec![2]),
            ]);
        }
        "F.fold" => {
            return s(vec![
                x(&[1, 12, 9], 1),
                Value::Ints(vec![4, 5]),
                Value::Ints(vec![2, 3]),
            ]);
        }
        "linalg_matrix_norm" => return s(vec![x(&[3, 4], 1), Value::Scalar(Scalar::Int(1))]),
        "linalg_norm" => return s(vec![x(&[3, 4], 1)]),
        "cdist" => return s(vec![x(&[2, 3, 4], 1), x(&[2, 5, 4], 2), Value::Float(3.0)]),
        "pdist" => return s(vec![x(&[4, 3], 1), Value::Float(3.0)]),
        "linalg_svd" | "svd" | "linalg_svdvals" | "linalg_pinv" | "pinverse" => {
            let a = leaf(
                vec![
                    2.0, 0.3, -0.2, 0.1, 1.5, 0.4, -0.3, 0.2, 0.9, 0.5, -0.6, 0.7,
                ],
                &[4, 3],
            );
            // A full U's extra column is any unit vector orthogonal to A's
            // columns: nothing a gradient could follow.
            if name == "linalg_svd" {
                return s(vec![a, Value::Bool(false)]);
            }
            return s(vec![a]);
        }
        "linalg_qr" => return s(vec![well_conditioned()]),
        "grid_sampler" => {
            // Bicubic, reflected: every coordinate path (bilinear and
            // nearest are golden-checked with the others).
            return s(vec![
                x(&[1, 2, 3, 4], 1),
                x(&[1, 2, 2, 2], 2),
                Value::Int(2),
                Value::Int(2),
                Value::Bool(false),
            ]);
        }
        "F.embedding_bag" => {
            return Some((
                vec![ints(vec![1, 2, 4, 3, 0], &[5]), x(&[5, 3], 1)],
                vec![
                    ("offsets", ints(vec![0, 2], &[2])),
                    ("mode", Value::Str("sum".into())),
                    ("per_sample_weights", x(&[5], 2)),
                ],
            ));
        }
        "F.multi_margin_loss" => {
            return Some((
                vec![x(&[4, 3], 1), ints(vec![0, 2, 1, 2], &[4])],
                vec![
                    ("p", Value::Int(2)),
                    ("weight", consts(vec![0.5, 1.0, 2.0], &[3])),
                ],
            ));
        }
        "F.multilabel_margin_loss" => {
            return s(vec![
                x(&[2, 4], 1),
                ints(vec![0, 2, -1, 1, 3, 1, 0, 2], &[2, 4]),
            ]);
        }
        "F.max_unpool1d" => {
            return s(vec![
                x(&[1, 2, 3], 1),
                ints(vec![0, 3, 5, 1, 2, 4], &[1, 2, 3]),
                Value::Ints(vec![2]),
            ]);
        }
        "F.max_unpool2d" => {
            return s(vec![
                x(&[1, 1, 2, 2], 1),
                ints(vec![0, 3, 9, 14], &[1, 1, 2, 2]),
                Value::Ints(vec![2]),
            ]);
        }
        "F.max_unpool3d" => {
            return s(vec![
                x(&[1, 1, 1, 1, 2], 1),
                ints(vec![0, 13], &[1, 1, 1, 1, 2]),
                Value::Ints(vec![2]),
            ]);
        }
        "F.fractional_max_pool2d" => {
            return s(vec![
                x(&[1, 1, 5, 5], 1),
                Value::Ints(vec![2, 2]),
                Value::Ints(vec![3, 3]),
                consts(vec![0.3, 0.6], &[1, 1, 2]),
            ]);
        }
        "F.fractional_max_pool3d" => {
            return s(vec![
                x(&[1, 1, 4, 4, 4], 1),
                Value::Ints(vec![2, 2, 2]),
                Value::Ints(vec![2, 2, 2]),
                consts(vec![0.2, 0.5, 0.7], &[1, 1, 3]),
            ]);
        }
        "affine_grid_generator" => {
            return s(vec![
                x(&[2, 2, 3], 1),
                Value::Ints(vec![2, 3, 4, 5]),
                Value::Bool(false),
            ]);
        }
        "bilinear" => {
            return s(vec![
                x(&[2, 3], 1),
                x(&[2, 2], 2),
                x(&[4, 3, 2], 3),
                x(&[4], 4),
            ]);
        }
        "linalg_vander" => return s(vec![x(&[2, 3], 1)]),
        "combinations" => return s(vec![x(&[4], 1), Value::Int(2), Value::Bool(true)]),
        "conv_tbc" => {
            return s(vec![
                x(&[5, 2, 3], 1),
                x(&[3, 3, 4], 2),
                x(&[4], 3),
                Value::Int(1),
            ]);
        }
        "F.local_response_norm" => {
            return Some((
                vec![x(&[2, 4, 3], 1), Value::Int(3)],
                vec![("alpha", Value::Float(0.5)), ("k", Value::Float(2.0))],
            ));
        }
        // Not training: deterministic slopes (the drawn ones are golden-checked).
        "F.rrelu" => return s(vec![x23()]),
        "rrelu" => return s(vec![x23(), Value::Float(0.1), Value::Float(0.3)]),
        "diff" => {
            return s(vec![
                x(&[3, 4], 1),
                Value::Int(2),
                Value::Int(1),
                x(&[3, 1], 2),
            ]);
        }
        "_pack_padded_sequence" => {
            return s(vec![
                x(&[3, 2, 2], 1),
                ints(vec![3, 1], &[2]),
                Value::Bool(false),
            ]);
        }
        "_pad_packed_sequence" => {
            return s(vec![
                x(&[4, 2], 1),
                ints(vec![2, 1, 1], &[3]),
                Value::Bool(true),
                Value::Scalar(Scalar::Float(0.0)),
                Value::Int(4),
            ]);
        }
        "lstm" | "gru" | "rnn_tanh" | "rnn_relu" => {
            // One bidirectional layer, hidden size 2, over 3 steps of 2.
            let gates = match name {
                "lstm" => 4,
                "gru" => 3,
                _ => 1,
            };
            let mut params = Vec::new();
            for d in 0..2u64 {
                params.push(tensor(x(&[2 * gates, 3], 10 + d)));
                params.push(tensor(x(&[2 * gates, 2], 20 + d)));
                params.push(tensor(x(&[2 * gates], 30 + d)));
                params.push(tensor(x(&[2 * gates], 40 + d)));
            }
            // An LSTM's states are `[h_0, c_0]`; the others' is `h_0`.
            let hx = if name == "lstm" {
                Value::Tensors(vec![tensor(x(&[2, 2, 2], 2)), tensor(x(&[2, 2, 2], 3))])
            } else {
                x(&[2, 2, 2], 2)
            };
            return s(vec![
                x(&[3, 2, 3], 1),
                hx,
                Value::Tensors(params),
                Value::Bool(true),
                Value::Int(1),
                Value::Float(0.0),
                Value::Bool(true),
                Value::Bool(true),
                Value::Bool(false),
            ]);
        }
        "lstm_cell" | "gru_cell" | "rnn_tanh_cell" | "rnn_relu_cell" => {
            let gates = match name {
                "lstm_cell" => 4,
                "gru_cell" => 3,
                _ => 1,
            };
            let h = if name == "lstm_cell" {
                Value::Tensors(vec![tensor(x(&[2, 2], 2)), tensor(x(&[2, 2], 3))])
            } else {
                x(&[2, 2], 2)
            };
            return s(vec![
                x(&[2, 3], 1),
                h,
                x(&[2 * gates, 3], 4),
                x(&[2 * gates, 2], 5),
                x(&[2 * gates], 6),
                x(&[2 * gates], 7),
            ]);
        }
        "F.dropout"
        | "F.dropout1d"
        | "F.dropout2d"
        | "F.dropout3d"
        | "F.alpha_dropout"
        | "F.feature_alpha_dropout" => {
            // Not training: deterministic (the mask is golden-checked).
            return Some((vec![x23()], vec![("training", Value::Bool(false))]));
        }
        "dropout" | "feature_dropout" | "alpha_dropout" | "feature_alpha_dropout" => {
            return s(vec![x23(), Value::Float(0.5), Value::Bool(false)]);
        }
        "F.scaled_dot_product_attention" | "scaled_dot_product_attention" => {
            return Some((
                vec![
                    x(&[1, 2, 3, 4], 1),
                    x(&[1, 2, 5, 4], 2),
                    x(&[1, 2, 5, 3], 3),
                ],
                vec![("is_causal", Value::Bool(false))],
            ));
        }
        "mkldnn_rnn_layer" => {
            // An LSTM layer (mode 2), hidden size 2, run backwards over
            // 3 steps of 2.
            return s(vec![
                x(&[3, 2, 3], 1),
                x(&[8, 3], 2),
                x(&[8, 2], 3),
                x(&[8], 4),
                x(&[8], 5),
                x(&[2, 2], 6),
                x(&[2, 2], 7),
                Value::Bool(true),
                Value::Ints(vec![]),
                Value::Int(2),
                Value::Int(2),
                Value::Int(1),
                Value::Bool(true),
                Value::Bool(false),
                Value::Bool(false),
                Value::Bool(true),
            ]);
        }
        "_scaled_dot_product_flash_attention_for_cpu" => {
            return Some((
                vec![
                    x(&[1, 2, 3, 4], 1),
                    x(&[1, 2, 5, 4], 2),
                    x(&[1, 2, 5, 4], 3),
                ],
                vec![("is_causal", Value::Bool(true))],
            ));
        }
        "mv" => return s(vec![x(&[3, 4], 1), x(&[4], 2)]),
        "dot" | "vdot" => return s(vec![x(&[4], 1), x(&[4], 2)]),
        "addmv" => {
            return Some((
                vec![x(&[3], 1), x(&[3, 4], 2), x(&[4], 3)],
                vec![
                    ("beta", Value::Scalar(Scalar::Float(0.5))),
                    ("alpha", Value::Scalar(Scalar::Float(2.0))),
                ],
            ));
        }
        "addr" => return s(vec![x(&[3, 4], 1), x(&[3], 2), x(&[4], 3)]),
        "baddbmm" => return s(vec![x(&[2, 3, 4], 1), x(&[2, 3, 5], 2), x(&[2, 5, 4], 3)]),
        "addbmm" => return s(vec![x(&[3, 4], 1), x(&[2, 3, 5], 2), x(&[2, 5, 4], 3)]),
        "linalg_inv" | "inverse" | "linalg_det" | "det" | "logdet" | "linalg_slogdet"
        | "slogdet" => return s(vec![well_conditioned()]),
        "linalg_solve" => return s(vec![well_conditioned(), x(&[3, 2], 2)]),
        "tensordot" => return s(vec![x(&[2, 3, 4], 1), x(&[3, 4, 5], 2), Value::Int(2)]),
        "inner" => return s(vec![x(&[2, 3], 1), x(&[4, 3], 2)]),
        "cross" | "linalg_cross" | "linalg_vecdot" => return s(vec![x(&[2, 3], 1), x(&[2, 3], 2)]),
        "matrix_power" | "linalg_matrix_power" => return s(vec![x(&[3, 3], 1), Value::Int(3)]),
        "ger" | "outer" => return s(vec![x(&[3], 1), x(&[4], 2)]),
        "linalg_matmul" => return s(vec![x(&[2, 3], 1), x(&[3, 4], 2)]),
        "linalg_multi_dot" => {
            return s(vec![Value::Tensors(vec![
                tensor(x(&[2, 3], 1)),
                tensor(x(&[3, 4], 2)),
                tensor(x(&[4, 2], 3)),
            ])]);
        }
        "linalg_diagonal" => return s(vec![x(&[3, 4], 1)]),
        "einsum" => {
            return s(vec![
                Value::Str("bi...,ij,k->bj...".into()),
                Value::Tensors(vec![
                    tensor(x(&[2, 3, 4], 1)),
                    tensor(x(&[3, 5], 2)),
                    tensor(x(&[2], 3)),
                ]),
            ]);
        }
        "F.group_norm" | "group_norm" => {
            return s(vec![
                x(&[2, 4, 3], 1),
                Value::Int(2),
                x(&[4], 2),
                x(&[4], 3),
            ]);
        }
        "rms_norm" | "F.rms_norm" => {
            return s(vec![x(&[2, 3, 4], 1), Value::Ints(vec![4]), x(&[4], 2)]);
        }
        "instance_norm" => {
            return s(vec![
                x(&[2, 3, 4], 1),
                x(&[3], 2),
                x(&[3], 3),
                Value::None,
                Value::None,
                Value::Bool(true),
                Value::Float(0.1),
                Value::Float(1e-5),
                Value::Bool(false),
            ]);
        }
        "F.instance_norm" => {
            return Some((
                vec![x(&[2, 3, 4], 1)],
                vec![("weight", x(&[3], 2)), ("bias", x(&[3], 3))],
            ));
        }
        "F.binary_cross_entropy" => {
            return Some((
                vec![pos(&[2, 3], 1), pos(&[2, 3], 2)],
                vec![("weight", consts(vec![0.5, 1.0, 2.0], &[3]))],
            ));
        }
        "F.binary_cross_entropy_with_logits" => {
            return Some((
                vec![x23(), pos(&[2, 3], 2)],
                vec![("pos_weight", consts(vec![0.5, 1.0, 2.0], &[3]))],
            ));
        }
        "F.huber_loss" => {
            return Some((vec![x23(), x(&[3], 2)], vec![("delta", Value::Float(0.7))]));
        }
        "F.smooth_l1_loss" => {
            return Some((vec![x23(), x(&[3], 2)], vec![("beta", Value::Float(0.7))]));
        }
        "F.kl_div" | "F.poisson_nll_loss" => return s(vec![x23(), pos(&[2, 3], 2)]),
        "F.gaussian_nll_loss" => return s(vec![x23(), x(&[2, 3], 2), pos(&[2, 3], 3)]),
        "F.margin_ranking_loss" => {
            return s(vec![
                x(&[4], 1),
                x(&[4], 2),
                consts(vec![1.0, -1.0, -1.0, 1.0], &[4]),
            ]);
        }
        "F.hinge_embedding_loss" | "F.soft_margin_loss" => {
            return s(vec![
                x23(),
                consts(vec![1.0, -1.0, -1.0, 1.0, 1.0, -1.0], &[2, 3]),
            ]);
        }
        "F.cosine_embedding_loss" => {
            return s(vec![
                x(&[3, 4], 1),
                x(&[3, 4], 2),
                consts(vec![1.0, -1.0, 1.0], &[3]),
            ]);
        }
        "F.triplet_margin_loss" => return s(vec![x(&[3, 4], 1), x(&[3, 4], 2), x(&[3, 4], 3)]),
        "F.multilabel_soft_margin_loss" => {
            return s(vec![
                x23(),
                consts(vec![1.0, 0.0, 0.0, 1.0, 1.0, 0.0], &[2, 3]),
            ]);
        }
        "xlogy" => return s(vec![x23(), pos(&[3], 2)]),
        "logit" => return s(vec![pos(&[2, 3], 1)]),
        "lerp" => return s(vec![x23(), x(&[3], 2), x(&[2, 3], 3)]),
        "addcmul" | "addcdiv" => {
            return Some((
                vec![x23(), x(&[3], 2), x(&[2, 3], 3)],
                vec![("value", Value::Scalar(Scalar::Float(0.5)))],
            ));
        }
        "F.normalize" => return s(vec![x23()]),
        "F.celu" => return s(vec![x23(), Value::Float(0.7)]),
        "F.lp_pool1d" | "F.lp_pool2d" => {
            let n = spatial(name);
            let mut xs = vec![1, 2];
            xs.extend(std::iter::repeat_n(4, n));
            return s(vec![pos(&xs, 1), Value::Float(3.0), Value::Ints(vec![2])]);
        }
        "F.lp_pool3d" => {
            return s(vec![
                pos(&[1, 1, 2, 2, 4], 1),
                Value::Float(2.0),
                Value::Ints(vec![2]),
            ]);
        }
        "fill" => return s(vec![x23(), Value::Scalar(Scalar::Float(0.5))]),
        "take_along_dim" => {
            return s(vec![
                x(&[3, 4], 1),
                ints(vec![0, 2, 1, 1], &[1, 4]),
                Value::Int(0),
            ]);
        }
        "to" => return s(vec![x23(), Value::DType(DType::F64)]),
        "type_as" => return s(vec![x23(), consts(vec![0.0], &[1])]),
        _ => {
            // Elementwise rows: one tensor, or a tensor and another
            // broadcast against it.
            let tensors = op
                .schema
                .params
                .iter()
                .filter(|p| p.ty.takes_tensor())
                .count();
            match tensors {
                1 => (vec![x23()], vec![]),
                2 => (vec![x23(), x(&[3], 2)], vec![]),
                _ => return None,
            }
        }
    })
}

pub(super) fn tensor(v: Value) -> Tensor {
    match v {
        Value::Tensor(t) => t,
        other => panic!("not a tensor: {other:?}"),
    }
}
