//! How an operation on a `Proxy` becomes a node, natively: `Proxy`'s
//! `__torch_function__` (what `torch.relu(proxy)` and `proxy.view(…)`
//! reach) and its operator methods (`proxy + 1`), each recorded through
//! the tracer's `create_proxy` hook.

use rustpython_vm::builtins::{PyDict, PyList, PySlice, PyTuple, PyType};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};

use super::hooks::loaded;
use super::record::NodeSpec;
use super::tracer_state::TracerRef;
use fxvm_vm::text::Utf8;

/// `tracer.create_proxy(kind, target, args, kwargs, name=name)`.
pub(crate) fn create_proxy(
    tracer: PyObjectRef,
    kind: &'static str,
    target: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    name: Option<String>,
    vm: &VirtualMachine,
) -> PyResult {
    let name = name.map(|n| vm.ctx.new_str(n));
    let spec = NodeSpec {
        name,
        ..NodeSpec::new(kind, target, args, kwargs)
    };
    TracerRef::new(&tracer, vm).create_proxy(spec, None)
}

/// The tracers of the instances of `cls` among `value` (nested in tuples,
/// lists and dicts, as torch.fx's `map_aggregate` looks), each once.
fn find_tracers(
    value: &PyObjectRef,
    cls: &Py<PyType>,
    out: &mut Vec<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if value.class().fast_issubclass(cls) {
        let tracer = value.get_attr("tracer", vm)?;
        if !out.iter().any(|t| t.is(&tracer)) {
            out.push(tracer);
        }
        return Ok(());
    }
    let items: Vec<PyObjectRef> = if let Some(t) = value.downcast_ref::<PyTuple>() {
        t.as_slice().to_vec()
    } else if let Some(l) = value.downcast_ref::<PyList>() {
        l.borrow_vec().to_vec()
    } else if let Some(d) = value.downcast_ref::<PyDict>() {
        d.values_vec()
    } else if let Some(s) = value.downcast_ref::<PySlice>() {
        // `buffer[:t]` with a traced `t` (see `Tensor.__getitem__`).
        [s.start.clone(), Some(s.stop.clone()), s.step.clone()]
            .into_iter()
            .flatten()
            .collect()
    } else {
        return Ok(());
    };
    for item in &items {
        find_tracers(item, cls, out, vm)?;
    }
    Ok(())
}

/// `torch.overrides.is_tensor_method_or_property(func)`.
fn is_tensor_method(func: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let tensor = loaded("torch", vm)?.get_attr("Tensor", vm)?;
    if let Some(owner) = super::attr(func, "__self__", vm)?
        && &*owner.class().name() == "getset_descriptor"
    {
        let name = owner.get_attr("__name__", vm)?;
        let name = name.str(vm)?;
        return Ok(super::attr(&tensor, name.text(vm)?, vm)?.is_some_and(|a| a.is(&owner)));
    }
    let Some(name) = super::attr(func, "__name__", vm)? else {
        return Ok(false);
    };
    let name = name.str(vm)?;
    Ok(super::attr(&tensor, name.text(vm)?, vm)?.is_some_and(|a| a.is(func)))
}

/// `Proxy.__torch_function__(cls, func, types, args, kwargs)`.
pub(crate) fn torch_function(
    cls: PyObjectRef,
    func: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let cls = cls
        .downcast_ref::<PyType>()
        .ok_or_else(|| vm.new_type_error("__torch_function__ is a classmethod"))?;
    let args = if vm.is_none(&args) {
        vm.ctx.empty_tuple.clone().into()
    } else {
        args
    };
    let kwargs = if vm.is_none(&kwargs) {
        vm.ctx.new_dict().into()
    } else {
        kwargs
    };
    let mut tracers = Vec::new();
    find_tracers(&args, cls, &mut tracers, vm)?;
    find_tracers(&kwargs, cls, &mut tracers, vm)?;
    let tracer = match tracers.len() {
        1 => tracers.pop().expect("one tracer"),
        0 => return Err(vm.new_runtime_error("no Proxy among the arguments")),
        _ => {
            let list = vm.ctx.new_list(tracers).as_object().repr(vm)?;
            let method = func.str(vm)?;
            return Err(vm.new_runtime_error(format!(
                "Found multiple different tracers {} while trying to trace operations {}",
                list.text(vm)?,
                method.text(vm)?
            )));
        }
    };
    if is_tensor_method(&func, vm)? {
        let name = func.get_attr("__name__", vm)?;
        return create_proxy(tracer, "call_method", name, args, kwargs, None, vm);
    }
    let name = super::graph::PyGraph::target_to_str(&func.get_attr("__name__", vm)?, vm)?;
    create_proxy(tracer, "call_function", func, args, kwargs, Some(name), vm)
}

/// `tracer.create_proxy(kind, target, args, kwargs)` for `Proxy`'s own
/// methods (operators, `proxy(...)`, `proxy.method(...)`, `getattr`).
pub(crate) fn record(
    tracer: PyObjectRef,
    kind: &str,
    target: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let kind = match kind {
        "call_function" => "call_function",
        "call_method" => "call_method",
        other => return Err(vm.new_value_error(format!("cannot record a {other} node"))),
    };
    create_proxy(tracer, kind, target, args, kwargs, None, vm)
}
