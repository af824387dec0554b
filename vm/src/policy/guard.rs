//! Replacing a native function by a guarded one: the guard checks (and may
//! rewrite) the arguments, then calls the original, which only the guard's
//! Rust closure holds — no Python object refers to it any more once every
//! module that bound it is rebound.

use rustpython_vm::function::{FuncArgs, PyMethodFlags};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// A check run before the original: `Ok(args)` (possibly rewritten, e.g. a
/// path-like converted once so the original sees what was checked) lets
/// the call through.
pub(crate) type Check = Box<dyn Fn(FuncArgs, &VirtualMachine) -> PyResult<FuncArgs> + Send + Sync>;

/// Originals and their guarded replacements, to rebind wherever a loaded
/// module bound the original under another name (`os.open`, threading's
/// `_start_joinable_thread`).
#[derive(Default)]
pub(crate) struct Replaced(Vec<(PyObjectRef, PyObjectRef)>);

impl Replaced {
    pub(crate) fn push(&mut self, original: PyObjectRef, replacement: PyObjectRef) {
        self.0.push((original, replacement));
    }

    /// Rebinds every module-level name bound to an original.
    pub(crate) fn rebind_everywhere(self, vm: &VirtualMachine) -> PyResult<()> {
        let modules = vm.sys_module.get_attr("modules", vm)?;
        let modules: Vec<PyObjectRef> = vm
            .call_method(&modules, "values", ())?
            .try_to_value::<Vec<PyObjectRef>>(vm)?;
        for module in modules {
            let Some(dict) = module.dict() else { continue };
            for (name, value) in &dict {
                if let Some((_, replacement)) =
                    self.0.iter().find(|(original, _)| original.is(&value))
                {
                    dict.set_item(&*name, replacement.clone(), vm)?;
                } else if value.class().is(vm.ctx.types.set_type) {
                    // `os.supports_fd` and its kin are sets of functions.
                    let functions = self.0.iter().filter(|(original, _)| {
                        original
                            .class()
                            .is(vm.ctx.types.builtin_function_or_method_type)
                    });
                    for (original, replacement) in functions {
                        let member = vm.call_method(&value, "__contains__", (original.clone(),))?;
                        if member.try_to_bool(vm)? {
                            vm.call_method(&value, "discard", (original.clone(),))?;
                            vm.call_method(&value, "add", (replacement.clone(),))?;
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

/// Replaces `module.name` (a native function) by one that runs `check`
/// first. A missing or non-native attribute is left alone.
pub(crate) fn wrap(
    vm: &VirtualMachine,
    module: &PyObjectRef,
    name: &str,
    check: Check,
    replaced: &mut Replaced,
) -> PyResult<()> {
    let Some(original) = vm.get_attribute_opt(module.clone(), &*vm.ctx.new_str(name))? else {
        return Ok(());
    };
    if !original
        .class()
        .is(vm.ctx.types.builtin_function_or_method_type)
    {
        return Ok(());
    }
    let name = vm.ctx.intern_str(name.to_owned());
    let target = original.clone();
    let guarded = move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        let args = check(args, vm)?;
        target.call(args, vm)
    };
    let def = crate::binding::definition(name.as_str(), guarded, PyMethodFlags::empty(), None);
    let mut function = def.to_function();
    if let Some(module_name) = module
        .get_attr("__name__", vm)
        .ok()
        .and_then(|n| n.str(vm).ok())
    {
        function = function.with_module(vm.ctx.intern_str(module_name.to_string()));
    }
    let function: PyObjectRef = function.into_ref(&vm.ctx).into();
    module.set_attr(name, function.clone(), vm)?;
    replaced.push(original, function);
    Ok(())
}

/// A check that always refuses.
pub(crate) fn refuse(capability: super::Capability, what: String) -> Check {
    Box::new(move |_, vm| Err(super::denied(vm, capability, &what)))
}
