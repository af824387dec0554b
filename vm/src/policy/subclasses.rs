//! `type.__subclasses__`: RustPython's static types (`object`, `int`, …) are
//! shared by every interpreter of the process, so their subclass lists hold
//! the classes of every host — a way from one host's script into another
//! host's objects. A host under a restricting policy sees only the classes
//! its own modules name; other interpreters see all, as before.

use std::sync::OnceLock;

use rustpython_vm::builtins::PyType;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};

use super::registry::policy_of;
use super::shared::{own_method, set_method};

static ORIGINAL: OnceLock<PyObjectRef> = OnceLock::new();

/// Replaces `type.__subclasses__`, once per process ([`super::shared`]).
pub(super) fn patch(vm: &VirtualMachine) -> PyResult<()> {
    let class: &'static Py<PyType> = vm.ctx.types.type_type;
    let _ = ORIGINAL.set(own_method(vm, class, "__subclasses__")?);
    let guarded = |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        let original = ORIGINAL.get().expect("set before the method is replaced");
        let all = original.call(args, vm)?;
        if policy_of(vm).is_none_or(|p| p.is_full()) {
            return Ok(all);
        }
        let classes: Vec<PyObjectRef> = all.try_to_value(vm)?;
        let mut own = Vec::with_capacity(classes.len());
        for class in classes {
            if is_own(&class, vm)? {
                own.push(class);
            }
        }
        Ok(vm.ctx.new_list(own).into())
    };
    set_method(
        vm,
        class,
        "__subclasses__",
        "Return a list of immediate subclasses.",
        guarded,
    );
    Ok(())
}

/// Whether `class` is a static type or one of this interpreter's: its
/// module, in this interpreter's `sys.modules`, names it by its qualified
/// name. (A class defined inside a function is not named so and is left
/// out.)
fn is_own(class: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let Some(typ) = class.downcast_ref::<PyType>() else {
        return Ok(false);
    };
    if !typ.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
        return Ok(true);
    }
    let (Ok(module), Ok(qualname)) = (
        class.get_attr("__module__", vm),
        class.get_attr("__qualname__", vm),
    ) else {
        return Ok(false);
    };
    let modules = vm.sys_module.get_attr("modules", vm)?;
    let Ok(mut found) = modules.get_item(&*module, vm) else {
        return Ok(false);
    };
    let qualname = qualname.str(vm)?;
    for part in qualname.as_wtf8().to_string().split('.') {
        match vm.get_attribute_opt(found, &*vm.ctx.new_str(part))? {
            Some(next) => found = next,
            None => return Ok(false),
        }
    }
    Ok(found.is(class))
}
