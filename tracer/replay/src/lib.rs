//! Replaying a captured graph natively (`torch._C._replay.Plan`): the graph's
//! nodes become steps over slots (see `plan`), parameters and buffers are
//! bound once — the module's own tensors, so updates in place are seen —
//! and each call runs the steps, dropping every value after its last use.
//! Registry ops run without Python; other nodes call back into it.
//! Captured steps (`tape`) replay a recorded forward, backward and update.
//!
//! Extending: a rewrite of the planned steps goes beside its kind —
//! arguments prepared once from bound parameters in `prepare.rs` (batch
//! norm folded into convolutions), results written in place in
//! `in_place.rs`; node kinds are planned in `plan.rs`. The Python side
//! (`tracer/py/fxvm/`) reaches this crate through `bindings.rs`.

mod bindings;
mod exact;
mod in_place;
mod numeric;
mod plan;
mod prepare;
mod profile;
mod tape;
mod value;

use std::collections::HashMap;

use fxvm_vm::binding;
use rustpython_vm::builtins::{PyBaseExceptionRef, PyStr, PyType};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::{Callable, Constructor};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use fxvm_fx::node::{Op as Kind, PyNode};
use fxvm_tensor::ops::elementwise as ew;
use fxvm_tensor::ops::subscript::{self, Index};
use fxvm_vm::text::Utf8;
use plan::{Absorbed, Arg, Item, Planner, Reuse, Src, Step};
use profile::{Timings, profiling};
use value::V;

use exact::{PyExactCalls, compiled_call, optimized_module_call};
use tape::PyTape;

/// The module definition to register with an interpreter builder.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    bindings::module::module_def(ctx)
}

/// A tuple or list's items.
fn value_items(o: &PyObjectRef) -> Option<Vec<PyObjectRef>> {
    binding::items(o)
}

#[pyclass(module = "torch._C._replay", name = "Plan")]
#[derive(PyPayload)]
pub(crate) struct PyPlan {
    steps: Vec<Step>,
    /// Slots to free after each step.
    frees: Vec<Vec<usize>>,
    /// The steps as the graph has them, without the rewrites (folding,
    /// transposed weights, writing in place), and their frees: what runs
    /// when the call records history for a backward pass, since the
    /// rewrites compute around the recorded ops.
    recorded: (Vec<Step>, Vec<Vec<usize>>),
    slot_of: HashMap<usize, usize>,
    /// Constants (parameters, buffers) in their slots; the rest empty.
    initial: Vec<V>,
    /// The placeholders' slots, in order, with their defaults.
    inputs: Vec<(usize, Option<PyObjectRef>)>,
    /// The output node's argument, nodes in it standing for their values.
    output: PyObjectRef,
    /// What each Python step calls (a function, a method name, a module).
    callees: HashMap<usize, PyObjectRef>,
    /// The node of each step, for error messages.
    step_nodes: Vec<PyObjectRef>,
    native_steps: usize,
    /// Per step time while profiling is on.
    timings: Timings,
}

pub(crate) use profile::set_profiling;

/// `[(what, calls, seconds)]` of replayed graphs dropped while profiling.
pub(crate) fn retired_timings(vm: &VirtualMachine) -> PyObjectRef {
    let rows = profile::retired()
        .into_iter()
        .map(|(what, calls, seconds)| profile_row(&[&what], calls, seconds, vm))
        .collect();
    vm.ctx.new_list(rows).into()
}

/// The steps timed while profiling as Python reads them: `[(name, what,
/// calls, seconds)]`, each step named by `name_of`.
fn timing_rows(
    timings: &Timings,
    name_of: impl Fn(usize) -> String,
    vm: &VirtualMachine,
) -> PyObjectRef {
    let rows = timings
        .rows()
        .into_iter()
        .map(|(i, what, calls, seconds)| profile_row(&[&name_of(i), what], calls, seconds, vm))
        .collect();
    vm.ctx.new_list(rows).into()
}

/// A profile row as Python reads it: the texts, then calls and seconds.
fn profile_row(texts: &[&str], calls: u64, seconds: f64, vm: &VirtualMachine) -> PyObjectRef {
    let mut items: Vec<PyObjectRef> = texts.iter().map(|t| vm.ctx.new_str(*t).into()).collect();
    items.push(vm.ctx.new_int(calls).into());
    items.push(vm.ctx.new_float(seconds).into());
    vm.ctx.new_tuple(items).into()
}

impl std::fmt::Debug for PyPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Plan({} steps)", self.steps.len())
    }
}

impl PyPlan {
    fn build(
        nodes: Vec<PyObjectRef>,
        root: PyObjectRef,
        operators: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyPlan> {
        let mut slot_of = HashMap::new();
        let mut initial = Vec::new();
        let mut inputs = Vec::new();
        let mut output = vm.ctx.none();
        let mut pending = Vec::new();
        for obj in &nodes {
            let node = obj
                .downcast_ref::<PyNode>()
                .ok_or_else(|| vm.new_type_error("a Plan is built from graph nodes"))?;
            let slot = initial.len();
            match node.op() {
                Kind::Output => {
                    output = node
                        .args_tuple()
                        .as_slice()
                        .first()
                        .cloned()
                        .unwrap_or_else(|| vm.ctx.none());
                    continue;
                }
                Kind::Placeholder => {
                    inputs.push((slot, node.args_tuple().as_slice().first().cloned()));
                    initial.push(V::Empty);
                }
                Kind::GetAttr => {
                    let mut value = root.clone();
                    let target = node.target().str(vm)?.text(vm)?.to_owned();
                    for part in target.split('.') {
                        value = value.get_attr(&*vm.ctx.new_str(part), vm)?;
                    }
                    initial.push(V::from_py(&value, vm));
                }
                _ => {
                    initial.push(V::Empty);
                    pending.push((obj.clone(), slot));
                }
            }
            slot_of.insert(obj.get_id(), slot);
        }
        let planner = Planner {
            slot_of,
            operators: &operators,
            vm,
        };
        let mut steps = Vec::with_capacity(pending.len());
        let mut recorded = Vec::with_capacity(pending.len());
        let mut callees = HashMap::new();
        let step_nodes = pending.iter().map(|(obj, _)| obj.clone()).collect();
        for (obj, slot) in &pending {
            let node = obj.downcast_ref::<PyNode>().expect("checked above");
            let step = planner.step(node, *slot)?;
            recorded.push(planner.step(node, *slot)?);
            if let Step::Python { .. } = step {
                let target = node.target();
                let callee = match node.op() {
                    Kind::CallModule => vm.call_method(&root, "get_submodule", (target,))?,
                    _ => target,
                };
                callees.insert(*slot, callee);
            }
            steps.push(step);
        }
        let slot_of = planner.slot_of;
        let native_steps = steps
            .iter()
            .filter(|s| !matches!(s, Step::Python { .. }))
            .count();
        // The slots the output names: never freed, never folded away.
        let mut kept = std::collections::HashSet::new();
        collect_slots(&output, &slot_of, &mut kept);
        let mut uses: HashMap<usize, usize> = HashMap::new();
        for step in &steps {
            for s in step_inputs(step, &slot_of) {
                *uses.entry(s).or_default() += 1;
            }
        }
        let recorded_frees = liveness(&recorded, &slot_of, &initial, &kept);
        prepare::prepare(&mut steps, &initial, &uses, &kept);
        in_place::relu_after_pooling(&mut steps, &uses, &kept);
        let frees = liveness(&steps, &slot_of, &initial, &kept);
        in_place::over_dying_inputs(&mut steps, &frees);
        let labels = steps
            .iter()
            .zip(&step_nodes)
            .map(|(step, node)| label(step, node, vm))
            .collect();
        Ok(PyPlan {
            steps,
            frees,
            recorded: (recorded, recorded_frees),
            slot_of,
            initial,
            inputs,
            output,
            callees,
            step_nodes,
            native_steps,
            timings: Timings::new(labels),
        })
    }

    fn arg_value(&self, a: &Arg, slots: &[V]) -> Option<fxvm_ops::Value> {
        let from = |s: &Src| -> Option<V> {
            match s {
                Src::Slot(i) => Some(slots[*i].clone()),
                Src::Const(v) => Some(match v {
                    fxvm_ops::Value::Int(i) => V::Int(*i),
                    fxvm_ops::Value::Tensor(t) => V::Tensor(t.clone()),
                    _ => return None,
                }),
                _ => None,
            }
        };
        match &a.src {
            Src::Const(v) => Some(v.clone()),
            Src::Slot(i) => match &slots[*i] {
                V::None if a.optional => Some(fxvm_ops::Value::None),
                v => v.to_value(&a.ty),
            },
            Src::Ints(items) => items
                .iter()
                .map(|s| match from(s)? {
                    V::Int(i) => Some(i),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(fxvm_ops::Value::Ints),
            Src::Tensors(items) => items
                .iter()
                .map(|s| match from(s)? {
                    V::Tensor(t) => Some(t),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(fxvm_ops::Value::Tensors),
        }
    }

    /// `exc` with the node it came from and the user's line that made
    /// that node (`node.meta["source_loc"]`).
    fn located(
        &self,
        i: usize,
        exc: PyBaseExceptionRef,
        vm: &VirtualMachine,
    ) -> PyBaseExceptionRef {
        let Some(node) = self
            .step_nodes
            .get(i)
            .and_then(|n| n.downcast_ref::<PyNode>())
        else {
            return exc;
        };
        let message = exc
            .as_object()
            .str(vm)
            .map(|s| s.lossy().into_owned())
            .unwrap_or_default();
        let target = node
            .target()
            .str(vm)
            .map(|s| s.lossy().into_owned())
            .unwrap_or_default();
        let place = node
            .meta_get("source_loc", vm)
            .and_then(|l| l.str(vm).ok())
            .map(|l| format!(", traced at {}", l.lossy()))
            .unwrap_or_default();
        vm.new_exception_msg(
            exc.class().to_owned(),
            format!(
                "{message}\n  (replaying {} = {target}(...){place})",
                node.name()
            )
            .into(),
        )
    }

    /// The values of an op step's arguments.
    fn values(
        &self,
        op: &fxvm_ops::Op,
        args: &[Arg],
        slots: &[V],
        vm: &VirtualMachine,
    ) -> PyResult<Vec<fxvm_ops::Value>> {
        args.iter()
            .map(|a| {
                self.arg_value(a, slots).ok_or_else(|| {
                    vm.new_type_error(format!(
                        "replay: {}() got an argument that is not a {}",
                        op.name(),
                        a.ty.describe()
                    ))
                })
            })
            .collect()
    }

    fn run_step(&self, step: &Step, slots: &mut [V], vm: &VirtualMachine) -> PyResult<V> {
        match step {
            Step::Prepared {
                op, args, prepared, ..
            } => {
                let mut values = self.values(op, args, slots, vm)?;
                prepared
                    .apply(&mut values, slots)
                    .map_err(|e| binding::error_to_py(e, vm))?;
                let result = op.run(values).map_err(|e| binding::error_to_py(e, vm))?;
                Ok(V::from_value(result, &|_| V::None, vm))
            }
            Step::Same { from, .. } => Ok(slots[*from].clone()),
            Step::Op {
                op, args, reuse, ..
            } => {
                let error = |e| binding::error_to_py(e, vm);
                if let Reuse::Over(u) = reuse
                    && let Some(Src::Slot(input)) = args.first().map(|a| &a.src)
                    && matches!(&slots[*input], V::Tensor(t) if t.is_sole_handle() && t.dtype().is_float())
                    && let V::Tensor(t) = std::mem::replace(&mut slots[*input], V::Empty)
                {
                    ew::unary_(*u, &t).map_err(error)?;
                    return Ok(V::Tensor(t));
                }
                let values = self.values(op, args, slots, vm)?;
                let result = op.run(values).map_err(error)?;
                // An in-place op returns its argument: read it again from
                // its slot rather than keeping every argument per call.
                let input = |i: usize| match args.get(i).and_then(|a| self.arg_value(a, slots)) {
                    Some(fxvm_ops::Value::Tensor(t)) => V::Tensor(t),
                    _ => V::None,
                };
                let value = V::from_value(result, &input, vm);
                match (reuse, value) {
                    (Reuse::Then(u), V::Tensor(t)) if t.is_sole_handle() => {
                        ew::unary_(*u, &t).map_err(error)?;
                        Ok(V::Tensor(t))
                    }
                    (Reuse::Then(u), V::Tensor(t)) => {
                        ew::unary(*u, &t).map(V::Tensor).map_err(error)
                    }
                    (_, value) => Ok(value),
                }
            }
            Step::Item { from, index, .. } => {
                let item = match &slots[*from] {
                    V::Seq(items) => wrap_index(*index, items.len()).map(|i| items[i].clone()),
                    V::Size(s) => wrap_index(*index, s.len()).map(|i| V::Int(s[i])),
                    _ => None,
                };
                item.ok_or_else(|| vm.new_index_error("tuple index out of range"))
            }
            Step::Size { x, dim, .. } => {
                let V::Tensor(t) = &slots[*x] else {
                    return Err(vm.new_type_error("replay: size() of a value that is not a tensor"));
                };
                let shape: Vec<i64> = t.shape().iter().map(|&s| s as i64).collect();
                match dim {
                    None => Ok(V::Size(shape)),
                    Some(d) => wrap_index(*d, shape.len())
                        .map(|i| V::Int(shape[i]))
                        .ok_or_else(|| {
                            vm.new_index_error(format!("Dimension out of range (got {d})"))
                        }),
                }
            }
            Step::Arith { op, a, b, .. } => {
                let value = |s: &Src| match s {
                    Src::Slot(i) => slots[*i].clone(),
                    Src::Const(fxvm_ops::Value::Int(v)) => V::Int(*v),
                    Src::Const(fxvm_ops::Value::Float(v)) => V::Float(*v),
                    _ => V::None,
                };
                let b = b.as_ref().map(value);
                op.apply(&value(a), b.as_ref()).map_err(|why| match why {
                    "math domain error" => vm.new_value_error(why),
                    w if w.contains("zero") => vm.new_zero_division_error(w),
                    w => vm.new_type_error(format!("replay: {w}")),
                })
            }
            Step::Subscript { x, items, .. } => {
                let V::Tensor(t) = &slots[*x] else {
                    return Err(
                        vm.new_type_error("replay: a subscript of a value that is not a tensor")
                    );
                };
                let int = |s: &Src| -> PyResult<i64> {
                    match s {
                        Src::Slot(i) => match &slots[*i] {
                            V::Int(v) => Ok(*v),
                            _ => {
                                Err(vm
                                    .new_type_error("replay: a subscript bound that is not an int"))
                            }
                        },
                        Src::Const(fxvm_ops::Value::Int(v)) => Ok(*v),
                        _ => Err(vm.new_type_error("replay: a subscript bound that is not an int")),
                    }
                };
                let mut index = Vec::with_capacity(items.len());
                for item in items {
                    index.push(match item {
                        Item::Int(s) => Index::Int(int(s)?),
                        Item::Slice { start, stop, step } => Index::Slice {
                            start: start.as_ref().map(int).transpose()?,
                            stop: stop.as_ref().map(int).transpose()?,
                            step: *step,
                        },
                        Item::NewAxis => Index::NewAxis,
                        Item::Ellipsis => Index::Ellipsis,
                        Item::Tensor(Src::Const(fxvm_ops::Value::Tensor(t))) => {
                            Index::Tensor(t.clone())
                        }
                        Item::Tensor(Src::Slot(i)) => match &slots[*i] {
                            V::Tensor(t) => Index::Tensor(t.clone()),
                            _ => {
                                return Err(
                                    vm.new_type_error("replay: an index that is not a tensor")
                                );
                            }
                        },
                        Item::Tensor(_) => {
                            return Err(vm.new_type_error("replay: an index that is not a tensor"));
                        }
                    });
                }
                subscript::get(t, &index)
                    .map(V::Tensor)
                    .map_err(|e| binding::error_to_py(e, vm))
            }
            Step::Python { node, out } => {
                let node = node.downcast_ref::<PyNode>().expect("a node");
                let (args, kwargs) = plan::python_args(node, slots, &self.slot_of, vm)?;
                let callee = &self.callees[out];
                let result = match node.op() {
                    Kind::CallMethod => {
                        let (this, rest) = args
                            .split_first()
                            .ok_or_else(|| vm.new_type_error("a method call needs its object"))?;
                        let method = this
                            .get_attr(callee.downcast_ref::<PyStr>().expect("a method name"), vm)?;
                        method.call(FuncArgs::new(rest.to_vec(), kwargs), vm)?
                    }
                    _ => callee.call(FuncArgs::new(args, kwargs), vm)?,
                };
                Ok(V::from_py(&result, vm))
            }
        }
    }

    fn call(&self, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        if args.args.len() > self.inputs.len() || !args.kwargs.is_empty() {
            return Err(vm.new_type_error(format!(
                "a replayed graph takes {} positional arguments, got {}",
                self.inputs.len(),
                args.args.len()
            )));
        }
        let mut slots = self.initial.clone();
        for (i, (slot, default)) in self.inputs.iter().enumerate() {
            slots[*slot] = match (args.args.get(i), default) {
                (Some(a), _) => V::from_py(a, vm),
                (None, Some(d)) => V::from_py(d, vm),
                (None, None) => {
                    return Err(vm.new_type_error(format!(
                        "a replayed graph is missing argument {}",
                        i + 1
                    )));
                }
            };
        }
        // With grad mode on and a tensor that requires grad, every op runs
        // as the graph has it, so that its node is recorded.
        let recording = fxvm_tensor::autograd::is_grad_enabled()
            && slots
                .iter()
                .any(|v| matches!(v, V::Tensor(t) if t.requires_grad()));
        let (steps, frees) = if recording {
            (&self.recorded.0, &self.recorded.1)
        } else {
            (&self.steps, &self.frees)
        };
        let profiling = profiling() && !recording;
        for (i, (step, frees)) in steps.iter().zip(frees).enumerate() {
            let start = profiling.then(std::time::Instant::now);
            let v = self
                .run_step(step, &mut slots, vm)
                .map_err(|e| self.located(i, e, vm))?;
            if let Some(start) = start {
                self.timings.record(i, start.elapsed().as_nanos() as u64);
            }
            slots[step.out()] = v;
            for &f in frees {
                slots[f] = V::Empty;
            }
        }
        plan::substitute(&self.output, &slots, &self.slot_of, vm)
    }
}

/// What a step runs, as the profile names it: the node's target by its
/// module and qualified name (`torch.nn.functional.relu`), `Tensor.<name>`
/// for a method, and how the plan changed the step.
fn label(step: &Step, node: &PyObjectRef, vm: &VirtualMachine) -> String {
    let node = node.downcast_ref::<PyNode>().expect("a node");
    let target = node.target();
    let text = |o: PyObjectRef| {
        o.str(vm)
            .ok()
            .and_then(|s| s.text(vm).ok().map(str::to_owned))
    };
    let what = match (
        step,
        target.get_attr("__qualname__", vm).ok().and_then(text),
    ) {
        (Step::Python { .. }, _) => format!("{} (Python)", node.name()),
        (_, Some(qualname)) => match target.get_attr("__module__", vm).ok().and_then(text) {
            Some(module) if module != "builtins" => format!("{module}.{qualname}"),
            _ => qualname,
        },
        (_, None) => format!("Tensor.{}", text(target).unwrap_or_default()),
    };
    match step {
        Step::Same {
            why: Absorbed::IntoConvolution,
            ..
        } => format!("{what} (folded into the convolution)"),
        Step::Same {
            why: Absorbed::AfterPooling,
            ..
        } => format!("{what} (run after the pooling, on its output)"),
        Step::Op {
            reuse: Reuse::Then(u),
            ..
        } => format!("{what} (then {})", u.name()),
        _ => what,
    }
}

fn wrap_index(i: i64, n: usize) -> Option<usize> {
    let i = if i < 0 { i + n as i64 } else { i };
    (0..n as i64).contains(&i).then_some(i as usize)
}

/// For each step, the slots whose last use it is (never constants, never
/// those `kept` for the output).
fn liveness(
    steps: &[Step],
    slot_of: &HashMap<usize, usize>,
    initial: &[V],
    kept: &std::collections::HashSet<usize>,
) -> Vec<Vec<usize>> {
    let mut last_use: HashMap<usize, usize> = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        for s in step_inputs(step, slot_of) {
            last_use.insert(s, i);
        }
    }
    let mut frees = vec![Vec::new(); steps.len()];
    for (slot, step) in last_use {
        if !kept.contains(&slot) && matches!(initial.get(slot), Some(V::Empty)) {
            frees[step].push(slot);
        }
    }
    frees
}

fn src_slots(s: &Src, out: &mut Vec<usize>) {
    match s {
        Src::Slot(i) => out.push(*i),
        Src::Ints(items) | Src::Tensors(items) => items.iter().for_each(|x| src_slots(x, out)),
        Src::Const(_) => {}
    }
}

fn step_inputs(step: &Step, slot_of: &HashMap<usize, usize>) -> Vec<usize> {
    let mut out = Vec::new();
    match step {
        Step::Op { args, .. } => args.iter().for_each(|a| src_slots(&a.src, &mut out)),
        Step::Prepared { args, prepared, .. } => {
            args.iter().for_each(|a| src_slots(&a.src, &mut out));
            out.extend(prepared.inputs());
        }
        Step::Same { from, .. } => out.push(*from),
        Step::Item { from, .. } => out.push(*from),
        Step::Size { x, .. } => out.push(*x),
        Step::Arith { a, b, .. } => {
            src_slots(a, &mut out);
            b.iter().for_each(|b| src_slots(b, &mut out));
        }
        Step::Subscript { x, items, .. } => {
            out.push(*x);
            for item in items {
                match item {
                    Item::Int(s) | Item::Tensor(s) => src_slots(s, &mut out),
                    Item::Slice { start, stop, .. } => {
                        start
                            .iter()
                            .chain(stop.iter())
                            .for_each(|s| src_slots(s, &mut out));
                    }
                    Item::NewAxis | Item::Ellipsis => {}
                }
            }
        }
        Step::Python { node, .. } => {
            let mut set = std::collections::HashSet::new();
            if let Some(n) = node.downcast_ref::<PyNode>() {
                for a in n.args_tuple().as_slice() {
                    collect_slots(a, slot_of, &mut set);
                }
                for (_, v) in n.kwargs_dict().items_vec() {
                    collect_slots(&v, slot_of, &mut set);
                }
            }
            out.extend(set);
        }
    }
    out
}

/// The slots of the nodes inside `o` (nested in tuples, lists, dicts, slices).
fn collect_slots(
    o: &PyObjectRef,
    slot_of: &HashMap<usize, usize>,
    out: &mut std::collections::HashSet<usize>,
) {
    if o.downcast_ref::<PyNode>().is_some() {
        if let Some(s) = slot_of.get(&o.get_id()) {
            out.insert(*s);
        }
        return;
    }
    if let Some(items) = value_items(o) {
        items.iter().for_each(|x| collect_slots(x, slot_of, out));
        return;
    }
    if let Some(d) = o.downcast_ref::<rustpython_vm::builtins::PyDict>() {
        d.items_vec()
            .iter()
            .for_each(|(_, v)| collect_slots(v, slot_of, out));
        return;
    }
    if let Some(s) = o.downcast_ref::<rustpython_vm::builtins::PySlice>() {
        for x in [s.start.clone(), Some(s.stop.clone()), s.step.clone()]
            .into_iter()
            .flatten()
        {
            collect_slots(&x, slot_of, out);
        }
    }
}

#[derive(rustpython_vm::FromArgs)]
pub(crate) struct PlanArgs {
    #[pyarg(positional)]
    nodes: PyObjectRef,
    #[pyarg(positional)]
    root: PyObjectRef,
    #[pyarg(positional)]
    operators: PyObjectRef,
}

impl Constructor for PyPlan {
    type Args = PlanArgs;

    /// `Plan(nodes, root, operators)`: `nodes` of a shape-traced graph
    /// (their `meta["val"]` is read), `root` its module, `operators` the
    /// operator → Tensor method table.
    fn py_new(_cls: &Py<PyType>, a: PlanArgs, vm: &VirtualMachine) -> PyResult<Self> {
        let nodes: Vec<PyObjectRef> = a.nodes.try_to_value(vm)?;
        PyPlan::build(nodes, a.root, a.operators, vm)
    }
}

impl Callable for PyPlan {
    type Args = FuncArgs;

    fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        zelf.call(args, vm)
    }
}

#[pyclass(with(Constructor, Callable))]
impl PyPlan {
    /// How many steps run natively, and how many call back into Python.
    #[pygetset]
    fn counts(&self) -> (usize, usize) {
        (self.native_steps, self.steps.len() - self.native_steps)
    }

    /// `[(node name, what it calls, calls, seconds)]` per step timed while
    /// profiling was on.
    #[pymethod]
    fn timings(&self, vm: &VirtualMachine) -> PyObjectRef {
        timing_rows(
            &self.timings,
            |i| {
                self.step_nodes[i]
                    .downcast_ref::<PyNode>()
                    .map(|n| n.name().to_owned())
                    .unwrap_or_default()
            },
            vm,
        )
    }

    /// The nodes that call back into Python, by name.
    #[pygetset]
    fn python_nodes(&self, vm: &VirtualMachine) -> PyObjectRef {
        let names = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Python { node, .. } => node
                    .downcast_ref::<PyNode>()
                    .map(|n| vm.ctx.new_str(n.name()).into()),
                _ => None,
            })
            .collect();
        vm.ctx.new_list(names).into()
    }
}
