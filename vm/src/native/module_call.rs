//! `nn.Module.__call__`, natively. A module with no forward hooks calls its
//! `forward` straight away, sparing the two Python frames
//! (`_wrapped_call_impl`, `_call_impl`) that every call of every module paid
//! — the largest per-call cost of eager models and of tracing through
//! non-leaf modules under RustPython. A module with hooks, or whose class
//! (or a patch) replaces `_call_impl`, runs `_call_impl` as before.

use rustpython_vm::builtins::PyDict;
use rustpython_vm::function::{FuncArgs, PyMethodDef, PyMethodFlags};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// The `__call__` method for `nn.Module`, given its `_call_impl`.
pub(crate) fn method(call_impl: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
    let call = move |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        if args.args.is_empty() {
            return Err(vm.new_type_error(
                "descriptor '__call__' of 'Module' object needs an argument",
            ));
        }
        let zelf = args.args.remove(0);
        if without_hooks(&zelf, &call_impl, vm)? {
            return zelf.get_attr("forward", vm)?.call(args, vm);
        }
        vm.call_method(&zelf, "_call_impl", args)
    };
    // One definition per interpreter (each holds its own `_call_impl`),
    // leaked as every native definition is.
    let def: &'static PyMethodDef = Box::leak(Box::new(PyMethodDef {
        name: "__call__",
        func: Box::leak(Box::new(rustpython_vm::function::IntoPyNativeFn::into_func(call))),
        flags: PyMethodFlags::METHOD,
        doc: Some("Runs the module: its forward hooks around forward(*args, **kwargs)."),
    }));
    // Bound to `object` so that the descriptor accepts any Module subclass.
    def.build_method(&vm.ctx, vm.ctx.types.object_type).into()
}

/// Whether `_call_impl` would only call `forward`: the instance has no
/// forward (pre-)hooks and its class still uses the original `_call_impl`.
fn without_hooks(zelf: &PyObjectRef, call_impl: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let Some(dict) = zelf.dict() else {
        return Ok(false);
    };
    let empty = |name: &str| -> PyResult<bool> {
        Ok(dict
            .get_item_opt(name, vm)?
            .is_some_and(|hooks| hooks.downcast_ref::<PyDict>().is_some_and(|d| d.__len__() == 0)))
    };
    Ok(empty("_forward_hooks")?
        && empty("_forward_pre_hooks")?
        && zelf
            .class()
            .get_attr(vm.ctx.intern_str("_call_impl"))
            .is_some_and(|f| f.is(call_impl)))
}
