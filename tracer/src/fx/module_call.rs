//! `Tracer.call_module`, natively: the qualified name, scope and module
//! stack, the leaf test, then a `call_module` node or a trace into
//! `forward`. The Python method and the patched `Module.__call__` both call
//! it; a tracer overriding `path_of_module` or `is_leaf_module` gets exactly
//! that hook called (one overriding `call_module` never reaches here).

use rustpython_vm::builtins::{PyDict, PyStr, PyType};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};

use super::hooks::{class, keeps, loaded};
use fxvm_vm::text::Utf8;

/// How to run a module that is traced into.
pub(crate) enum Forward {
    /// `forward(*args, **kwargs)` (what `Tracer.call_module` receives).
    Bound(PyObjectRef),
    /// The original `Module.__call__`, called as `call(m, *args, **kwargs)`
    /// (the patched `__call__` passes it, sparing a closure per call).
    Unbound(PyObjectRef),
}

/// `Tracer.call_module(m, forward, args, kwargs)`.
pub(crate) fn call_module(
    tracer: PyObjectRef,
    m: PyObjectRef,
    forward: Forward,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let base = class("torch.fx._symbolic_trace", "Tracer", vm)?;
    let paths = tracer.get_attr("submodule_paths", vm)?;
    let name = match paths.downcast_ref::<PyDict>() {
        Some(d) if keeps(&tracer, &base, "path_of_module", vm) && d.__len__() > 0 => {
            d.get_item_opt(&*m, vm)?.ok_or_else(|| {
                vm.new_name_error(
                    "module is not installed as a submodule",
                    vm.ctx.new_str("path_of_module"),
                )
            })?
        }
        _ => vm.call_method(&tracer, "path_of_module", (m.clone(),))?,
    };
    let scope = tracer.get_attr("scope", vm)?;
    let prev = (
        scope.get_attr("module_path", vm)?,
        scope.get_attr("module_type", vm)?,
    );
    let module_type: PyObjectRef = m.class().to_owned().into();
    scope.set_attr("module_path", name.clone(), vm)?;
    scope.set_attr("module_type", module_type.clone(), vm)?;
    let result = record_call(
        &tracer,
        &base,
        &m,
        &name,
        &module_type,
        args,
        kwargs,
        &forward,
        vm,
    );
    scope.set_attr("module_path", prev.0, vm)?;
    scope.set_attr("module_type", prev.1, vm)?;
    result
}

/// The body of `call_module` between setting and restoring the scope.
#[allow(clippy::too_many_arguments)] // the state call_module threads through
fn record_call(
    tracer: &PyObjectRef,
    base: &Py<PyType>,
    m: &PyObjectRef,
    name: &PyObjectRef,
    module_type: &PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    forward: &Forward,
    vm: &VirtualMachine,
) -> PyResult {
    let name_str = name
        .downcast_ref::<PyStr>()
        .ok_or_else(|| vm.new_type_error("a module's qualified name is a str"))
        .and_then(|s| s.text(vm))?
        .to_owned();
    let num_calls = tracer.get_attr("num_calls", vm)?;
    let calls = match num_calls.get_item(name.as_object(), vm) {
        Ok(n) => n.try_to_value::<usize>(vm)?,
        Err(_) => 0,
    };
    let key = if calls > 0 {
        format!("{name_str}@{calls}")
    } else {
        name_str.clone()
    };
    let stack = tracer.get_attr("module_stack", vm)?;
    stack.set_item(
        &*vm.ctx.new_str(key),
        vm.ctx
            .new_tuple(vec![name.clone(), module_type.clone()])
            .into(),
        vm,
    )?;
    num_calls.set_item(name.as_object(), vm.ctx.new_int(calls + 1).into(), vm)?;
    let leaf = if keeps(tracer, base, "is_leaf_module", vm) {
        let module = module_type.get_attr("__module__", vm)?;
        let module = module.str(vm)?;
        let module = module.text(vm)?;
        let sequential = loaded("torch.nn", vm)?.get_attr("Sequential", vm)?;
        (module.starts_with("torch.nn") || module.starts_with("torch.ao.nn"))
            && !m.is_instance(&sequential, vm)?
    } else {
        vm.call_method(tracer, "is_leaf_module", (m.clone(), name.clone()))?
            .try_to_bool(vm)?
    };
    let result = if leaf {
        super::dispatch::create_proxy(
            tracer.clone(),
            "call_module",
            name.clone(),
            args,
            kwargs,
            None,
            vm,
        )?
    } else {
        let args = args.try_to_value::<Vec<PyObjectRef>>(vm)?;
        let kwargs = match kwargs.downcast_ref::<PyDict>() {
            Some(d) => d
                .items_vec()
                .into_iter()
                .map(|(k, v)| Ok((k.str(vm)?.text(vm)?.to_owned(), v)))
                .collect::<PyResult<rustpython_vm::function::KwArgs>>()?,
            None => Default::default(),
        };
        match forward {
            Forward::Bound(f) => f.call(FuncArgs::new(args, kwargs), vm)?,
            Forward::Unbound(call) => {
                let positional: Vec<PyObjectRef> = std::iter::once(m.clone()).chain(args).collect();
                call.call(FuncArgs::new(positional, kwargs), vm)?
            }
        }
    };
    vm.call_method(&stack, "popitem", ())?;
    Ok(result)
}
