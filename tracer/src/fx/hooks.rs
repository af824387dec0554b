//! Which of torch.fx's overridable hooks a tracer keeps: the native tracing
//! paths (`dispatch`, `module_call`) run a hook's default natively only when
//! the tracer's class does not override it.

use rustpython_vm::builtins::PyType;
use rustpython_vm::{AsObject, Py, PyObject, PyObjectRef, PyRef, PyResult, VirtualMachine};

/// A module already imported, by name: a `sys.modules` lookup, not a trip
/// through the import machinery (these run once per recorded node).
pub(crate) fn loaded(name: &'static str, vm: &VirtualMachine) -> PyResult {
    vm.sys_module.get_attr("modules", vm)?.get_item(name, vm)
}

/// The class `module.name` of an imported module.
pub(crate) fn class(
    module: &'static str,
    name: &'static str,
    vm: &VirtualMachine,
) -> PyResult<PyRef<PyType>> {
    loaded(module, vm)?
        .get_attr(name, vm)?
        .downcast::<PyType>()
        .map_err(|_| vm.new_type_error(format!("{module}.{name} is not a class")))
}

/// The class attribute `name` of `cls` (through its MRO), unbound.
pub(crate) fn class_attr(
    cls: &Py<PyType>,
    name: &'static str,
    vm: &VirtualMachine,
) -> Option<PyObjectRef> {
    cls.get_attr(vm.ctx.intern_str(name))
}

/// Whether `obj`'s class has `base`'s own `name` (does not override that hook).
pub(crate) fn keeps(
    obj: &PyObject,
    base: &Py<PyType>,
    name: &'static str,
    vm: &VirtualMachine,
) -> bool {
    matches!(
        (class_attr(obj.class(), name, vm), class_attr(base, name, vm)),
        (Some(a), Some(b)) if a.is(&b)
    )
}
