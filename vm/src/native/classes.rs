//! The Python classes the native layer instantiates (`torch.return_types.*`).

use rustpython_vm::{PyResult, VirtualMachine};

/// `torch.return_types.<name>`, the named tuple of `(values, indices)` results.
pub(crate) fn return_type(name: &'static str, vm: &VirtualMachine) -> PyResult {
    vm.import("torch.return_types", 0)?
        .get_attr("return_types", vm)?
        .get_attr(name, vm)
}
