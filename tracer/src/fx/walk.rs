//! Walks over a module hierarchy that every trace starts with, natively:
//! reading `_modules` and `__dict__` directly is far cheaper than running
//! `named_modules()` generators in the interpreter.

use rustpython_vm::builtins::{PyDict, PyDictRef};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// The children of `m` in order (`m._modules`, `None` entries skipped).
fn children(m: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<(PyObjectRef, PyObjectRef)>> {
    let Some(dict) = m.dict() else { return Ok(vec![]) };
    let Some(modules) = dict.get_item_opt("_modules", vm)? else { return Ok(vec![]) };
    let Some(modules) = modules.downcast_ref::<PyDict>() else { return Ok(vec![]) };
    Ok(modules.items_vec().into_iter().filter(|(_, v)| !vm.is_none(v)).collect())
}

fn join(prefix: &str, name: &PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
    let name = name.str(vm)?;
    Ok(if prefix.is_empty() { name.expect_str().to_owned() } else { format!("{prefix}.{}", name.expect_str()) })
}

/// `named_modules()`: each module once, under the first name it is reached by.
pub(crate) fn module_paths(m: &PyObjectRef, prefix: String, out: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    if out.get_item_opt(&**m, vm)?.is_some() {
        return Ok(());
    }
    out.set_item(&**m, vm.ctx.new_str(prefix.clone()).into(), vm)?;
    for (name, child) in children(m, vm)? {
        module_paths(&child, join(&prefix, &name, vm)?, out, vm)?;
    }
    Ok(())
}

/// torch.fx's `collect_tensor_attrs`: instance attributes of `types`, then
/// each distinct child (`named_children`), the last name found winning.
pub(crate) fn constant_attrs(m: &PyObjectRef, prefix: String, types: &PyObjectRef, out: &PyDictRef, vm: &VirtualMachine) -> PyResult<()> {
    if let Some(dict) = m.dict() {
        for (k, v) in dict.items_vec() {
            if v.is_instance(types, vm)? {
                out.set_item(&*v, vm.ctx.new_str(join(&prefix, &k, vm)?).into(), vm)?;
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (name, child) in children(m, vm)? {
        if seen.insert(child.as_object().get_id()) {
            constant_attrs(&child, join(&prefix, &name, vm)?, types, out, vm)?;
        }
    }
    Ok(())
}
