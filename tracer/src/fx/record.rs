//! The per-op path of tracing: `TracerBase.create_proxy` when the tracer's
//! class keeps the default `create_proxy`/`create_arg`/`create_node`/`proxy`
//! hooks. Arguments become graph arguments, the node is created with its
//! module-scope metadata, and the result is wrapped in a new `Proxy`, all
//! without running Python code for the common argument kinds.

use rustpython_vm::builtins::{PyDict, PyList, PySlice, PyStr, PyTuple, PyType};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use super::graph::PyGraph;

/// Values passed through unchanged (PyTorch's base argument types).
fn is_plain(a: &PyObjectRef, vm: &VirtualMachine) -> bool {
    let t = a.class();
    let types = &vm.ctx.types;
    vm.is_none(a)
        || a.is(&vm.ctx.ellipsis)
        || t.is(types.int_type)
        || t.is(types.float_type)
        || t.is(types.str_type)
        || t.is(types.bool_type)
        || t.is(types.complex_type)
        || matches!(&*t.name(), "dtype" | "device")
}

struct Recorder<'a> {
    tracer: &'a PyObjectRef,
    proxy_cls: &'a PyObjectRef,
    vm: &'a VirtualMachine,
}

impl Recorder<'_> {
    /// `Tracer.create_arg` for the common kinds; anything else goes to the
    /// tracer's own `create_arg` (parameters, tensors, modules, named tuples …).
    fn arg(&self, a: &PyObjectRef) -> PyResult<PyObjectRef> {
        let vm = self.vm;
        if is_plain(a, vm) {
            return Ok(a.clone());
        }
        let cls = a.class();
        if cls.is(self
            .proxy_cls
            .downcast_ref::<PyType>()
            .expect("Proxy is a class"))
        {
            // A plain Proxy keeps its node in its instance dict.
            if let Some(node) = a
                .dict()
                .and_then(|d| d.get_item_opt("node", vm).ok().flatten())
            {
                return Ok(node);
            }
        }
        if cls.is(vm.ctx.types.tuple_type) {
            let t = a.downcast_ref::<PyTuple>().expect("a tuple");
            let items = t
                .iter()
                .map(|x| self.arg(x))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(vm.ctx.new_tuple(items).into());
        }
        if cls.is(vm.ctx.types.list_type) {
            let items = a
                .downcast_ref::<PyList>()
                .expect("a list")
                .borrow_vec()
                .to_vec();
            let items = items
                .iter()
                .map(|x| self.arg(x))
                .collect::<PyResult<Vec<_>>>()?;
            return Ok(vm.ctx.new_list(items).into());
        }
        if cls.is(vm.ctx.types.dict_type) {
            let d = a.downcast_ref::<PyDict>().expect("a dict");
            let items = d.items_vec();
            if items
                .iter()
                .all(|(k, _)| k.downcast_ref::<PyStr>().is_some())
            {
                let out = vm.ctx.new_dict();
                for (k, v) in items {
                    out.set_item(&*k, self.arg(&v)?, vm)?;
                }
                return Ok(out.into());
            }
        }
        if cls.is(vm.ctx.types.slice_type) {
            let s = a.downcast_ref::<PySlice>().expect("a slice");
            return super::args::map_slice(s, |x| self.arg(x), vm);
        }
        vm.call_method(self.tracer, "create_arg", (a.clone(),))
    }
}

/// `tracer.create_proxy(kind, target, args, kwargs, name, type_expr)` with
/// the default hooks: returns the new `proxy_cls` instance.
#[allow(clippy::too_many_arguments)]
pub(crate) fn create_proxy(
    tracer: PyObjectRef,
    proxy_cls: PyObjectRef,
    kind: &str,
    target: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    name: Option<rustpython_vm::builtins::PyStrRef>,
    type_expr: Option<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult {
    fxvm_vm::collector::collect_if_due();
    let r = Recorder {
        tracer: &tracer,
        proxy_cls: &proxy_cls,
        vm,
    };
    let args = r.arg(&args)?;
    let kwargs = r.arg(&kwargs)?;
    let graph_obj = tracer.get_attr("graph", vm)?;
    let graph = graph_obj
        .downcast_ref::<PyGraph>()
        .ok_or_else(|| vm.new_type_error("tracer.graph is not a torch.fx.Graph"))?;
    let node = PyGraph::create(
        graph,
        kind,
        target,
        Some(args),
        Some(kwargs),
        name,
        type_expr,
        vm,
    )?;

    let scope = tracer.get_attr("scope", vm)?;
    if let Some(map) = super::attr(&tracer, "node_name_to_scope", vm)?.filter(|m| !vm.is_none(m)) {
        let entry = vm.ctx.new_tuple(vec![
            scope.get_attr("module_path", vm)?,
            scope.get_attr("module_type", vm)?,
        ]);
        map.set_item(&*vm.ctx.new_str(node.name()), entry.into(), vm)?;
    }
    if let Some(stack) = super::attr(&tracer, "module_stack", vm)?
        && let Some(d) = stack.downcast_ref::<PyDict>()
        && d.__len__() > 0
    {
        let copy = vm
            .call_method(&stack, "copy", ())?
            .downcast::<PyDict>()
            .map_err(|_| vm.new_type_error("module_stack.copy() is a dict"))?;
        node.set_module_stack(copy, vm)?;
    }
    if tracer.get_attr("record_source_loc", vm)?.try_to_bool(vm)?
        && let Some(loc) = user_location(vm)
    {
        node.set_source_loc(loc, vm)?;
    }
    if tracer
        .get_attr("record_stack_traces", vm)?
        .try_to_bool(vm)?
    {
        let proxy_mod = vm
            .import("torch.fx.proxy", 0)?
            .get_attr("fx", vm)?
            .get_attr("proxy", vm)?;
        let trace = proxy_mod.get_attr("_user_stack_trace", vm)?.call((), vm)?;
        if trace.clone().try_to_bool(vm)? {
            node.meta(vm).set_item("stack_trace", trace, vm)?;
        }
    }

    // `Proxy(node, tracer)` without running `__init__`: its two attributes.
    let object_new = vm
        .ctx
        .types
        .object_type
        .as_object()
        .get_attr("__new__", vm)?;
    let proxy = object_new.call((proxy_cls.clone(),), vm)?;
    let dict = proxy
        .dict()
        .ok_or_else(|| vm.new_type_error("Proxy instances have a __dict__"))?;
    dict.set_item("tracer", tracer.clone(), vm)?;
    dict.set_item("node", node.into(), vm)?;
    Ok(proxy)
}

pub(crate) use fxvm_vm::location::user_location;
