//! What every interpreter of the process shares — RustPython's static types
//! (`_io.FileIO`, `_thread.lock`, `code`, `type`) — is guarded once per
//! process, before any interpreter runs a script; the guards look up the
//! calling interpreter's policy ([`super::registry`]).

use std::sync::Once;

use rustpython_vm::builtins::PyType;
use rustpython_vm::function::{IntoPyNativeFn, PyMethodFlags};
use rustpython_vm::{Py, PyObjectRef, PyRef, PyResult, VirtualMachine};

/// Guards the shared types, once per process.
pub(crate) fn guard(vm: &VirtualMachine) -> PyResult<()> {
    static DONE: Once = Once::new();
    let mut result = Ok(());
    DONE.call_once(|| {
        result = super::code::patch(vm)
            .and_then(|()| super::fileio::patch(vm))
            .and_then(|()| super::locks::patch(vm))
            .and_then(|()| super::subclasses::patch(vm));
    });
    result
}

/// The static class `module.name`, for the process's lifetime (static types
/// live as long as the process).
pub(super) fn static_class(
    vm: &VirtualMachine,
    module: &'static str,
    name: &'static str,
) -> PyResult<&'static Py<PyType>> {
    let class: PyRef<PyType> = vm
        .import(module, 0)?
        .get_attr(name, vm)?
        .downcast()
        .map_err(|_| vm.new_type_error(format!("{module}.{name} is not a class")))?;
    Ok(Box::leak(Box::new(class)))
}

/// The method `name` in `class`'s own dict, before a guard replaces it.
pub(super) fn own_method(
    vm: &VirtualMachine,
    class: &Py<PyType>,
    name: &'static str,
) -> PyResult<PyObjectRef> {
    class
        .attributes
        .read()
        .get(vm.ctx.intern_str(name))
        .cloned()
        .ok_or_else(|| vm.new_attribute_error(format!("{} has no {name}", class.name())))
}

/// Sets method `name` of a static `class` to `f` (called with the instance
/// first).
pub(super) fn set_method<F, Kind>(
    vm: &VirtualMachine,
    class: &'static Py<PyType>,
    name: &'static str,
    doc: &'static str,
    f: F,
) where
    F: IntoPyNativeFn<Kind>,
{
    let def = crate::binding::definition(name, f, PyMethodFlags::METHOD, Some(doc));
    class.set_attr(
        vm.ctx.intern_str(name),
        def.build_method(&vm.ctx, class).into(),
    );
}
