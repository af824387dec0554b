//! The bodies of `TracerBase.create_proxy`, `create_node` and `proxy`, and
//! of `Proxy.__init__`: how one operation becomes a node of the graph and a
//! new `Proxy`. Each hook they call (`create_arg`, `create_node`, `proxy`)
//! goes through the tracer, so a subclass's override is honoured.

use rustpython_vm::builtins::{PyStrRef, PyType};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use super::graph::PyGraph;
use super::hooks::{Hook, PyTracerHook, loaded};
use super::node::NodeRef;
use super::tracer_state::TracerRef;

/// What makes a node: the arguments `create_node` and `create_proxy` share
/// (`kind`, `target`, `args`, `kwargs`, and optionally `name`, `type_expr`).
pub(crate) struct NodeSpec<'a> {
    pub(crate) kind: &'a str,
    pub(crate) target: PyObjectRef,
    pub(crate) args: PyObjectRef,
    pub(crate) kwargs: PyObjectRef,
    pub(crate) name: Option<PyStrRef>,
    pub(crate) type_expr: Option<PyObjectRef>,
}

impl<'a> NodeSpec<'a> {
    /// A node of `kind` calling or naming `target`, named by the graph.
    pub(crate) fn new(
        kind: &'a str,
        target: PyObjectRef,
        args: PyObjectRef,
        kwargs: PyObjectRef,
    ) -> NodeSpec<'a> {
        NodeSpec {
            kind,
            target,
            args,
            kwargs,
            name: None,
            type_expr: None,
        }
    }

    /// `Graph.create_node`'s and the hooks' positional arguments.
    pub(crate) fn positional(self, vm: &VirtualMachine) -> Vec<PyObjectRef> {
        let none = || vm.ctx.none();
        vec![
            vm.ctx.new_str(self.kind).into(),
            self.target,
            self.args,
            self.kwargs,
            self.name.map_or_else(none, Into::into),
            self.type_expr.unwrap_or_else(none),
        ]
    }
}

/// `TracerBase.create_proxy`.
pub(crate) fn create_proxy(
    t: &TracerRef<'_>,
    spec: NodeSpec<'_>,
    proxy_factory_fn: Option<PyObjectRef>,
) -> PyResult {
    fxvm_vm::collector::collect_if_due();
    let maker = super::create_arg::ArgMaker::new(t)?;
    let spec = NodeSpec {
        args: maker.arg(&spec.args)?,
        kwargs: maker.arg(&spec.kwargs)?,
        ..spec
    };
    let node = t.create_node(spec)?;
    match proxy_factory_fn {
        Some(factory) => factory.call((node,), t.vm),
        None => t.proxy(node),
    }
}

/// The node a Transformer is copying while it preserves node meta (the
/// node `Interpreter.run_node` is running), whose meta new nodes inherit.
fn preserved_meta_source(vm: &VirtualMachine) -> PyResult<Option<PyObjectRef>> {
    let proxy = loaded("torch.fx.proxy", vm)?;
    if !proxy
        .get_attr("_preserving", vm)?
        .get_item(&0, vm)?
        .try_to_bool(vm)?
    {
        return Ok(None);
    }
    let current = proxy.get_attr("_current_meta", vm)?;
    let node = vm.call_method(&current, "get", ("node",))?;
    Ok((!vm.is_none(&node)).then_some(node))
}

/// `graph.create_node(…)`: natively when the graph's class keeps the
/// native method (a Graph subclass may override it).
fn graph_create_node(
    graph: &PyObjectRef,
    spec: NodeSpec<'_>,
    vm: &VirtualMachine,
) -> PyResult<NodeRef> {
    let method = super::tracer_state::names(vm).create_node;
    if let Some(g) = graph.downcast_ref::<PyGraph>()
        && let (Some(own), Some(native)) = (
            graph.class().get_attr(method),
            PyGraph::class(&vm.ctx).get_attr(method),
        )
        && own.is(&native)
    {
        let NodeSpec {
            kind,
            target,
            args,
            kwargs,
            name,
            type_expr,
        } = spec;
        return PyGraph::create(
            g,
            kind,
            target,
            Some(args),
            Some(kwargs),
            name,
            type_expr,
            vm,
        );
    }
    vm.call_method(graph, "create_node", FuncArgs::from(spec.positional(vm)))?
        .downcast()
        .map_err(|_| vm.new_type_error("Graph.create_node returned something other than a Node"))
}

/// `TracerBase.create_node`: the graph's node, with the module scope and
/// stack it was made in and where in the user's code.
pub(crate) fn create_node(t: &TracerRef<'_>, spec: NodeSpec<'_>) -> PyResult<NodeRef> {
    let vm = t.vm;
    let graph = t.graph()?;
    let node = graph_create_node(&graph, spec, vm)?;
    if let Some(map) = t.node_name_to_scope()?
        && let Some(scope) = t.scope()?
    {
        let (path, module_type) = scope.get()?;
        let entry = vm.ctx.new_tuple(vec![path, module_type]);
        map.set_item(&*vm.ctx.new_str(node.name()), entry.into(), vm)?;
    }
    if let Some(current) = preserved_meta_source(vm)? {
        let from = current.get_attr("meta", vm)?;
        let to = node.meta(vm);
        for key in ["stack_trace", "nn_module_stack", "source_fn_stack"] {
            if let Ok(value) = from.get_item(key, vm) {
                to.set_item(key, value, vm)?;
            }
        }
    } else if let Some(stack) = t.module_stack()?
        && stack.__len__() > 0
    {
        let copy = stack.copy().into_ref(&vm.ctx);
        node.set_module_stack(copy, vm)?;
    }
    if t.record_source_loc()?
        && let Some(loc) = fxvm_vm::location::user_location(vm)
    {
        node.set_source_loc(loc, vm)?;
    }
    if t.record_stack_traces()? && node.meta_get("stack_trace", vm).is_none() {
        let trace = loaded("torch.fx.proxy", vm)?
            .get_attr("_user_stack_trace", vm)?
            .call((), vm)?;
        if trace.clone().try_to_bool(vm)? {
            node.meta(vm).set_item("stack_trace", trace, vm)?;
        }
    }
    Ok(node)
}

/// Whether instantiating `cls` is a bare object and then the body of the
/// native `__init__` hook `init`: the class keeps `object.__new__` and that
/// hook (every proxy class of a plain trace does), and its metaclass is
/// `type`. Such instances are made without the call protocol.
pub(crate) fn keeps_native_init(cls: &PyObjectRef, init: Hook, vm: &VirtualMachine) -> bool {
    let Some(ty) = cls.downcast_ref::<PyType>() else {
        return false;
    };
    let new = vm.ctx.names.__new__;
    ty.class().is(vm.ctx.types.type_type)
        && ty.get_attr(vm.ctx.names.__init__).is_some_and(|f| {
            f.downcast_ref::<PyTracerHook>()
                .is_some_and(|h| h.hook() == init)
        })
        && ty
            .get_attr(new)
            .zip(vm.ctx.types.object_type.get_attr(new))
            .is_some_and(|(a, b)| a.is(&b))
}

/// `object.__new__(cls)`.
pub(crate) fn bare_instance(cls: &PyObjectRef, vm: &VirtualMachine) -> PyResult {
    let object = vm.ctx.types.object_type.as_object();
    object.get_attr("__new__", vm)?.call((cls.clone(),), vm)
}

/// `TracerBase.proxy`: `self._proxy_class(node, self)`.
pub(crate) fn proxy(t: &TracerRef<'_>, node: PyObjectRef) -> PyResult {
    let vm = t.vm;
    let cls = t.proxy_class()?;
    if keeps_native_init(&cls, Hook::ProxyInit, vm) {
        let obj = bare_instance(&cls, vm)?;
        proxy_init(&obj, node, Some(t.obj.clone()), vm)?;
        return Ok(obj);
    }
    cls.call((node, t.obj.clone()), vm)
}

/// `Proxy.__init__(self, node, tracer=None)`: without a tracer, one that
/// appends to the node's graph.
pub(crate) fn proxy_init(
    zelf: &PyObjectRef,
    node: PyObjectRef,
    tracer: Option<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let names = super::tracer_state::names(vm);
    let tracer = match tracer {
        Some(t) => t,
        None => {
            let graph = node.get_attr(names.graph, vm)?;
            loaded("torch.fx.proxy", vm)?
                .get_attr("GraphAppendingTracer", vm)?
                .call((graph,), vm)?
        }
    };
    zelf.set_attr(names.tracer, tracer, vm)?;
    zelf.set_attr(names.node, node, vm)
}
