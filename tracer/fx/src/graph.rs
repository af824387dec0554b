//! `torch.fx.Graph`'s native half: the node list, node creation and naming,
//! erasure, insertion points and lookups. `torch/fx/graph.py` subclasses it
//! with the parts that talk to modules (warnings, lint, dead code, copies).

use std::sync::OnceLock;

use rustpython_vm::builtins::{PyDictRef, PyStrRef, PyTupleRef, PyType};
use rustpython_vm::common::lock::PyMutex;
use rustpython_vm::function::{FuncArgs, KwArgs, OptionalArg};
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::protocol::PyIterReturn;
use rustpython_vm::protocol::PySequenceMethods;
use rustpython_vm::types::{AsSequence, Constructor, IterNext, Iterable, SelfIter};
use rustpython_vm::{
    AsObject, FromArgs, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, atomic_func,
    pyclass,
};

use super::args::Containers;
use super::namespace::{Namespace, Reserved, snake_case};
use super::node::{NodeRef, Op, PyNode, id};
use fxvm_vm::text::Utf8;

/// Where `create_node` puts new nodes (torch.fx's `graph._insert`).
#[derive(Clone)]
enum Insert {
    /// At the end of the graph.
    End,
    Before(NodeRef),
    After(NodeRef),
}

#[derive(Default)]
struct GraphState {
    root: Option<NodeRef>,
    len: usize,
    names: Namespace,
    insert: Option<Insert>,
    owning_module: Option<PyObjectRef>,
    containers: Option<Containers>,
    empty_kwargs: Option<PyDictRef>,
}

#[pyclass(module = "torch.fx.graph", name = "_GraphBase", traverse = "manual")]
#[derive(PyPayload, Default)]
pub(crate) struct PyGraph {
    s: PyMutex<GraphState>,
}

impl Insert {
    fn node(&self) -> Option<&NodeRef> {
        match self {
            Insert::End => None,
            Insert::Before(n) | Insert::After(n) => Some(n),
        }
    }
}

// SAFETY: `traverse` visits each object the state owns exactly once (the root
// node, the insertion node, the owning module, the two container types, the
// shared empty kwargs), and `clear` moves every one of them out.
unsafe impl Traverse for PyGraph {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        // During a collection nothing else holds the lock; if something does,
        // skipping only delays freeing (the GC's contract for locked payloads).
        let Some(s) = self.s.try_lock() else { return };
        s.root.traverse(f);
        if let Some(n) = s.insert.as_ref().and_then(Insert::node) {
            n.traverse(f);
        }
        s.owning_module.traverse(f);
        if let Some(c) = &s.containers {
            c.list.traverse(f);
            c.dict.traverse(f);
        }
        s.empty_kwargs.traverse(f);
    }

    fn clear(&mut self, out: &mut Vec<PyObjectRef>) {
        let s = self.s.get_mut();
        out.extend(s.root.take().map(Into::into));
        if let Some(Insert::Before(n) | Insert::After(n)) = s.insert.take() {
            out.push(n.into());
        }
        out.extend(s.owning_module.take());
        if let Some(c) = s.containers.take() {
            out.push(c.list.into());
            out.push(c.dict.into());
        }
        out.extend(s.empty_kwargs.take().map(Into::into));
    }
}

impl std::fmt::Debug for PyGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Graph({} nodes)", self.s.lock().len)
    }
}

/// Keywords, builtins and the generated module's globals: names a node may not take.
pub(crate) fn reserved(vm: &VirtualMachine) -> &'static Reserved {
    static RESERVED: OnceLock<Reserved> = OnceLock::new();
    RESERVED.get_or_init(|| {
        let builtins: Vec<String> = vm
            .builtins
            .dict()
            .keys_vec()
            .iter()
            .filter_map(|k| {
                k.downcast_ref::<rustpython_vm::builtins::PyStr>()
                    .and_then(|s| s.to_str())
                    .map(str::to_owned)
            })
            .collect();
        Reserved::new(builtins.iter().map(String::as_str))
    })
}

fn type_name(obj: &PyObjectRef, vm: &VirtualMachine) -> String {
    let class: PyObjectRef = obj.class().to_owned().into();
    class
        .repr(vm)
        .map(|s| s.lossy().into_owned())
        .unwrap_or_default()
}

impl PyGraph {
    /// The sentinel that closes the node list (created on first use, as it
    /// must point back at this graph object).
    pub(crate) fn root(zelf: &Py<Self>, vm: &VirtualMachine) -> NodeRef {
        if let Some(r) = zelf.s.lock().root.clone() {
            return r;
        }
        let root = PyNode::new(
            zelf.to_owned().into(),
            String::new(),
            Op::Root,
            vm.ctx.new_str("").into(),
            None,
            vm,
        )
        .into_ref(&vm.ctx);
        {
            let mut s = root.s.write();
            s.prev = Some(root.clone());
            s.next = Some(root.clone());
        }
        zelf.s.lock().root = Some(root.clone());
        root
    }

    pub(crate) fn owning_module(&self) -> Option<PyObjectRef> {
        self.s.lock().owning_module.clone()
    }

    pub(crate) fn containers(&self, vm: &VirtualMachine) -> PyResult<Containers> {
        if let Some(c) = self.s.lock().containers.clone() {
            return Ok(c);
        }
        let c = Containers::load(vm)?;
        self.s.lock().containers = Some(c.clone());
        Ok(c)
    }

    /// The nodes in order, skipping erased ones.
    pub(crate) fn node_vec(zelf: &Py<Self>, vm: &VirtualMachine) -> Vec<NodeRef> {
        let root = Self::root(zelf, vm);
        let mut out = Vec::with_capacity(zelf.s.lock().len);
        let mut cur = root.next_node();
        while !cur.is(&root) {
            if !cur.is_erased() {
                out.push(cur.clone());
            }
            cur = cur.next_node();
        }
        out
    }

    /// Removes `to_erase` (which nothing may use any more), with torch.fx's
    /// checks and the owning module's erase hooks; its arguments let go of
    /// their nodes.
    pub(crate) fn erase(zelf: &Py<Self>, to_erase: NodeRef, vm: &VirtualMachine) -> PyResult<()> {
        let users = to_erase.users_len();
        if users > 0 {
            let users_repr = to_erase.as_object().get_attr("users", vm)?.repr(vm)?;
            return Err(vm.new_runtime_error(format!(
                "Tried to erase Node {} but it still had {users} users in the graph: {}!",
                to_erase.as_object().str(vm)?.text(vm)?,
                users_repr.text(vm)?
            )));
        }
        if !to_erase.graph.is(zelf) {
            return Err(vm.new_runtime_error(format!(
                "Attempting to remove {} from wrong graph!",
                to_erase.as_object().str(vm)?.text(vm)?
            )));
        }
        if to_erase.is_erased() {
            let warnings = vm.import("warnings", 0)?;
            vm.call_method(
                &warnings,
                "warn",
                (format!(
                    "erase_node({}) on an already erased node",
                    to_erase.name()
                ),),
            )?;
            return Ok(());
        }
        if let Some(m) = zelf.owning_module()
            && let Some(hooks) = vm.get_attribute_opt(m, "_erase_node_hooks")?
            && !vm.is_none(&hooks)
        {
            for hook in hooks.try_to_value::<Vec<PyObjectRef>>(vm)? {
                hook.call((to_erase.clone(),), vm)?;
            }
        }
        to_erase.unlink();
        to_erase.s.write().erased = true;
        zelf.s.lock().len -= 1;
        let containers = zelf.containers(vm)?;
        let none = vm.ctx.none();
        let mut to_none = |_: &PyObjectRef| Ok(none.clone());
        let args = super::args::map(
            &to_erase.args_tuple().into(),
            &containers,
            &mut super::args::Leaf::Nodes(&mut to_none),
            vm,
        )?;
        let kwargs = super::args::map(
            &to_erase.kwargs_dict().into(),
            &containers,
            &mut super::args::Leaf::Nodes(&mut to_none),
            vm,
        )?;
        PyNode::set_args_kwargs(&to_erase, Some(args), Some(kwargs), vm)
    }

    pub(crate) fn rename(&self, node: &Py<PyNode>, candidate: &str, vm: &VirtualMachine) -> String {
        let reserved = reserved(vm);
        let mut s = self.s.lock();
        let name = s
            .names
            .create_name(candidate, None, |n| reserved.contains(n));
        s.names.rename(id(node.as_object()), &name);
        name
    }

    /// `_target_to_str`: the name a node calling `target` starts from.
    pub(crate) fn target_to_str(target: &PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        if let Some(s) = target.downcast_ref::<rustpython_vm::builtins::PyStr>() {
            let s = s.text(vm)?;
            let op = if s.len() >= 4 && s.starts_with("__") && s.ends_with("__") {
                &s[2..s.len() - 2]
            } else {
                s
            };
            return Ok(snake_case(op));
        }
        if target.is_callable() {
            let name = target.get_attr("__name__", vm)?;
            return Ok(snake_case(name.str(vm)?.text(vm)?));
        }
        Err(super::assertion(
            vm,
            format!("Expected target to be str, got {}", type_name(target, vm)),
        ))
    }

    /// `Graph.create_node`, shared by every node-making method.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn create(
        zelf: &Py<Self>,
        op: &str,
        target: PyObjectRef,
        args: Option<PyObjectRef>,
        kwargs: Option<PyObjectRef>,
        name: Option<PyStrRef>,
        ty: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<NodeRef> {
        let args = args.filter(|a| a.clone().try_to_bool(vm).unwrap_or(true));
        if let Some(a) = &args
            && !a.class().fast_issubclass(vm.ctx.types.tuple_type)
        {
            return Err(super::assertion(
                vm,
                format!("args must be a tuple, got {}", type_name(a, vm)),
            ));
        }
        let kwargs = kwargs.filter(|k| k.clone().try_to_bool(vm).unwrap_or(true));
        if let Some(k) = &kwargs
            && !k.class().fast_issubclass(vm.ctx.types.dict_type)
        {
            return Err(super::assertion(
                vm,
                format!("kwargs must be a dict, got {}", type_name(k, vm)),
            ));
        }
        let candidate = match &name {
            Some(n) => n.text(vm)?.to_owned(),
            None => Self::target_to_str(&target, vm)?,
        };
        let reserved = reserved(vm);
        let name = zelf
            .s
            .lock()
            .names
            .create_name(&candidate, None, |n| reserved.contains(n));
        let op = match Op::parse(op) {
            Some(Op::Root) | None => {
                return Err(super::assertion(
                    vm,
                    format!("op '{op}' is not in _legal_ops"),
                ));
            }
            Some(op) => op,
        };
        let graph: PyObjectRef = zelf.to_owned().into();
        let wrong = match op {
            Op::CallFunction => (!target.is_callable()).then_some("a Callable"),
            _ => target
                .downcast_ref::<rustpython_vm::builtins::PyStr>()
                .is_none()
                .then_some("a str"),
        };
        if let Some(expected) = wrong {
            let torch = vm.import("torch", 0)?;
            let tname = vm.call_method(&torch, "typename", (target.clone(),))?;
            return Err(vm.new_value_error(format!(
                "Node [graph = {}, name = '{name}'] target {} has type {} but {expected} is expected",
                graph.str(vm)?.text(vm)?,
                target.str(vm)?.text(vm)?,
                tname.str(vm)?.text(vm)?
            )));
        }
        let node = PyNode::new(graph, name.clone(), op, target, ty, vm).into_ref(&vm.ctx);
        let empty = { zelf.s.lock().empty_kwargs.clone() };
        let kwargs = match (kwargs, empty) {
            (Some(k), _) => Some(k),
            (None, Some(e)) => {
                node.s.write().kwargs = e;
                None
            }
            (None, None) => {
                let e = zelf.containers(vm)?.dict.as_object().call((), vm)?;
                let e: PyDictRef = e
                    .downcast()
                    .map_err(|_| vm.new_type_error("immutable_dict is not a dict"))?;
                zelf.s.lock().empty_kwargs = Some(e.clone());
                node.s.write().kwargs = e;
                None
            }
        };
        if args.is_some() || kwargs.is_some() {
            PyNode::set_args_kwargs(&node, args, kwargs, vm)?;
        }
        if let Some(m) = zelf.owning_module()
            && let Some(hooks) = vm.get_attribute_opt(m, "_create_node_hooks")?
            && !vm.is_none(&hooks)
        {
            for hook in hooks.try_to_value::<Vec<PyObjectRef>>(vm)? {
                hook.call((node.clone(),), vm)?;
            }
        }
        let insert = {
            let mut s = zelf.s.lock();
            s.names.associate(&name, id(node.as_object()));
            s.len += 1;
            s.insert.clone().unwrap_or(Insert::End)
        };
        match insert {
            Insert::End => PyNode::link_before(&Self::root(zelf, vm), &node),
            Insert::Before(n) => PyNode::link_before(&n, &node),
            Insert::After(n) => PyNode::link_before(&n.next_node(), &node),
        }
        Ok(node)
    }

    fn insert_point(zelf: &Py<Self>, insert: Insert, vm: &VirtualMachine) -> PyRef<InsertPoint> {
        let saved = zelf.s.lock().insert.replace(insert);
        InsertPoint {
            graph: zelf.to_owned(),
            saved: PyMutex::new(saved),
        }
        .into_ref(&vm.ctx)
    }

    fn check_owner(zelf: &Py<Self>, n: &PyNode, what: &str, vm: &VirtualMachine) -> PyResult<()> {
        if !n.graph.is(zelf) {
            return Err(super::assertion(
                vm,
                format!("Node to insert {what} is not in graph."),
            ));
        }
        Ok(())
    }
}

#[derive(FromArgs)]
struct CreateNodeArgs {
    #[pyarg(any)]
    op: PyStrRef,
    #[pyarg(any)]
    target: PyObjectRef,
    #[pyarg(any, optional)]
    args: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    kwargs: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    name: OptionalArg<Option<PyStrRef>>,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct PlaceholderArgs {
    #[pyarg(any)]
    name: PyStrRef,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    default_value: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct CallFunctionArgs {
    #[pyarg(any)]
    the_function: PyObjectRef,
    #[pyarg(any, optional)]
    args: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    kwargs: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    name: OptionalArg<Option<PyStrRef>>,
}

#[derive(FromArgs)]
struct CallMethodArgs {
    #[pyarg(any)]
    method_name: PyStrRef,
    #[pyarg(any, optional)]
    args: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    kwargs: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct OutputArgs {
    #[pyarg(any)]
    result: PyObjectRef,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct InsertArgs {
    #[pyarg(any, optional)]
    n: OptionalArg<Option<NodeRef>>,
}

impl Constructor for PyGraph {
    type Args = FuncArgs;

    fn py_new(_cls: &Py<PyType>, _args: FuncArgs, _vm: &VirtualMachine) -> PyResult<Self> {
        Ok(PyGraph::default())
    }
}

fn opt(a: OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    a.into_option().filter(|x| !vm.is_none(x))
}

#[pyclass(flags(BASETYPE, HAS_DICT), with(Constructor))]
impl PyGraph {
    #[pygetset(name = "owning_module")]
    fn get_owning_module(&self, vm: &VirtualMachine) -> PyObjectRef {
        self.owning_module().unwrap_or_else(|| vm.ctx.none())
    }

    #[pygetset(setter, name = "owning_module")]
    fn set_owning_module(&self, value: PyObjectRef, vm: &VirtualMachine) {
        self.s.lock().owning_module = (!vm.is_none(&value)).then_some(value);
    }

    #[pygetset]
    fn _root(zelf: &Py<Self>, vm: &VirtualMachine) -> NodeRef {
        Self::root(zelf, vm)
    }

    #[pygetset]
    fn _len(&self) -> usize {
        self.s.lock().len
    }

    /// A live view of the nodes: iterating stays safe while nodes are erased.
    #[pygetset]
    fn nodes(zelf: PyRef<Self>) -> NodeList {
        NodeList {
            graph: zelf,
            reverse: false,
        }
    }

    #[pymethod]
    fn _target_to_str(&self, target: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        Self::target_to_str(&target, vm)
    }

    #[pymethod]
    fn create_node(zelf: &Py<Self>, a: CreateNodeArgs, vm: &VirtualMachine) -> PyResult<NodeRef> {
        Self::create(
            zelf,
            a.op.text(vm)?,
            a.target,
            opt(a.args, vm),
            opt(a.kwargs, vm),
            a.name.flatten(),
            opt(a.type_expr, vm),
            vm,
        )
    }

    #[pymethod]
    fn placeholder(zelf: &Py<Self>, a: PlaceholderArgs, vm: &VirtualMachine) -> PyResult<NodeRef> {
        // `inspect.Signature.empty` (the default) means "no default value".
        let default = a.default_value.into_option().filter(|d| {
            d.downcast_ref::<PyType>()
                .is_none_or(|t| t.name().to_string() != "_empty")
        });
        let args = default.map(|d| vm.ctx.new_tuple(vec![d]).into());
        Self::create(
            zelf,
            "placeholder",
            a.name.into(),
            args,
            None,
            None,
            opt(a.type_expr, vm),
            vm,
        )
    }

    #[pymethod]
    fn call_function(
        zelf: &Py<Self>,
        a: CallFunctionArgs,
        vm: &VirtualMachine,
    ) -> PyResult<NodeRef> {
        Self::create(
            zelf,
            "call_function",
            a.the_function,
            opt(a.args, vm),
            opt(a.kwargs, vm),
            a.name.flatten(),
            opt(a.type_expr, vm),
            vm,
        )
    }

    #[pymethod]
    fn call_method(zelf: &Py<Self>, a: CallMethodArgs, vm: &VirtualMachine) -> PyResult<NodeRef> {
        Self::create(
            zelf,
            "call_method",
            a.method_name.into(),
            opt(a.args, vm),
            opt(a.kwargs, vm),
            None,
            opt(a.type_expr, vm),
            vm,
        )
    }

    #[pymethod]
    fn output(zelf: &Py<Self>, a: OutputArgs, vm: &VirtualMachine) -> PyResult<NodeRef> {
        let args: PyTupleRef = vm.ctx.new_tuple(vec![a.result]);
        Self::create(
            zelf,
            "output",
            vm.ctx.new_str("output").into(),
            Some(args.into()),
            None,
            None,
            opt(a.type_expr, vm),
            vm,
        )
    }

    #[pymethod]
    fn output_node(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<NodeRef> {
        let last = Self::node_vec(zelf, vm)
            .pop()
            .ok_or_else(|| vm.new_stop_iteration(None))?;
        if last.op() != Op::Output {
            return Err(super::assertion(
                vm,
                format!("Expected output node, got op={}", last.op().name()),
            ));
        }
        Ok(last)
    }

    /// Removes a node that nothing uses any more.
    #[pymethod]
    fn erase_node(zelf: &Py<Self>, to_erase: NodeRef, vm: &VirtualMachine) -> PyResult<()> {
        Self::erase(zelf, to_erase, vm)
    }

    /// `with graph.inserting_before(n):` — new nodes go before `n`
    /// (at the start of the graph when `n` is None).
    #[pymethod]
    fn inserting_before(
        zelf: &Py<Self>,
        a: InsertArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<InsertPoint>> {
        match a.n.flatten() {
            None => Ok(Self::insert_point(
                zelf,
                Insert::After(Self::root(zelf, vm)),
                vm,
            )),
            Some(n) => {
                Self::check_owner(zelf, &n, "before", vm)?;
                Ok(Self::insert_point(zelf, Insert::Before(n), vm))
            }
        }
    }

    /// `with graph.inserting_after(n):` — each new node goes right after `n`
    /// (at the end of the graph when `n` is None).
    #[pymethod]
    fn inserting_after(
        zelf: &Py<Self>,
        a: InsertArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<InsertPoint>> {
        match a.n.flatten() {
            None => Ok(Self::insert_point(
                zelf,
                Insert::Before(Self::root(zelf, vm)),
                vm,
            )),
            Some(n) => {
                Self::check_owner(zelf, &n, "after", vm)?;
                Ok(Self::insert_point(zelf, Insert::After(n), vm))
            }
        }
    }

    /// Nodes with `op` (and `target`), in graph order.
    #[pymethod]
    fn find_nodes(
        zelf: PyRef<Self>,
        mut kw: KwArgs,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<rustpython_vm::builtins::PyList>> {
        let op = kw.pop_kwarg("op").ok_or_else(|| {
            vm.new_type_error("find_nodes() missing required keyword-only argument: 'op'")
        })?;
        let op = op.str(vm)?.text(vm)?.to_owned();
        let target = kw.pop_kwarg("target").filter(|t| !vm.is_none(t));
        if op == "call_function" && target.is_none() {
            return Err(super::assertion(
                vm,
                "target must not be None for call_function op".to_owned(),
            ));
        }
        let mut out = vec![];
        for n in Self::node_vec(&zelf, vm) {
            if n.op().name() != op {
                continue;
            }
            if let Some(t) = &target {
                let nt = n.target();
                if !(nt.is(t) || vm.bool_eq(&nt, t)?) {
                    continue;
                }
            }
            out.push(n.into());
        }
        Ok(vm.ctx.new_list(out))
    }
}

/// `graph.nodes`.
#[pyclass(module = "torch.fx.graph", name = "_node_list", traverse = "manual")]
#[derive(Debug, PyPayload)]
pub(crate) struct NodeList {
    graph: PyRef<PyGraph>,
    reverse: bool,
}

// SAFETY: the one object a node list owns is visited once.
unsafe impl Traverse for NodeList {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.graph.traverse(f);
    }
}

impl AsSequence for NodeList {
    fn as_sequence() -> &'static PySequenceMethods {
        static AS_SEQUENCE: PySequenceMethods = PySequenceMethods {
            length: atomic_func!(|seq, _vm| Ok(NodeList::sequence_downcast(seq)
                .graph
                .s
                .lock()
                .len)),
            ..PySequenceMethods::NOT_IMPLEMENTED
        };
        &AS_SEQUENCE
    }
}

#[pyclass(with(Iterable, AsSequence))]
impl NodeList {
    #[pymethod]
    fn __reversed__(&self) -> NodeList {
        NodeList {
            graph: self.graph.clone(),
            reverse: !self.reverse,
        }
    }
}

impl Iterable for NodeList {
    fn iter(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        let root = PyGraph::root(&zelf.graph, vm);
        Ok(NodeIter {
            cur: PyMutex::new(root.clone()),
            root,
            reverse: zelf.reverse,
        }
        .into_ref(&vm.ctx)
        .into())
    }
}

#[pyclass(
    module = "torch.fx.graph",
    name = "_node_iterator",
    traverse = "manual"
)]
#[derive(Debug, PyPayload)]
pub(crate) struct NodeIter {
    root: NodeRef,
    cur: PyMutex<NodeRef>,
    reverse: bool,
}

// SAFETY: the root and the current node are visited once each.
unsafe impl Traverse for NodeIter {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.root.traverse(f);
        self.cur.traverse(f);
    }
}

#[pyclass(with(IterNext, Iterable))]
impl NodeIter {}

impl SelfIter for NodeIter {}

impl IterNext for NodeIter {
    fn next(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<PyIterReturn> {
        let mut cur = zelf.cur.lock();
        loop {
            let next = if zelf.reverse {
                cur.prev_node()
            } else {
                cur.next_node()
            };
            if next.is(&zelf.root) {
                // Stay on the root so that further calls keep stopping.
                *cur = next;
                return Ok(PyIterReturn::StopIteration(None));
            }
            *cur = next.clone();
            if !next.is_erased() {
                return Ok(PyIterReturn::Return(next.into()));
            }
        }
    }
}

/// The context manager of `inserting_before`/`inserting_after`; the insertion
/// point changes when it is created and is restored on exit, as in torch.fx.
#[pyclass(module = "torch.fx.graph", name = "_InsertPoint")]
#[derive(PyPayload)]
pub(crate) struct InsertPoint {
    graph: PyRef<PyGraph>,
    saved: PyMutex<Option<Insert>>,
}

impl std::fmt::Debug for InsertPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_InsertPoint")
    }
}

#[pyclass]
impl InsertPoint {
    #[pymethod]
    fn __enter__(&self) {}

    #[pymethod]
    fn __exit__(&self, _args: FuncArgs) {
        let saved = self.saved.lock().take();
        self.graph.s.lock().insert = saved;
    }
}
