//! `_io.FileIO`, the one class that opens files by name. It is a static
//! type shared by every interpreter of the process and reachable from any
//! file object (`type(sys.stdout.buffer.raw)`), so it cannot be replaced
//! per interpreter: its initialiser is guarded once per process and looks
//! up the policy of the interpreter calling it (none: full access).

use std::sync::OnceLock;

use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use super::Policy;
use super::registry::policy_of;
use super::rules::{Access, Arg, check_target, take};
use super::shared::{set_method, static_class};

/// The type of a class's initialiser slot.
type InitFunc = fn(PyObjectRef, FuncArgs, &VirtualMachine) -> PyResult<()>;

static ORIGINAL: OnceLock<InitFunc> = OnceLock::new();

/// Guards `FileIO`'s initialiser (its slot and its `__init__`), once per
/// process, before any interpreter subclasses it ([`super::shared`]).
pub(super) fn patch(vm: &VirtualMachine) -> PyResult<()> {
    let class = static_class(vm, "_io", "FileIO")?;
    let Some(original) = class.slots.init.load() else {
        return Ok(());
    };
    let _ = ORIGINAL.set(original);
    class.slots.init.store(Some(guarded_init));
    // `FileIO.__init__(f, path)` reads the class's dict, not the slot.
    let init = |args: FuncArgs, vm: &VirtualMachine| -> PyResult<()> {
        let mut args = args;
        if args.args.is_empty() {
            return Err(
                vm.new_type_error("descriptor '__init__' of '_io.FileIO' object needs an argument")
            );
        }
        let zelf = args.args.remove(0);
        guarded_init(zelf, args, vm)
    };
    set_method(
        vm,
        class,
        "__init__",
        "Initialize self.  See help(type(self)) for accurate signature.",
        init,
    );
    Ok(())
}

fn guarded_init(zelf: PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
    let args = match policy_of(vm) {
        Some(policy) if !policy.all_files() => check(&policy, args, vm)?,
        _ => args,
    };
    let original = ORIGINAL.get().expect("set before the slot is replaced");
    original(zelf, args, vm)
}

/// `FileIO(file, mode='r', closefd=True, opener=None)`.
fn check(policy: &Policy, mut args: FuncArgs, vm: &VirtualMachine) -> PyResult<FuncArgs> {
    let mode = args
        .args
        .get(1)
        .or_else(|| args.kwargs.get("mode"))
        .and_then(|m| m.str(vm).ok())
        .map(|m| m.to_string())
        .unwrap_or_else(|| "r".to_owned());
    let access = if mode.contains(['w', 'a', 'x', '+']) {
        Access::Write
    } else {
        Access::Read
    };
    if let Some(target) = take(&mut args, Arg(0, "file"), vm)? {
        check_target(policy, "open", &target, access, true, vm)?;
    }
    // An opener returns any descriptor it likes (the embedding program's
    // too), past the checks above: refused.
    let opener = args.args.get(3).or_else(|| args.kwargs.get("opener"));
    if opener.is_some_and(|o| !vm.is_none(o)) {
        return Err(super::denied(
            vm,
            super::Capability::Read,
            "open with an opener",
        ));
    }
    Ok(args)
}
