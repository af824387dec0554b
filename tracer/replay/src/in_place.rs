//! Results written where a tensor already lies:
//! - an elementwise step (`relu`, `sigmoid`, `exp`, …) whose input dies
//!   with it overwrites that input when, at run time, the plan holds its
//!   only handle (an intermediate: never a parameter, the caller's tensor or
//!   storage another slot views) — no new buffer, one pass fewer to memory;
//! - a relu before max pooling whose output nothing else reads runs after
//!   the pooling instead, over the pooling's new output: the max of relus is
//!   the relu of the max, exactly, and the pooled tensor is a window's worth
//!   smaller (a quarter for 2×2).

use std::collections::{HashMap, HashSet};

use fxvm_ops::{Family, Op, Value};
use fxvm_tensor::ops::elementwise::Unary;

use super::plan::{Absorbed, Arg, Reuse, Src, Step, arg_src};

/// The elementwise op a step computes of its first argument's slot: a
/// unary op's row, or an activation's with `inplace=False`.
fn elementwise(op: &Op, args: &[Arg]) -> Option<(Unary, usize)> {
    let Some(Family::Unary(u)) = op.family() else {
        return None;
    };
    let (first, rest) = args.split_first()?;
    let Src::Slot(slot) = first.src else {
        return None;
    };
    let out_of_place = match rest {
        [] => true,
        [flag] => {
            op.schema.position("inplace") == Some(1)
                && matches!(flag.src, Src::Const(Value::Bool(false)))
        }
        _ => false,
    };
    out_of_place.then_some((u, slot))
}

/// Whether `step` max-pools slot `x` into values alone.
fn pools(step: &Step, x: usize) -> bool {
    let Step::Op {
        op,
        args,
        reuse: Reuse::Fresh,
        ..
    } = step
    else {
        return false;
    };
    op.family() == Some(Family::MaxPool)
        && matches!(arg_src(op, args, "input"), Some(Src::Slot(s)) if *s == x)
        && matches!(
            arg_src(op, args, "return_indices"),
            Some(Src::Const(Value::Bool(false)))
        )
}

/// Moves each relu whose only reader is a max pooling to after it (see the
/// module doc): `uses` counts each slot's readers, `kept` holds the slots
/// the output names.
pub(crate) fn relu_after_pooling(
    steps: &mut [Step],
    uses: &HashMap<usize, usize>,
    kept: &HashSet<usize>,
) {
    for i in 0..steps.len() {
        let Step::Op { op, args, out, .. } = &steps[i] else {
            continue;
        };
        let (Some((Unary::Relu, input)), out) = (elementwise(op, args), *out) else {
            continue;
        };
        if uses.get(&out) != Some(&1) || kept.contains(&out) {
            continue;
        }
        let Some(j) = (i + 1..steps.len()).find(|&j| pools(&steps[j], out)) else {
            continue;
        };
        steps[i] = Step::Same {
            from: input,
            out,
            why: Absorbed::AfterPooling,
        };
        if let Step::Op { reuse, .. } = &mut steps[j] {
            *reuse = Reuse::Then(Unary::Relu);
        }
    }
}

/// Marks each elementwise step whose input's last use it is (`frees`, per
/// step) to write over that input when nothing else holds it.
pub(crate) fn over_dying_inputs(steps: &mut [Step], frees: &[Vec<usize>]) {
    for (step, frees) in steps.iter_mut().zip(frees) {
        if let Step::Op {
            op, args, reuse, ..
        } = step
            && *reuse == Reuse::Fresh
            && let Some((u, input)) = elementwise(op, args)
            && frees.contains(&input)
        {
            *reuse = Reuse::Over(u);
        }
    }
}
