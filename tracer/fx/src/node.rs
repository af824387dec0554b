//! `torch.fx.Node`: one operation of a graph, with its arguments, its users
//! and its place in the graph's doubly linked node list.

use indexmap::IndexMap;
use rustpython_vm::builtins::{PyDict, PyDictRef, PyList, PyStrRef, PyTuple, PyTupleRef};
use rustpython_vm::common::lock::PyRwLock;
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::types::Representable;
use rustpython_vm::{
    AsObject, FromArgs, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine,
    pyclass,
};

use super::args::{self, Leaf};
use super::graph::PyGraph;
use fxvm_vm::text::Utf8;

pub type NodeRef = PyRef<PyNode>;
/// Nodes keyed by identity, in insertion order (torch.fx's `dict[Node, None]`).
pub(crate) type NodeSet = IndexMap<usize, NodeRef>;

/// The six opcodes, and the graph's sentinel.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Op {
    Placeholder,
    CallFunction,
    CallMethod,
    CallModule,
    GetAttr,
    Output,
    Root,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Placeholder => "placeholder",
            Op::CallFunction => "call_function",
            Op::CallMethod => "call_method",
            Op::CallModule => "call_module",
            Op::GetAttr => "get_attr",
            Op::Output => "output",
            Op::Root => "root",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "placeholder" => Op::Placeholder,
            "call_function" => Op::CallFunction,
            "call_method" => Op::CallMethod,
            "call_module" => Op::CallModule,
            "get_attr" => Op::GetAttr,
            "output" => Op::Output,
            "root" => Op::Root,
            _ => return None,
        })
    }
}

/// `meta["nn_module_stack"]` and `meta["source_loc"]`, in the order
/// tracing sets them.
#[derive(Default)]
pub(crate) struct PendingMeta {
    module_stack: Option<PyDictRef>,
    source_loc: Option<String>,
}

pub(crate) struct NodeState {
    pub(crate) name: String,
    pub(crate) op: Op,
    pub(crate) target: PyObjectRef,
    pub(crate) args: PyTupleRef,
    pub(crate) kwargs: PyDictRef,
    pub(crate) inputs: NodeSet,
    pub(crate) users: NodeSet,
    pub(crate) ty: Option<PyObjectRef>,
    pub(crate) meta: Option<PyDictRef>,
    /// What tracing recorded for `meta` while `meta` has not been made:
    /// most traced nodes need no other entry, and a dict per node is a
    /// tracked object for RustPython's (slow) collector to scan.
    pub(crate) pending: PendingMeta,
    pub(crate) prev: Option<NodeRef>,
    pub(crate) next: Option<NodeRef>,
    pub(crate) erased: bool,
}

#[pyclass(module = "torch.fx.node", name = "Node", traverse = "manual")]
#[derive(PyPayload)]
pub struct PyNode {
    /// The owning `Graph` object (a Python subclass of the native graph).
    pub(crate) graph: PyObjectRef,
    pub(crate) s: PyRwLock<NodeState>,
}

// SAFETY: `traverse` visits each object a node owns exactly once: its graph,
// target, args, kwargs, type, meta, neighbours in the list, and the nodes of
// its input and user sets (each set holds a node once, keyed by identity);
// `clear` moves all of them out.
unsafe impl Traverse for PyNode {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.graph.traverse(f);
        // Nothing else holds the lock during a collection; if something
        // does, skipping only delays freeing.
        let Some(s) = self.s.try_read() else { return };
        s.target.traverse(f);
        s.args.traverse(f);
        s.kwargs.traverse(f);
        s.inputs.values().for_each(|n| n.traverse(f));
        s.users.values().for_each(|n| n.traverse(f));
        s.ty.traverse(f);
        s.meta.traverse(f);
        s.pending.module_stack.traverse(f);
        s.prev.traverse(f);
        s.next.traverse(f);
    }

    fn clear(&mut self, out: &mut Vec<PyObjectRef>) {
        let s = self.s.get_mut();
        out.extend(s.inputs.drain(..).map(|(_, n)| n.into()));
        out.extend(s.users.drain(..).map(|(_, n)| n.into()));
        out.extend(s.ty.take());
        out.extend(s.meta.take().map(Into::into));
        out.extend(s.pending.module_stack.take().map(Into::into));
        out.extend(s.prev.take().map(Into::into));
        out.extend(s.next.take().map(Into::into));
        // The graph, target, args and kwargs are not optional; the node is
        // unreachable and about to be freed, so they go with it.
    }
}

impl std::fmt::Debug for PyNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.s.read();
        write!(f, "Node({} {})", s.op.name(), s.name)
    }
}

pub(crate) fn id(n: &PyObject) -> usize {
    n.get_id()
}

impl PyNode {
    pub(crate) fn new(
        graph: PyObjectRef,
        name: String,
        op: Op,
        target: PyObjectRef,
        ty: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyNode {
        let state = NodeState {
            name,
            op,
            target,
            args: vm.ctx.empty_tuple.clone(),
            kwargs: vm.ctx.new_dict(),
            inputs: NodeSet::new(),
            users: NodeSet::new(),
            ty,
            meta: None,
            pending: PendingMeta::default(),
            prev: None,
            next: None,
            erased: false,
        };
        PyNode {
            graph,
            s: PyRwLock::new(state),
        }
    }

    pub(crate) fn owner(&self) -> &Py<PyGraph> {
        self.graph
            .downcast_ref::<PyGraph>()
            .expect("a node's graph is a Graph")
    }

    pub fn name(&self) -> String {
        self.s.read().name.clone()
    }

    pub fn op(&self) -> Op {
        self.s.read().op
    }

    pub fn target(&self) -> PyObjectRef {
        self.s.read().target.clone()
    }

    pub fn args_tuple(&self) -> PyTupleRef {
        self.s.read().args.clone()
    }

    pub fn kwargs_dict(&self) -> PyDictRef {
        self.s.read().kwargs.clone()
    }

    pub(crate) fn users_len(&self) -> usize {
        self.s.read().users.len()
    }

    pub(crate) fn users(&self) -> Vec<NodeRef> {
        self.s.read().users.values().cloned().collect()
    }

    pub(crate) fn inputs(&self) -> Vec<NodeRef> {
        self.s.read().inputs.values().cloned().collect()
    }

    pub(crate) fn ty(&self) -> Option<PyObjectRef> {
        self.s.read().ty.clone()
    }

    pub(crate) fn next_node(&self) -> NodeRef {
        self.s.read().next.clone().expect("linked node")
    }

    pub(crate) fn prev_node(&self) -> NodeRef {
        self.s.read().prev.clone().expect("linked node")
    }

    pub(crate) fn is_erased(&self) -> bool {
        self.s.read().erased
    }

    /// `node.meta`, created on first use (with the entries tracing left
    /// pending).
    pub(crate) fn meta(&self, vm: &VirtualMachine) -> PyDictRef {
        let mut s = self.s.write();
        if let Some(meta) = &s.meta {
            return meta.clone();
        }
        let meta = vm.ctx.new_dict();
        let pending = std::mem::take(&mut s.pending);
        if let Some(stack) = pending.module_stack {
            meta.set_item("nn_module_stack", stack.into(), vm)
                .expect("a str key in a fresh dict");
        }
        if let Some(loc) = pending.source_loc {
            meta.set_item("source_loc", vm.ctx.new_str(loc).into(), vm)
                .expect("a str key in a fresh dict");
        }
        s.meta = Some(meta.clone());
        meta
    }

    pub fn meta_get(&self, key: &str, vm: &VirtualMachine) -> Option<PyObjectRef> {
        {
            let s = self.s.read();
            match &s.meta {
                Some(meta) => return meta.get_item_opt(key, vm).ok().flatten(),
                None if key == "source_loc" => {
                    return s
                        .pending
                        .source_loc
                        .clone()
                        .map(|l| vm.ctx.new_str(l).into());
                }
                None if s.pending.module_stack.is_none() => return None,
                None => {}
            }
        }
        self.meta(vm).get_item_opt(key, vm).ok().flatten()
    }

    /// Records the modules the node was traced in (`meta["nn_module_stack"]`,
    /// a copy of the tracer's stack), without making `meta` when it does not
    /// exist yet.
    pub(crate) fn set_module_stack(&self, stack: PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
        let mut s = self.s.write();
        match &s.meta {
            Some(meta) => meta.set_item("nn_module_stack", stack.into(), vm),
            None => {
                s.pending.module_stack = Some(stack);
                Ok(())
            }
        }
    }

    /// Records where the node was traced (`meta["source_loc"]`), without
    /// making `meta` when it does not exist yet.
    pub(crate) fn set_source_loc(&self, loc: String, vm: &VirtualMachine) -> PyResult<()> {
        let mut s = self.s.write();
        match &s.meta {
            Some(meta) => meta.set_item("source_loc", vm.ctx.new_str(loc).into(), vm),
            None => {
                s.pending.source_loc = Some(loc);
                Ok(())
            }
        }
    }

    /// The node's example value: the first of `meta["val"]` (shape tracing),
    /// `meta["tensor_meta"]` (ShapeProp) and `meta["example_value"]` set.
    pub(crate) fn value_meta(&self, vm: &VirtualMachine) -> Option<PyObjectRef> {
        ["val", "tensor_meta", "example_value"]
            .iter()
            .find_map(|k| self.meta_get(k, vm).filter(|v| !vm.is_none(v)))
    }

    /// Stores new arguments (normalised as torch.fx stores them) and moves
    /// this node from the users of its old inputs to those of its new ones.
    pub(crate) fn set_args_kwargs(
        zelf: &Py<Self>,
        args: Option<PyObjectRef>,
        kwargs: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let containers = zelf.owner().containers(vm)?;
        let mut keep = |a: &PyObjectRef| Ok(a.clone());
        let mut normalize =
            |a: &PyObjectRef| args::map(a, &containers, &mut Leaf::Nodes(&mut keep), vm);
        let args = match args {
            Some(a) => match a.downcast::<PyTuple>() {
                Ok(t) if t.class().is(vm.ctx.types.tuple_type) && args::is_flat_tuple(&t) => t,
                Ok(t) => normalize(&t.into())?
                    .downcast()
                    .map_err(|_| vm.new_type_error("args must be a tuple"))?,
                Err(a) => normalize(&a)?
                    .downcast()
                    .map_err(|_| vm.new_type_error("args must be a tuple"))?,
            },
            None => zelf.args_tuple(),
        };
        let kwargs = match kwargs {
            Some(k) => {
                let d = normalize(&k)?;
                d.downcast::<PyDict>()
                    .map_err(|_| vm.new_type_error("kwargs must be a dict"))?
            }
            None => zelf.kwargs_dict(),
        };
        let mut inputs = NodeSet::new();
        let mut collect = |n: &PyObject| {
            let node = n.to_owned().downcast::<PyNode>().expect("visited a node");
            inputs.entry(id(n)).or_insert(node);
        };
        args::visit_nodes(args.as_object(), &mut collect);
        args::visit_nodes(kwargs.as_object(), &mut collect);
        let me = id(zelf.as_object());
        let old = {
            let mut s = zelf.s.write();
            s.args = args;
            s.kwargs = kwargs;
            std::mem::replace(&mut s.inputs, inputs.clone())
        };
        for n in old.values() {
            n.s.write().users.shift_remove(&me);
        }
        for n in inputs.values() {
            n.s.write().users.insert(me, zelf.to_owned());
        }
        Ok(())
    }

    /// Replaces every use of `old` in this node's arguments with `new`.
    pub(crate) fn replace_input(
        zelf: &Py<Self>,
        old: &PyObject,
        new: &PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let containers = zelf.owner().containers(vm)?;
        let mut swap = |a: &PyObjectRef| Ok(if a.is(old) { new.clone() } else { a.clone() });
        let args = args::map(
            &zelf.args_tuple().into(),
            &containers,
            &mut Leaf::Nodes(&mut swap),
            vm,
        )?;
        let kwargs = args::map(
            &zelf.kwargs_dict().into(),
            &containers,
            &mut Leaf::Nodes(&mut swap),
            vm,
        )?;
        Self::set_args_kwargs(zelf, Some(args), Some(kwargs), vm)
    }

    /// Unlinks this node from the list; its own links stay, so that an
    /// iterator standing on it can still move on.
    pub(crate) fn unlink(&self) {
        let (prev, next) = {
            let s = self.s.read();
            (s.prev.clone(), s.next.clone())
        };
        if let (Some(p), Some(n)) = (prev, next) {
            p.s.write().next = Some(n.clone());
            n.s.write().prev = Some(p);
        }
    }

    /// Links `x` just before this node.
    pub(crate) fn link_before(zelf: &Py<Self>, x: &NodeRef) {
        if zelf.is(x) {
            return;
        }
        x.unlink();
        let p = zelf.prev_node();
        p.s.write().next = Some(x.clone());
        {
            let mut xs = x.s.write();
            xs.prev = Some(p);
            xs.next = Some(zelf.to_owned());
        }
        zelf.s.write().prev = Some(x.clone());
    }

    fn check_same_graph(zelf: &Py<Self>, x: &PyNode, vm: &VirtualMachine) -> PyResult<()> {
        if !zelf.graph.is(&x.graph) {
            return Err(super::assertion(
                vm,
                "Attempting to move a Node into a different Graph".to_owned(),
            ));
        }
        Ok(())
    }

    fn owning_module_hooks(&self, attr: &str, vm: &VirtualMachine) -> PyResult<Vec<PyObjectRef>> {
        let Some(m) = self.owner().owning_module() else {
            return Ok(vec![]);
        };
        match super::attr(&m, attr, vm)? {
            Some(hooks) if !vm.is_none(&hooks) => hooks.try_to_value(vm),
            _ => Ok(vec![]),
        }
    }
}

#[pyclass(flags(HAS_DICT, DISALLOW_INSTANTIATION), with(Representable))]
impl PyNode {
    #[pygetset]
    fn graph(&self) -> PyObjectRef {
        self.graph.clone()
    }

    #[pygetset(name = "name")]
    fn get_name(&self) -> String {
        self.name()
    }

    #[pygetset(setter, name = "name")]
    fn set_name(zelf: &Py<Self>, value: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
        let hooks = zelf.owning_module_hooks("_replace_hooks", vm)?;
        for user in zelf.users() {
            call_replace_hooks(
                &hooks,
                zelf.to_owned().into(),
                value.clone().into(),
                user.into(),
                vm,
            )?;
        }
        zelf.s.write().name = value.text(vm)?.to_owned();
        Ok(())
    }

    #[pygetset(name = "op")]
    fn get_op(&self) -> &'static str {
        self.op().name()
    }

    #[pygetset(setter, name = "op")]
    fn set_op(&self, value: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
        let op = Op::parse(value.text(vm)?).ok_or_else(|| {
            vm.new_value_error(format!("op '{}' is not in _legal_ops", value.lossy()))
        })?;
        self.s.write().op = op;
        Ok(())
    }

    #[pygetset(name = "target")]
    fn get_target(&self) -> PyObjectRef {
        self.target()
    }

    #[pygetset(setter, name = "target")]
    fn set_target(&self, value: PyObjectRef) {
        self.s.write().target = value;
    }

    #[pygetset(name = "args")]
    fn get_args(&self) -> PyTupleRef {
        self.args_tuple()
    }

    #[pygetset(setter, name = "args")]
    fn set_args(zelf: &Py<Self>, value: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        Self::set_args_kwargs(zelf, Some(value), None, vm)
    }

    #[pygetset(name = "kwargs")]
    fn get_kwargs(&self) -> PyDictRef {
        self.kwargs_dict()
    }

    #[pygetset(setter, name = "kwargs")]
    fn set_kwargs(zelf: &Py<Self>, value: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        Self::set_args_kwargs(zelf, None, Some(value), vm)
    }

    #[pygetset(name = "users")]
    fn get_users(&self, vm: &VirtualMachine) -> PyResult<PyDictRef> {
        let d = vm.ctx.new_dict();
        for u in self.users() {
            d.set_item(u.as_object(), vm.ctx.none(), vm)?;
        }
        Ok(d)
    }

    #[pygetset]
    fn all_input_nodes(&self, vm: &VirtualMachine) -> PyRef<PyList> {
        vm.ctx
            .new_list(self.inputs().into_iter().map(Into::into).collect())
    }

    #[pygetset]
    fn _input_nodes(&self, vm: &VirtualMachine) -> PyResult<PyDictRef> {
        let d = vm.ctx.new_dict();
        for n in self.inputs() {
            d.set_item(n.as_object(), vm.ctx.none(), vm)?;
        }
        Ok(d)
    }

    #[pygetset(name = "meta")]
    fn get_meta(&self, vm: &VirtualMachine) -> PyDictRef {
        self.meta(vm)
    }

    #[pygetset(setter, name = "meta")]
    fn set_meta(&self, value: PyDictRef) {
        let mut s = self.s.write();
        s.meta = Some(value);
        s.pending = PendingMeta::default();
    }

    #[pygetset(name = "type")]
    fn get_type(&self, vm: &VirtualMachine) -> PyObjectRef {
        self.ty().unwrap_or_else(|| vm.ctx.none())
    }

    #[pygetset(setter, name = "type")]
    fn set_type(&self, value: PyObjectRef, vm: &VirtualMachine) {
        self.s.write().ty = (!vm.is_none(&value)).then_some(value);
    }

    #[pygetset]
    fn next(&self) -> NodeRef {
        self.next_node()
    }

    #[pygetset]
    fn prev(&self) -> NodeRef {
        self.prev_node()
    }

    #[pygetset]
    fn _next(&self) -> NodeRef {
        self.next_node()
    }

    #[pygetset]
    fn _prev(&self) -> NodeRef {
        self.prev_node()
    }

    #[pygetset(name = "_erased")]
    fn get_erased(&self) -> bool {
        self.is_erased()
    }

    #[pygetset(setter, name = "_erased")]
    fn set_erased(&self, value: bool) {
        self.s.write().erased = value;
    }

    #[pygetset(name = "stack_trace")]
    fn get_stack_trace(&self, vm: &VirtualMachine) -> PyObjectRef {
        self.meta_get("stack_trace", vm)
            .unwrap_or_else(|| vm.ctx.none())
    }

    #[pygetset(setter, name = "stack_trace")]
    fn set_stack_trace(&self, value: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        self.meta(vm).set_item("stack_trace", value, vm)
    }

    /// Inserts `x` before this node in the graph's node list.
    #[pymethod]
    fn prepend(zelf: &Py<Self>, x: NodeRef, vm: &VirtualMachine) -> PyResult<()> {
        Self::check_same_graph(zelf, &x, vm)?;
        Self::link_before(zelf, &x);
        Ok(())
    }

    /// Inserts `x` after this node (`self.next.prepend(x)`).
    #[pymethod]
    fn append(zelf: &Py<Self>, x: NodeRef, vm: &VirtualMachine) -> PyResult<()> {
        Self::check_same_graph(zelf, &x, vm)?;
        if zelf.is(&x) {
            return Ok(());
        }
        Self::link_before(&zelf.next_node(), &x);
        Ok(())
    }

    #[pymethod]
    fn _remove_from_list(&self) {
        self.unlink();
    }

    #[pymethod]
    fn update_arg(
        zelf: &Py<Self>,
        idx: isize,
        arg: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let mut args = zelf.args_tuple().as_slice().to_vec();
        let len = args.len() as isize;
        let i = if idx < 0 { idx + len } else { idx };
        if !(0..len).contains(&i) {
            return Err(vm.new_index_error("list assignment index out of range"));
        }
        args[i as usize] = arg;
        Self::set_args_kwargs(zelf, Some(vm.ctx.new_tuple(args).into()), None, vm)
    }

    #[pymethod]
    fn insert_arg(
        zelf: &Py<Self>,
        idx: usize,
        arg: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let mut args = zelf.args_tuple().as_slice().to_vec();
        if idx > args.len() {
            return Err(super::assertion(
                vm,
                format!("insert_args index must be between 0 and len(self.args), got {idx}"),
            ));
        }
        args.insert(idx, arg);
        Self::set_args_kwargs(zelf, Some(vm.ctx.new_tuple(args).into()), None, vm)
    }

    #[pymethod]
    fn update_kwarg(
        zelf: &Py<Self>,
        key: PyStrRef,
        arg: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let d = vm.ctx.new_dict();
        for (k, v) in zelf.kwargs_dict().items_vec() {
            d.set_item(&*k, v, vm)?;
        }
        d.set_item(key.text(vm)?, arg, vm)?;
        Self::set_args_kwargs(zelf, None, Some(d.into()), vm)
    }

    /// Replaces all uses of this node with `replace_with`; returns the users changed.
    #[pymethod]
    fn replace_all_uses_with(
        zelf: &Py<Self>,
        a: ReplaceAllUsesArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<PyList>> {
        let (replace_with, delete_user_cb) = (a.replace_with, a.delete_user_cb);
        let propagate = a.propagate_meta.unwrap_or(false);
        let new = replace_with
            .clone()
            .downcast::<PyNode>()
            .map_err(|_| vm.new_type_error("replace_all_uses_with expects a Node"))?;
        if propagate {
            let target = new.meta(vm);
            if target.__len__() != 0 {
                return Err(super::assertion(vm, "Called node.replace_all_uses_with(replace_with, propagate_meta=True), but replace_with already has .meta keys".to_owned(),
                ));
            }
            for (k, v) in zelf.meta(vm).items_vec() {
                target.set_item(&*k, v, vm)?;
            }
        }
        let cb = delete_user_cb.into_option().filter(|cb| !vm.is_none(cb));
        let hooks = zelf.owning_module_hooks("_replace_hooks", vm)?;
        let mut changed = vec![];
        for user in zelf.users() {
            if let Some(cb) = &cb
                && !cb.call((user.clone(),), vm)?.try_to_bool(vm)?
            {
                continue;
            }
            call_replace_hooks(
                &hooks,
                zelf.to_owned().into(),
                vm.ctx.new_str(new.name()).into(),
                user.clone().into(),
                vm,
            )?;
            PyNode::replace_input(&user, zelf.as_object(), &replace_with, vm)?;
            changed.push(user.into());
        }
        Ok(vm.ctx.new_list(changed))
    }

    #[pymethod]
    fn replace_input_with(
        zelf: &Py<Self>,
        old_input: NodeRef,
        new_input: NodeRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let hooks = zelf.owning_module_hooks("_replace_hooks", vm)?;
        call_replace_hooks(
            &hooks,
            old_input.clone().into(),
            vm.ctx.new_str(new_input.name()).into(),
            zelf.to_owned().into(),
            vm,
        )?;
        Self::replace_input(zelf, old_input.as_object(), &new_input.into(), vm)
    }

    #[pymethod]
    fn _replace_input_with(
        zelf: &Py<Self>,
        old_input: NodeRef,
        new_input: NodeRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        Self::replace_input(zelf, old_input.as_object(), &new_input.into(), vm)
    }

    /// Renames to a fresh name derived from `candidate`.
    #[pymethod]
    fn _rename(zelf: &Py<Self>, candidate: PyStrRef, vm: &VirtualMachine) -> PyResult<()> {
        let candidate = candidate.text(vm)?;
        if candidate == zelf.name() {
            return Ok(());
        }
        let name = zelf.owner().rename(zelf, candidate, vm);
        zelf.s.write().name = name;
        Ok(())
    }

    /// Whether dead-code elimination must keep this node.
    #[pymethod]
    fn is_impure(zelf: &Py<Self>, a: IsImpureArgs, vm: &VirtualMachine) -> PyResult<bool> {
        Self::impure(zelf, a.impure_random.unwrap_or(true), vm)
    }
}

impl PyNode {
    /// See `is_impure`: placeholders, outputs, impure modules and functions
    /// (random ones when `impure_random`).
    pub(crate) fn impure(
        zelf: &Py<Self>,
        impure_random: bool,
        vm: &VirtualMachine,
    ) -> PyResult<bool> {
        match zelf.op() {
            Op::Placeholder | Op::Output => Ok(true),
            Op::CallModule => {
                let Some(m) = zelf.owner().owning_module() else {
                    return Err(super::assertion(
                        vm,
                        "self.graph.owning_module not set for purity check".to_owned(),
                    ));
                };
                let sub = vm.call_method(&m, "get_submodule", (zelf.target(),))?;
                match vm.get_attribute_opt(sub, "_is_impure")? {
                    Some(v) => v.try_to_bool(vm),
                    None => Ok(false),
                }
            }
            Op::CallFunction => {
                let node_mod = vm
                    .import("torch.fx.node", 0)?
                    .get_attr("fx", vm)?
                    .get_attr("node", vm)?;
                node_mod
                    .get_attr("_is_impure_function", vm)?
                    .call((zelf.target(), impure_random), vm)?
                    .try_to_bool(vm)
            }
            _ => Ok(false),
        }
    }
}

/// Tells an owning GraphModule's `_replace_hooks` that `user` will read
/// `new` (a name) where it read `old`.
fn call_replace_hooks(
    hooks: &[PyObjectRef],
    old: PyObjectRef,
    new: PyObjectRef,
    user: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    for hook in hooks {
        let kw: rustpython_vm::function::KwArgs = [
            ("old".to_owned(), old.clone()),
            ("new".to_owned(), new.clone()),
            ("user".to_owned(), user.clone()),
        ]
        .into_iter()
        .collect();
        hook.call(FuncArgs::new(vec![], kw), vm)?;
    }
    Ok(())
}

#[derive(FromArgs)]
struct ReplaceAllUsesArgs {
    #[pyarg(any)]
    replace_with: PyObjectRef,
    #[pyarg(any, optional)]
    delete_user_cb: OptionalArg<PyObjectRef>,
    #[pyarg(named, optional)]
    propagate_meta: OptionalArg<bool>,
}

#[derive(FromArgs)]
struct IsImpureArgs {
    #[pyarg(any, optional)]
    impure_random: OptionalArg<bool>,
}

impl Representable for PyNode {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(zelf.name())
    }
}
