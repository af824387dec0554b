//! Running a row with history: when grad mode is on and an input requires
//! grad, the op's outputs become outputs of a new backward node.

use std::sync::Arc;

use fxvm_tensor::autograd::records_history;
use fxvm_tensor::autograd::{Backward, Ctx, Edge, GradMode, Node, Saved, TensorInfo};
use fxvm_tensor::{ErrorKind, Result, Tensor, TensorError};

use super::back::{Back, Param};
use super::{Derivative, Formula, Save};
use crate::op::Op;
use crate::value::Value;

fn tensors(v: &Value) -> &[Tensor] {
    match v {
        Value::Tensor(t) => std::slice::from_ref(t),
        Value::Tensors(ts) => ts.as_slice(),
        _ => &[],
    }
}

/// Whether an op on these tensors records history.
pub(crate) fn recording_tensors(ts: &[&Tensor]) -> bool {
    records_history() && ts.iter().any(|t| t.requires_grad())
}

/// The input a call that records nothing may return views of (its first
/// tensor): with grad mode on, for rows with a derivative (not `detach`)
/// that do not write in place. PyTorch tracks views whether or not anything
/// requires grad, so that a later in-place op with an operand requiring
/// grad gives the base history too.
pub(crate) fn view_candidate(op: &Op, values: &[Value]) -> Option<Tensor> {
    if !records_history()
        || op.schema.mutated().is_some()
        || !matches!(op.derivative, Some(Derivative::Formula { .. }))
    {
        return None;
    }
    values.iter().find_map(|v| tensors(v).first().cloned())
}

/// Marks the outputs of such a call that share `base`'s storage (and are
/// not `base` itself) as its views.
pub(crate) fn mark_views(base: &Tensor, out: &Value) {
    let mark = |o: &Tensor| {
        if o.dtype().is_float() {
            super::views::mark_view(o, base);
        }
    };
    match out {
        Value::Tuple(items) | Value::ReturnType(_, items) => {
            items.iter().flat_map(|v| tensors(v).iter()).for_each(mark);
        }
        v => tensors(v).iter().for_each(mark),
    }
}

/// Whether a call with these arguments records history.
pub fn recording(values: &[Value]) -> bool {
    records_history()
        && values
            .iter()
            .any(|v| tensors(v).iter().any(Tensor::requires_grad))
}

/// A leaf's accumulator node (made once per leaf, by `gradient_edge`).
fn new_accumulator(t: &Tensor) -> Arc<Node> {
    Node::new(
        "AccumulateGrad",
        vec![],
        vec![],
        vec![TensorInfo::of(t)],
        Box::new(AccumulateGrad { var: t.clone() }),
    )
}

/// Where a gradient of `t` goes, if it requires one.
pub fn edge(t: &Tensor) -> Option<Edge> {
    t.gradient_edge(|| new_accumulator(t))
}

/// Runs `op` on `values` (some requiring grad) and links its node.
pub fn record(op: &Op, values: Vec<Value>) -> Result<Value> {
    if let Some(Derivative::None) = op.derivative {
        return plain(op, values);
    }
    // `Tensor(a!)` parameters, and `inplace=True` functionals on their input.
    let mutated = op.schema.mutated().or_else(|| {
        let i = op.schema.position("inplace")?;
        matches!(values[i], Value::Bool(true)).then_some(0)
    });
    if let Some(i) = mutated
        && let [t] = tensors(&values[i])
    {
        if t.is_leaf() && t.requires_grad() {
            return Err(TensorError::LeafInPlace);
        }
        super::views::check(t)?;
    }
    let derivative = op.derivative.clone();
    let (name, saves, formula) = match &derivative {
        Some(Derivative::None) => return plain(op, values),
        Some(Derivative::Decompose(f)) => return f(op, values),
        Some(Derivative::Composite) => return op.run_plain(values),
        Some(Derivative::Formula {
            name,
            saves,
            formula,
        }) => (name.of(&values), *saves, Some(formula.clone())),
        None => ("NotImplemented", &[][..], None),
    };
    // Edges and what the node keeps of each parameter, before the kernel
    // runs (an in-place op overwrites its input).
    let mut next = Vec::new();
    let mut infos = Vec::new();
    let mut needs = Vec::with_capacity(values.len());
    let mut params = Vec::with_capacity(values.len());
    for (i, v) in values.iter().enumerate() {
        // An in-place op's saved input is its value before the write (a
        // clone with the history the input had); other inputs are saved
        // after the kernel ran (a batch norm's running statistics change
        // as it runs, and are not what its formula reads then).
        let before_write = |t: &Tensor| -> Result<Option<Saved>> {
            if mutated == Some(i) && saves.contains(&Save::In(i)) {
                let old = super::ops::call("clone", vec![Value::Tensor(t.clone())], vec![])?;
                return Ok(Some(Saved::input(&old)));
            }
            Ok(None)
        };
        let param = match v {
            Value::Tensor(t) => Param::Tensor {
                saved: before_write(t)?,
                info: TensorInfo::of(t),
            },
            Value::Tensors(ts) => Param::Tensors {
                saved: None,
                infos: ts.iter().map(TensorInfo::of).collect(),
            },
            // A number where a tensor may stand: an input without an edge.
            Value::Scalar(s) if op.schema.params[i].ty.takes_tensor() => {
                next.push(None);
                infos.push(TensorInfo {
                    shape: vec![],
                    dtype: s.category().default_dtype(),
                });
                Param::Number(v.clone())
            }
            v => Param::Value(v.clone()),
        };
        let mut need = false;
        for t in tensors(v) {
            let e = edge(t);
            need |= e.is_some();
            next.push(e);
            infos.push(TensorInfo::of(t));
        }
        needs.push(need);
        params.push(param);
    }
    let inputs: Vec<Tensor> = values.iter().flat_map(|v| tensors(v).to_vec()).collect();
    let written = mutated.and_then(|m| tensors(&values[m]).first().cloned());
    // The arguments the formula saves (after the kernel ran, see above).
    let saves_inputs = saves
        .iter()
        .any(|s| matches!(s, Save::In(i) if mutated != Some(*i)));
    let given = if saves_inputs {
        values.clone()
    } else {
        Vec::new()
    };
    let result = {
        let _off = GradMode::set(false);
        op.run_plain(values)?
    };
    for (i, (param, v)) in params.iter_mut().zip(&given).enumerate() {
        if !saves.contains(&Save::In(i)) || mutated == Some(i) {
            continue;
        }
        match (param, v) {
            (Param::Tensor { saved, .. }, Value::Tensor(t)) => *saved = Some(Saved::input(t)),
            (Param::Tensors { saved, .. }, Value::Tensors(ts)) => {
                *saved = Some(ts.iter().map(Saved::input).collect());
            }
            _ => {}
        }
    }
    // Differentiable outputs: floating-point tensors; an output that is one
    // of the inputs as given becomes a new tensor (a view of it).
    let mut outputs: Vec<Tensor> = Vec::new();
    let result = map_tensors(result, &mut |t| {
        let t = if inputs.iter().any(|i| i.same(&t)) {
            t.detach()
        } else {
            t
        };
        outputs.push(t.clone());
        t
    });
    let differentiable = |t: &Tensor| t.dtype().is_float();
    if let (Value::Input(i), Some(m), Some(written)) = (&result, mutated, written)
        && *i == m
    {
        // An in-place op: the written tensor is the node's one output.
        if !differentiable(&written) {
            return Ok(result);
        }
        let node = make_node(
            op,
            name,
            formula,
            saves,
            params,
            next,
            infos,
            needs,
            std::slice::from_ref(&written),
        );
        written.set_history(node, 0);
        super::views::rebase(&written)?;
        return Ok(result);
    }
    let differentiable_output =
        |n: usize, t: &Tensor| differentiable(t) && !op.nondiff_outputs.contains(&n);
    if !outputs
        .iter()
        .enumerate()
        .any(|(n, t)| differentiable_output(n, t))
    {
        return Ok(result);
    }
    let node = make_node(
        op, name, formula, saves, params, next, infos, needs, &outputs,
    );
    for (n, t) in outputs.iter().enumerate() {
        if differentiable_output(n, t) {
            t.set_history(node.clone(), n);
        }
    }
    super::views::mark(&outputs, &inputs);
    Ok(result)
}

#[allow(clippy::too_many_arguments)]
fn make_node(
    op: &Op,
    name: &'static str,
    formula: Option<Formula>,
    saves: &[Save],
    params: Vec<Param>,
    next: Vec<Option<Edge>>,
    infos: Vec<TensorInfo>,
    needs: Vec<bool>,
    outputs: &[Tensor],
) -> Arc<Node> {
    let saved_outputs: Vec<Option<Saved>> = (0..outputs.len())
        .map(|n| {
            saves
                .contains(&Save::Out(n))
                .then(|| Saved::output(&outputs[n], n, name))
        })
        .collect();
    Node::new(
        name,
        next,
        infos,
        outputs.iter().map(TensorInfo::of).collect(),
        Box::new(OpBackward {
            op: op.name(),
            formula,
            params,
            outputs: saved_outputs,
            needs,
            released: false,
        }),
    )
}

/// Runs without history (the op's outputs never require grad).
fn plain(op: &Op, values: Vec<Value>) -> Result<Value> {
    let _off = GradMode::set(false);
    op.run_plain(values)
}

/// `f` on every tensor of a result.
fn map_tensors(v: Value, f: &mut impl FnMut(Tensor) -> Tensor) -> Value {
    match v {
        Value::Tensor(t) => Value::Tensor(f(t)),
        Value::Tensors(ts) => Value::Tensors(ts.into_iter().map(&mut *f).collect()),
        Value::Tuple(items) => Value::Tuple(items.into_iter().map(|x| map_tensors(x, f)).collect()),
        Value::ReturnType(n, items) => {
            Value::ReturnType(n, items.into_iter().map(|x| map_tensors(x, f)).collect())
        }
        v => v,
    }
}

/// A registry row's node.
struct OpBackward {
    op: &'static str,
    formula: Option<Formula>,
    params: Vec<Param>,
    outputs: Vec<Option<Saved>>,
    needs: Vec<bool>,
    released: bool,
}

impl Backward for OpBackward {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let Some(formula) = &self.formula else {
            // PyTorch's words (a RuntimeError) for its rows without one.
            return Err(TensorError::Other {
                kind: ErrorKind::Runtime,
                message: format!("derivative for aten::{} is not implemented", self.op),
            });
        };
        if grads.iter().all(Option::is_none) {
            return Ok(vec![None; self.params.iter().map(Param::edges).sum()]);
        }
        let mut back = Back {
            op: self.op,
            node: ctx.node,
            grads,
            params: &self.params,
            outputs: &self.outputs,
            released: self.released,
            needs: self.needs.clone(),
            out: vec![None; self.params.len()],
        };
        formula(&mut back)?;
        // One gradient per tensor of each parameter, in edge order.
        let mut flat = Vec::new();
        for (p, g) in self.params.iter().zip(back.out) {
            let mut g = g.unwrap_or_default();
            g.resize(p.edges(), None);
            flat.extend(g);
        }
        Ok(flat)
    }

    /// Formulas see a missing output gradient as `None` (PyTorch's
    /// undefined gradient): zeros would change nothing but signs of zero
    /// and cost a tensor per output.
    fn materializes(&self) -> bool {
        false
    }

    fn release(&mut self) {
        self.released = true;
        for p in &mut self.params {
            match p {
                Param::Tensor { saved, .. } => *saved = None,
                Param::Tensors { saved, .. } => *saved = None,
                Param::Value(_) | Param::Number(_) => {}
            }
        }
        self.outputs.iter_mut().for_each(|o| *o = None);
    }
}

/// A leaf's node: adds the gradient into `.grad`.
struct AccumulateGrad {
    var: Tensor,
}

impl Backward for AccumulateGrad {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>> {
        let Some(mut g) = grads.into_iter().next().flatten() else {
            return Ok(vec![]);
        };
        let hooks = self.var.leaf_hooks();
        let post_hooks = self.var.post_accumulate_hooks();
        if !hooks.is_empty() || !post_hooks.is_empty() {
            crate::tape::refuse("a hook on a parameter's gradient runs Python at every step");
        }
        for hook in hooks {
            if let Some(new) = hook(&g)? {
                g = new;
            }
        }
        if ctx.create_graph {
            let new = match self.var.grad() {
                None => g,
                Some(old) => super::ops::add(&old, &g)?,
            };
            self.var.set_grad(Some(new))?;
        } else {
            crate::tape::accumulate(&self.var, g, |g| accumulate_into(&self.var, g))?;
        }
        for hook in post_hooks {
            hook(&self.var)?;
        }
        Ok(vec![])
    }

    fn variable(&self) -> Option<Tensor> {
        Some(self.var.clone())
    }
}

/// `var.grad += g` without history: `g` itself becomes the gradient when
/// nothing else holds it and it is laid out as the variable is, else a
/// copy; an existing gradient is added to in place.
pub(crate) fn accumulate_into(var: &Tensor, g: Tensor) -> Result<()> {
    let new = match var.grad() {
        None if g.is_sole_handle() && g.is_contiguous() && g.layout().offset == 0 => g.detach(),
        None => g.detach().copy(),
        Some(old) => {
            let _off = GradMode::set(false);
            fxvm_tensor::ops::elementwise::binary_(
                fxvm_tensor::ops::elementwise::Binary::Add,
                &old,
                &g.into(),
            )?;
            old
        }
    };
    var.set_grad(Some(new))
}
