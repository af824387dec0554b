//! The Python objects the native layer hands out (`torch.Size`,
//! `torch.device`, dtypes, `torch.return_types.*`), found through
//! `sys.modules` — a dictionary lookup per use instead of a trip through
//! the import machinery on every `x.shape` or `x.dtype`.

use rustpython_vm::builtins::{PyTuple, PyType};
use rustpython_vm::{PyObjectRef, PyPayload, PyResult, VirtualMachine};

/// An imported module by name, importing it only the first time.
pub(crate) fn module(name: &'static str, vm: &VirtualMachine) -> PyResult {
    let modules = vm.sys_module.get_attr("modules", vm)?;
    if let Ok(m) = modules.get_item(name, vm) {
        return Ok(m);
    }
    // `import a.b` answers with `a`; the submodule is then in sys.modules.
    vm.import(name, 0)?;
    modules.get_item(name, vm)
}

/// `module.attr`.
pub(crate) fn attr(module_name: &'static str, attr: &'static str, vm: &VirtualMachine) -> PyResult {
    module(module_name, vm)?.get_attr(attr, vm)
}

/// `torch.return_types.<name>`, the named tuple of `(values, indices)` results.
pub(crate) fn return_type(name: &'static str, vm: &VirtualMachine) -> PyResult {
    attr("torch.return_types", name, vm)
}

/// A `torch.Size` of `shape`, built as the tuple subclass instance it is
/// (no Python-level constructor runs: `x.shape` is on every hot path).
pub(crate) fn size(shape: &[usize], vm: &VirtualMachine) -> PyResult {
    let class = attr("torch", "Size", vm)?
        .downcast::<PyType>()
        .map_err(|_| vm.new_type_error("torch.Size is not a class"))?;
    let items: Vec<PyObjectRef> = shape.iter().map(|&d| vm.ctx.new_int(d).into()).collect();
    PyTuple::new_unchecked(items.into_boxed_slice())
        .into_ref_with_type(vm, class)
        .map(Into::into)
}
