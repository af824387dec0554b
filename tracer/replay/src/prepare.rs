//! Arguments a plan prepares once from the parameters it binds, and makes
//! again only after one of them was written to (an optimizer step,
//! `load_state_dict`: each source's storage version is compared), so
//! updates in place are still seen:
//! - batch normalization in evaluation folded into the convolution it
//!   follows: `conv → batch_norm(training=False)` whose convolution output
//!   nothing else reads becomes one convolution with a folded weight and
//!   bias (`fxvm_tensor::ops::bn_fold`), and the normalization's step
//!   passes that result on — one pass over the output fewer;
//! - a linear layer's weight kept a second time, transposed (`[in, out]`
//!   rows), for calls on a few rows into many outputs: a product then reads
//!   whole rows of the weight instead of one dot product per output
//!   (measured, 16 rows: 128→384 25 → 12 µs, 512→128 57 → 12 µs). Made on
//!   the first such call.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use fxvm_ops::{Family, Value};
use fxvm_tensor::ops::bn_fold::{BatchNorm, fold_batch_norm};
use fxvm_tensor::{DType, Tensor, TensorError};

use super::plan::{Absorbed, Src, Step, arg_src};
use super::value::V;

/// What a step prepares (see the module doc) and its latest result.
#[derive(Debug)]
pub(crate) struct Prepared {
    kind: Kind,
    cache: Mutex<Option<Cached>>,
}

#[derive(Debug)]
enum Kind {
    /// A convolution's weight and bias (argument positions) with the batch
    /// normalization after it folded in: the slots of its running mean and
    /// variance and, when it has them, its affine weight and bias.
    BatchNorm {
        weight_at: usize,
        bias_at: usize,
        stats: [Option<usize>; 4],
        eps: f64,
    },
    /// A linear layer's weight (argument positions of the input and weight).
    Transposed { input_at: usize, weight_at: usize },
}

#[derive(Debug)]
struct Cached {
    /// Of each source tensor, in the kind's order.
    versions: Vec<Option<u64>>,
    /// Argument position → the prepared tensor.
    tensors: Vec<(usize, Tensor)>,
}

/// Inputs of this many rows use a linear layer's transposed weight, and
/// only layers of at least `WIDE` outputs: on one row, or into a few
/// outputs, the weight as stored is faster (measured: 1×2048→10 1.4 µs
/// stored, 8.2 transposed; 2×64→64 0.84 and 0.48; 4×128→384 8.3 and 4.5).
const FEW_ROWS: std::ops::RangeInclusive<usize> = 2..=64;
const WIDE: usize = 32;

/// A bound tensor (a parameter or buffer) of a float dtype (`dtype` if
/// given), as its slot.
fn bound_tensor(src: &Src, initial: &[V], dtype: Option<DType>) -> Option<usize> {
    match src {
        Src::Slot(s) => match initial.get(*s) {
            Some(V::Tensor(t))
                if matches!(t.dtype(), DType::F32 | DType::F64)
                    && dtype.is_none_or(|d| d == t.dtype()) =>
            {
                Some(*s)
            }
            _ => None,
        },
        _ => None,
    }
}

/// `Some(None)` for an absent optional tensor, `Some(Some(slot))` for a bound one.
fn optional_tensor(src: &Src, initial: &[V], dtype: DType) -> Option<Option<usize>> {
    match src {
        Src::Const(Value::None) => Some(None),
        s => bound_tensor(s, initial, Some(dtype)).map(Some),
    }
}

/// The statistics and eps of `step` if it is a batch normalization in
/// evaluation of slot `conv_out`, with parameters bound and of `dtype`.
fn normalization(
    step: &Step,
    conv_out: usize,
    initial: &[V],
    dtype: DType,
) -> Option<([Option<usize>; 4], f64)> {
    let Step::Op { op, args, .. } = step else {
        return None;
    };
    if op.family() != Some(Family::BatchNorm) {
        return None;
    }
    let reads_conv = matches!(arg_src(op, args, "input")?, Src::Slot(s) if *s == conv_out);
    let evaluating = matches!(
        arg_src(op, args, "training")?,
        Src::Const(Value::Bool(false))
    );
    let Src::Const(Value::Float(eps)) = arg_src(op, args, "eps")? else {
        return None;
    };
    if !(reads_conv && evaluating) {
        return None;
    }
    let mean = bound_tensor(arg_src(op, args, "running_mean")?, initial, Some(dtype))?;
    let var = bound_tensor(arg_src(op, args, "running_var")?, initial, Some(dtype))?;
    let weight = optional_tensor(arg_src(op, args, "weight")?, initial, dtype)?;
    let bias = optional_tensor(arg_src(op, args, "bias")?, initial, dtype)?;
    Some(([Some(mean), Some(var), weight, bias], *eps))
}

/// What step `i` (an op step) can prepare, with the step it absorbs.
fn plan_for(
    steps: &[Step],
    i: usize,
    initial: &[V],
    uses: &HashMap<usize, usize>,
    kept: &HashSet<usize>,
) -> Option<(Kind, Option<usize>)> {
    let Step::Op { op, args, out, .. } = &steps[i] else {
        return None;
    };
    let weight_at = op.schema.position("weight")?;
    let weight = bound_tensor(&args.get(weight_at)?.src, initial, None)?;
    let Some(V::Tensor(w)) = initial.get(weight) else {
        return None;
    };
    if op.family() == Some(Family::Linear) && w.ndim() == 2 && w.shape()[0] >= WIDE {
        let input_at = op.schema.position("input")?;
        return Some((
            Kind::Transposed {
                input_at,
                weight_at,
            },
            None,
        ));
    }
    if op.family() != Some(Family::Convolution) || uses.get(out) != Some(&1) || kept.contains(out) {
        return None;
    }
    let bias_at = op.schema.position("bias")?;
    optional_tensor(&args.get(bias_at)?.src, initial, w.dtype())?;
    let (j, (stats, eps)) = steps
        .iter()
        .enumerate()
        .skip(i + 1)
        .find_map(|(j, s)| normalization(s, *out, initial, w.dtype()).map(|n| (j, n)))?;
    Some((
        Kind::BatchNorm {
            weight_at,
            bias_at,
            stats,
            eps,
        },
        Some(j),
    ))
}

/// Gives each step of `steps` what it can prepare (see the module doc):
/// `uses` counts the steps reading each slot, `kept` holds the slots the
/// graph's output names.
pub(crate) fn prepare(
    steps: &mut [Step],
    initial: &[V],
    uses: &HashMap<usize, usize>,
    kept: &HashSet<usize>,
) {
    for i in 0..steps.len() {
        let Some((kind, absorbed)) = plan_for(steps, i, initial, uses, kept) else {
            continue;
        };
        let out = steps[i].out();
        if let Some(j) = absorbed {
            let absorbed_out = steps[j].out();
            steps[j] = Step::Same {
                from: out,
                out: absorbed_out,
                why: Absorbed::IntoConvolution,
            };
        }
        let Step::Op { op, args, .. } = std::mem::replace(
            &mut steps[i],
            Step::Same {
                from: out,
                out,
                why: Absorbed::IntoConvolution,
            },
        ) else {
            unreachable!("plan_for takes op steps only")
        };
        steps[i] = Step::Prepared {
            op,
            args,
            prepared: Box::new(Prepared {
                kind,
                cache: Mutex::new(None),
            }),
            out,
        };
    }
}

fn tensor_at(values: &[Value], at: usize) -> Option<&Tensor> {
    match values.get(at) {
        Some(Value::Tensor(t)) => Some(t),
        _ => None,
    }
}

impl Prepared {
    /// The slots read besides the step's arguments.
    pub(crate) fn inputs(&self) -> impl Iterator<Item = usize> + '_ {
        let stats = match &self.kind {
            Kind::BatchNorm { stats, .. } => &stats[..],
            Kind::Transposed { .. } => &[],
        };
        stats.iter().flatten().copied()
    }

    /// The step's arguments `values` with the prepared tensors in place
    /// (made again first if a source was written to).
    pub(crate) fn apply(&self, values: &mut [Value], slots: &[V]) -> fxvm_tensor::Result<()> {
        let missing = || TensorError::runtime("prepare", "a prepared parameter is not a tensor");
        let sources: Vec<Option<Tensor>> = match &self.kind {
            Kind::BatchNorm {
                weight_at,
                bias_at,
                stats,
                ..
            } => {
                let stat = |s: &Option<usize>| match s.map(|s| &slots[s]) {
                    Some(V::Tensor(t)) => Some(t.clone()),
                    _ => None,
                };
                [*weight_at, *bias_at]
                    .iter()
                    .map(|&at| tensor_at(values, at).cloned())
                    .chain(stats.iter().map(stat))
                    .collect()
            }
            Kind::Transposed {
                input_at,
                weight_at,
            } => {
                let x = tensor_at(values, *input_at).ok_or_else(missing)?;
                let rows = x.numel() / x.shape().last().copied().unwrap_or(1).max(1);
                if !FEW_ROWS.contains(&rows) {
                    return Ok(());
                }
                vec![tensor_at(values, *weight_at).cloned()]
            }
        };
        let versions: Vec<Option<u64>> = sources
            .iter()
            .map(|t| t.as_ref().map(Tensor::version))
            .collect();
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.as_ref().is_none_or(|c| c.versions != versions) {
            *cache = Some(Cached {
                tensors: self.make(&sources).ok_or_else(missing)??,
                versions,
            });
        }
        for (at, t) in &cache.as_ref().expect("filled above").tensors {
            values[*at] = Value::Tensor(t.clone());
        }
        Ok(())
    }

    /// The prepared tensors from their sources (`None` if one is missing).
    fn make(
        &self,
        sources: &[Option<Tensor>],
    ) -> Option<fxvm_tensor::Result<Vec<(usize, Tensor)>>> {
        Some(match &self.kind {
            Kind::BatchNorm {
                weight_at,
                bias_at,
                eps,
                ..
            } => {
                let [w, b, mean, var, gamma, beta] = sources else {
                    return None;
                };
                let bn = BatchNorm {
                    running_mean: mean.as_ref()?,
                    running_var: var.as_ref()?,
                    weight: gamma.as_ref(),
                    bias: beta.as_ref(),
                    eps: *eps,
                };
                fold_batch_norm(w.as_ref()?, b.as_ref(), &bn)
                    .map(|(w, b)| vec![(*weight_at, w), (*bias_at, b)])
            }
            Kind::Transposed { weight_at, .. } => {
                let w = sources.first()?.as_ref()?;
                // `[in, out]` rows, seen as the `[out, in]` weight again.
                let rows = w.with_layout(w.layout().transpose(0, 1)).contiguous();
                Ok(vec![(
                    *weight_at,
                    rows.with_layout(rows.layout().transpose(0, 1)),
                )])
            }
        })
    }
}
