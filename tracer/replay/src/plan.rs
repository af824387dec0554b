//! A graph turned into steps over numbered slots: registry ops with their
//! arguments bound once (constants converted, nodes as slot numbers),
//! items of tuples and sizes, integer arithmetic on sizes, and — for
//! anything else — a call back into Python for that node alone. Each
//! node's fake value (`meta["val"]`, from `shape_trace`) says what kind of
//! value it makes.

use std::collections::HashMap;

use fxvm_ops::{Op, Place, Ty, Value, registry};
use fxvm_tensor::ops::elementwise::Unary;
use fxvm_vm::binding;
use rustpython_vm::builtins::{PyDict, PyInt, PyStr, PyTuple};
use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};

use super::numeric::NumOp;
use super::prepare::Prepared;
use super::value::V;
use fxvm_fx::node::{Op as Kind, PyNode};
use fxvm_vm::text::Utf8;

/// Where an op argument comes from.
#[derive(Debug)]
pub(crate) enum Src {
    Slot(usize),
    Const(Value),
    /// An int list with slots among its items (`view(b, t, 2, 8)`).
    Ints(Vec<Src>),
    /// A tensor list (`cat([a, b])`).
    Tensors(Vec<Src>),
}

/// One bound parameter of an op step.
#[derive(Debug)]
pub(crate) struct Arg {
    pub(crate) ty: Ty,
    pub(crate) optional: bool,
    pub(crate) src: Src,
}

/// One item of a tensor subscript, its ints from slots or constants.
#[derive(Debug)]
pub(crate) enum Item {
    Int(Src),
    Slice {
        start: Option<Src>,
        stop: Option<Src>,
        step: i64,
    },
    NewAxis,
    Ellipsis,
    /// A constant index tensor (from a list of ints) or a tensor slot.
    Tensor(Src),
}

#[derive(Debug)]
pub(crate) enum Step {
    Op {
        op: &'static Op,
        args: Vec<Arg>,
        out: usize,
        /// How the step may write its result (see `in_place`).
        reuse: Reuse,
    },
    /// `seq[index]` of a tuple or size slot.
    Item { from: usize, index: i64, out: usize },
    /// `x.size()` / `x.size(dim)` / `x.shape`.
    Size {
        x: usize,
        dim: Option<i64>,
        out: usize,
    },
    /// Python arithmetic on numbers (sizes, `1.0 / math.sqrt(d)`).
    Arith {
        op: NumOp,
        a: Src,
        b: Option<Src>,
        out: usize,
    },
    /// `x[items]` of a tensor.
    Subscript {
        x: usize,
        items: Vec<Item>,
        out: usize,
    },
    /// The node run by Python: `target(*args, **kwargs)`, a method of the
    /// first argument, or a submodule.
    Python { node: PyObjectRef, out: usize },
    /// An op some of whose arguments are prepared from bound parameters
    /// (see `prepare`).
    Prepared {
        op: &'static Op,
        args: Vec<Arg>,
        prepared: Box<Prepared>,
        out: usize,
    },
    /// The value of another slot: the step's work is done by another.
    Same {
        from: usize,
        out: usize,
        why: Absorbed,
    },
}

/// Where a [`Step::Same`]'s work went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Absorbed {
    /// A batch normalization folded into the convolution before it.
    IntoConvolution,
    /// An activation run on the max pooling's output instead of its input.
    AfterPooling,
}

/// How an op step may write its result, beside computing it afresh.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Reuse {
    #[default]
    Fresh,
    /// The step is this elementwise op of its first argument, whose last
    /// use it is: written over that tensor when nothing else holds it.
    Over(Unary),
    /// This elementwise op is applied to the step's new result where it lies.
    Then(Unary),
}

/// Where the parameter `name` of an op step's `args` comes from.
pub(crate) fn arg_src<'a>(op: &Op, args: &'a [Arg], name: &str) -> Option<&'a Src> {
    op.schema
        .position(name)
        .and_then(|i| args.get(i))
        .map(|a| &a.src)
}

impl Step {
    pub(crate) fn out(&self) -> usize {
        match self {
            Step::Op { out, .. }
            | Step::Item { out, .. }
            | Step::Size { out, .. }
            | Step::Arith { out, .. }
            | Step::Subscript { out, .. }
            | Step::Python { out, .. }
            | Step::Prepared { out, .. }
            | Step::Same { out, .. } => *out,
        }
    }
}

/// The registry row behind `Tensor.<name>`.
fn method_op(name: &str) -> Option<&'static Op> {
    registry()
        .named(name)
        .find(|op| op.places.contains(&Place::Method))
}

/// The planner's view of the graph being planned.
pub(crate) struct Planner<'a> {
    pub(crate) slot_of: HashMap<usize, usize>,
    pub(crate) operators: &'a PyObjectRef,
    pub(crate) vm: &'a VirtualMachine,
}

fn node_of(o: &PyObjectRef) -> Option<&Py<PyNode>> {
    o.downcast_ref::<PyNode>()
}

/// What a node's fake value says it makes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Makes {
    Tensor,
    Int,
    Float,
    Seq,
    Unknown,
}

fn makes(node: &Py<PyNode>, vm: &VirtualMachine) -> Makes {
    let Some(v) = node.meta_get("val", vm) else {
        return Makes::Unknown;
    };
    let class = v.class().name().to_string();
    match class.as_str() {
        "FakeTensor" => Makes::Tensor,
        "SymInt" | "int" => Makes::Int,
        "SymFloat" | "float" => Makes::Float,
        "tuple" | "Size" | "list" => Makes::Seq,
        _ => Makes::Unknown,
    }
}

impl Planner<'_> {
    fn slot(&self, node: &Py<PyNode>) -> Option<usize> {
        self.slot_of.get(&node.as_object().get_id()).copied()
    }

    /// The source of one argument object for a parameter of type `ty`.
    fn src(&self, ty: &Ty, o: &PyObjectRef) -> PyResult<Option<Src>> {
        let vm = self.vm;
        if let Some(node) = node_of(o) {
            return Ok(self.slot(node).map(Src::Slot));
        }
        if let Some(items) = super::value_items(o)
            && items.iter().any(|x| node_of(x).is_some())
        {
            let accepts = |t: &Ty| match ty {
                Ty::Union(alts) => alts.contains(t),
                other => other == t,
            };
            let each = |x: &PyObjectRef, inner: &Ty| -> PyResult<Option<Src>> {
                if let Some(n) = node_of(x) {
                    return Ok(self.slot(n).map(Src::Slot));
                }
                Ok(binding::convert(inner, x, vm)?.map(Src::Const))
            };
            let (inner, wrap): (Ty, fn(Vec<Src>) -> Src) = if accepts(&Ty::IntList) {
                (Ty::Int, Src::Ints)
            } else if accepts(&Ty::TensorList) {
                (Ty::Tensor, Src::Tensors)
            } else {
                return Ok(None);
            };
            let srcs = items
                .iter()
                .map(|x| each(x, &inner))
                .collect::<PyResult<Option<Vec<_>>>>()?;
            return Ok(srcs.map(wrap));
        }
        Ok(binding::convert(ty, o, vm)?.map(Src::Const))
    }

    /// An op step for a call of `op` with the node's arguments, or None
    /// when an argument cannot be bound ahead of time.
    fn op_step(
        &self,
        op: &'static Op,
        args: Vec<PyObjectRef>,
        kwargs: KwArgs,
        out: usize,
    ) -> PyResult<Option<Step>> {
        let vm = self.vm;
        let schema = &op.schema;
        // `view(b, t, 2, 8)`: trailing sizes given one by one form the list.
        let mut args = args;
        if let Some(i) = schema.int_varargs
            && args.len() > i + 1
            && schema.params.iter().filter(|p| !p.kw_only).count() < args.len()
        {
            let rest = args.split_off(i);
            args.push(vm.ctx.new_tuple(rest).into());
        }
        let objects = match binding::bind_objects(schema, FuncArgs::new(args, kwargs), vm) {
            Ok(o) => o,
            Err(_) => return Ok(None),
        };
        let mut bound = Vec::with_capacity(objects.len());
        for (p, o) in schema.params.iter().zip(&objects) {
            let src = match o {
                Some(o) if !vm.is_none(o) => self.src(&p.ty, o)?,
                _ => Some(Src::Const(p.default_value().unwrap_or(Value::None))),
            };
            let Some(src) = src else { return Ok(None) };
            bound.push(Arg {
                ty: p.ty.clone(),
                optional: p.optional,
                src,
            });
        }
        Ok(Some(Step::Op {
            op,
            args: bound,
            out,
            reuse: Reuse::Fresh,
        }))
    }

    /// An op step for `node` when `op` is known and its arguments bind,
    /// else the node through Python.
    fn op_or_python(
        &self,
        node: &Py<PyNode>,
        op: Option<&'static Op>,
        args: Vec<PyObjectRef>,
        kwargs: KwArgs,
        out: usize,
    ) -> PyResult<Step> {
        let step = match op {
            Some(op) => self.op_step(op, args, kwargs, out)?,
            None => None,
        };
        Ok(step.unwrap_or_else(|| Step::Python {
            node: node.to_owned().into(),
            out,
        }))
    }

    /// The step computing `node` into slot `out`.
    pub(crate) fn step(&self, node: &Py<PyNode>, out: usize) -> PyResult<Step> {
        let vm = self.vm;
        let python = || {
            Ok(Step::Python {
                node: node.to_owned().into(),
                out,
            })
        };
        let args: Vec<PyObjectRef> = node.args_tuple().as_slice().to_vec();
        let kwargs = binding::kwargs(&node.kwargs_dict().into(), vm);
        let target = node.target();
        let first = args.first().and_then(node_of);
        match node.op() {
            Kind::CallMethod => {
                let name = target.str(vm)?.text(vm)?.to_owned();
                let Some(x) = first.filter(|n| makes(n, vm) == Makes::Tensor) else {
                    return python();
                };
                if name == "__getitem__" && args.len() == 2 {
                    // `buffer[:, :, :t, :t]` recorded through __torch_function__.
                    let items = self.subscript_items(&args[1])?;
                    return Ok(match (self.slot(x), items) {
                        (Some(x), Some(items)) => Step::Subscript { x, items, out },
                        _ => Step::Python {
                            node: node.to_owned().into(),
                            out,
                        },
                    });
                }
                if name == "size" {
                    let dim = match args.get(1) {
                        None => None,
                        Some(d) => match d.downcast_ref::<PyInt>() {
                            Some(i) => Some(i.try_to_primitive::<i64>(vm)?),
                            None => return python(),
                        },
                    };
                    return Ok(match self.slot(x) {
                        Some(x) => Step::Size { x, dim, out },
                        None => Step::Python {
                            node: node.to_owned().into(),
                            out,
                        },
                    });
                }
                self.op_or_python(node, method_op(&name), args, kwargs, out)
            }
            Kind::CallFunction => {
                let module = target
                    .get_attr("__module__", vm)
                    .ok()
                    .and_then(|m| m.str(vm).ok())
                    .map(|s| s.lossy().into_owned());
                let name = target
                    .get_attr("__name__", vm)
                    .ok()
                    .and_then(|m| m.str(vm).ok())
                    .map(|s| s.lossy().into_owned());
                if matches!(module.as_deref(), Some("_operator" | "builtins" | "math")) {
                    let name = name.unwrap_or_default();
                    return self.operator_step(node, &name, args, kwargs, out);
                }
                self.op_or_python(node, binding::op_of(&target, vm), args, kwargs, out)
            }
            _ => python(),
        }
    }

    /// `operator.X(a, b)`, `getattr(x, "shape")`: on sizes natively, on
    /// tensors by the Tensor method computing it, else in Python.
    fn operator_step(
        &self,
        node: &Py<PyNode>,
        name: &str,
        args: Vec<PyObjectRef>,
        kwargs: KwArgs,
        out: usize,
    ) -> PyResult<Step> {
        let vm = self.vm;
        let python = Step::Python {
            node: node.to_owned().into(),
            out,
        };
        let kind = |o: &PyObjectRef| match node_of(o) {
            Some(n) => makes(n, vm),
            None if o.class().is(vm.ctx.types.bool_type) => Makes::Unknown,
            None if o.downcast_ref::<PyInt>().is_some() => Makes::Int,
            None if o
                .downcast_ref::<rustpython_vm::builtins::PyFloat>()
                .is_some() =>
            {
                Makes::Float
            }
            None => Makes::Unknown,
        };
        let number = |k: Makes| matches!(k, Makes::Int | Makes::Float);
        let num_src = |o: &PyObjectRef| -> Option<Src> {
            match node_of(o) {
                Some(n) => self.slot(n).map(Src::Slot),
                None => Some(Src::Const(match V::from_py(o, vm) {
                    V::Int(i) => Value::Int(i),
                    V::Float(f) => Value::Float(f),
                    _ => return None,
                })),
            }
        };
        match (name, args.as_slice()) {
            ("getitem", [seq, index])
                if node_of(seq).is_some_and(|n| makes(n, vm) == Makes::Seq) =>
            {
                match (
                    self.slot(node_of(seq).expect("a node")),
                    index.downcast_ref::<PyInt>(),
                ) {
                    (Some(from), Some(i)) => Ok(Step::Item {
                        from,
                        index: i.try_to_primitive::<i64>(vm)?,
                        out,
                    }),
                    _ => Ok(python),
                }
            }
            ("getitem", [x, index])
                if node_of(x).is_some_and(|n| makes(n, vm) == Makes::Tensor) =>
            {
                let x = self.slot(node_of(x).expect("a node"));
                match (x, self.subscript_items(index)?) {
                    (Some(x), Some(items)) => Ok(Step::Subscript { x, items, out }),
                    _ => Ok(python),
                }
            }
            ("getattr", [x, attr])
                if attr
                    .downcast_ref::<PyStr>()
                    .is_some_and(|s| s.to_str() == Some("shape")) =>
            {
                match node_of(x)
                    .filter(|n| makes(n, vm) == Makes::Tensor)
                    .and_then(|n| self.slot(n))
                {
                    Some(x) => Ok(Step::Size { x, dim: None, out }),
                    None => Ok(python),
                }
            }
            (_, [a]) if number(kind(a)) && NumOp::of(name).is_some_and(NumOp::unary) => {
                match num_src(a) {
                    Some(a) => Ok(Step::Arith {
                        op: NumOp::of(name).expect("checked"),
                        a,
                        b: None,
                        out,
                    }),
                    None => Ok(python),
                }
            }
            (_, [a, b]) if number(kind(a)) && number(kind(b)) => {
                match (
                    NumOp::of(name).filter(|op| !op.unary()),
                    num_src(a),
                    num_src(b),
                ) {
                    (Some(op), Some(a), Some(b)) => Ok(Step::Arith {
                        op,
                        a,
                        b: Some(b),
                        out,
                    }),
                    _ => Ok(python),
                }
            }
            (_, [a, ..]) if kind(a) == Makes::Tensor => {
                let Ok(method) = self.operators.get_item(name, vm) else {
                    return Ok(python);
                };
                let method = method.str(vm)?.text(vm)?.to_owned();
                self.op_or_python(node, method_op(&method), args, kwargs, out)
            }
            _ => Ok(python),
        }
    }
}

impl Planner<'_> {
    /// An int of a subscript: a size node's slot, or a constant.
    fn int_item(&self, o: &PyObjectRef) -> Option<Src> {
        match node_of(o) {
            Some(n) if makes(n, self.vm) == Makes::Int => self.slot(n).map(Src::Slot),
            Some(_) => None,
            None if o.class().is(self.vm.ctx.types.bool_type) => None,
            None => o
                .downcast_ref::<PyInt>()?
                .try_to_primitive::<i64>(self.vm)
                .ok()
                .map(|i| Src::Const(Value::Int(i))),
        }
    }

    /// The items of a tensor subscript, or None for what only Python can
    /// read (boolean masks given as lists, steps from slots …).
    fn subscript_items(&self, index: &PyObjectRef) -> PyResult<Option<Vec<Item>>> {
        let vm = self.vm;
        let objects = match index.downcast_ref::<PyTuple>() {
            Some(t) => t.as_slice().to_vec(),
            None => vec![index.clone()],
        };
        let mut items = Vec::with_capacity(objects.len());
        for o in &objects {
            let item = if vm.is_none(o) {
                Item::NewAxis
            } else if o.is(&vm.ctx.ellipsis) {
                Item::Ellipsis
            } else if let Some(s) = o.downcast_ref::<rustpython_vm::builtins::PySlice>() {
                let bound = |b: Option<&PyObjectRef>| match b {
                    Some(b) if !vm.is_none(b) => self.int_item(b).map(Some),
                    _ => Some(None),
                };
                let step = match s.step.as_ref().filter(|x| !vm.is_none(x)) {
                    None => 1,
                    Some(x) => match x.downcast_ref::<PyInt>() {
                        Some(i) => i.try_to_primitive::<i64>(vm)?,
                        None => return Ok(None),
                    },
                };
                match (bound(s.start.as_ref()), bound(Some(&s.stop))) {
                    (Some(start), Some(stop)) => Item::Slice { start, stop, step },
                    _ => return Ok(None),
                }
            } else if let Some(n) = node_of(o) {
                let Some(slot) = self.slot(n) else {
                    return Ok(None);
                };
                match makes(n, vm) {
                    Makes::Int => Item::Int(Src::Slot(slot)),
                    Makes::Tensor => Item::Tensor(Src::Slot(slot)),
                    _ => return Ok(None),
                }
            } else if let Some(list) = super::value_items(o) {
                // `x[:, [-1], :]`: a list of int constants is an index tensor.
                let ints = list
                    .iter()
                    .map(|x| match self.int_item(x) {
                        Some(Src::Const(Value::Int(i))) => Some(i),
                        _ => None,
                    })
                    .collect::<Option<Vec<i64>>>();
                match ints {
                    Some(ints) if !ints.is_empty() => {
                        let n = ints.len();
                        Item::Tensor(Src::Const(Value::Tensor(fxvm_tensor::Tensor::from_vec(
                            ints,
                            &[n],
                        ))))
                    }
                    _ => return Ok(None),
                }
            } else if let Some(src) = self.int_item(o) {
                Item::Int(src)
            } else {
                return Ok(None);
            };
            items.push(item);
        }
        Ok(Some(items))
    }
}

/// The positional arguments and keywords of a node, with every node in
/// them replaced by its slot's value (for a Python step).
pub(crate) fn python_args(
    node: &Py<PyNode>,
    slots: &[V],
    slot_of: &HashMap<usize, usize>,
    vm: &VirtualMachine,
) -> PyResult<(Vec<PyObjectRef>, KwArgs)> {
    let args = node
        .args_tuple()
        .as_slice()
        .iter()
        .map(|a| substitute(a, slots, slot_of, vm))
        .collect::<PyResult<Vec<_>>>()?;
    let kwargs = substitute(&node.kwargs_dict().into(), slots, slot_of, vm)?;
    Ok((args, binding::kwargs(&kwargs, vm)))
}

/// `o` with nodes replaced by their values (tuples, lists, dicts, slices
/// rebuilt around them).
pub(crate) fn substitute(
    o: &PyObjectRef,
    slots: &[V],
    slot_of: &HashMap<usize, usize>,
    vm: &VirtualMachine,
) -> PyResult {
    if let Some(n) = node_of(o) {
        let slot = slot_of.get(&n.as_object().get_id()).ok_or_else(|| {
            vm.new_runtime_error(format!("replay: node {} has no value", n.name()))
        })?;
        return Ok(slots[*slot].to_py(vm));
    }
    if let Some(t) = o.downcast_ref::<PyTuple>() {
        let items = t
            .as_slice()
            .iter()
            .map(|x| substitute(x, slots, slot_of, vm))
            .collect::<PyResult<Vec<_>>>()?;
        if o.class().is(vm.ctx.types.tuple_type) {
            return Ok(vm.ctx.new_tuple(items).into());
        }
        return o.class().as_object().call((vm.ctx.new_tuple(items),), vm);
    }
    if let Some(items) = super::value_items(o) {
        let items = items
            .iter()
            .map(|x| substitute(x, slots, slot_of, vm))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(vm.ctx.new_list(items).into());
    }
    if let Some(d) = o.downcast_ref::<PyDict>() {
        let out = vm.ctx.new_dict();
        for (k, v) in d.items_vec() {
            out.set_item(&*k, substitute(&v, slots, slot_of, vm)?, vm)?;
        }
        return Ok(out.into());
    }
    if let Some(s) = o.downcast_ref::<rustpython_vm::builtins::PySlice>() {
        return fxvm_fx::args::map_slice(s, |x| substitute(x, slots, slot_of, vm), vm);
    }
    Ok(o.clone())
}
