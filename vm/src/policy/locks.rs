//! `_thread.lock`: without threads, a blocking `acquire` of a held lock can
//! never return (no other thread exists to release it) and no time limit
//! interrupts it. In a host that does not grant threads it raises
//! `RuntimeError` instead; a bounded wait returns False at once. The lock
//! type is shared by the process's interpreters, so the guard looks up the
//! caller's policy (none, or threads granted: the original behaviour).

use std::sync::OnceLock;

use rustpython_vm::function::{ArgIntoFloat, FuncArgs};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use super::registry::policy_of;
use super::shared::{own_method, set_method, static_class};
use super::{Capability, message};

/// The methods that wait for the lock, and their originals.
const WAITING: [&str; 3] = ["acquire", "acquire_lock", "__enter__"];
static ORIGINALS: OnceLock<Vec<PyObjectRef>> = OnceLock::new();

/// Guards the waiting methods of `_thread.lock`, once per process
/// ([`super::shared`]).
pub(super) fn patch(vm: &VirtualMachine) -> PyResult<()> {
    let class = static_class(vm, "_thread", "LockType")?;
    let originals = WAITING
        .iter()
        .map(|name| own_method(vm, class, name))
        .collect::<PyResult<Vec<_>>>()?;
    let _ = ORIGINALS.set(originals);
    for (index, name) in WAITING.into_iter().enumerate() {
        let guarded = move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
            let original = &ORIGINALS
                .get()
                .expect("set before the methods are replaced")[index];
            match policy_of(vm) {
                Some(policy) if !policy.threads => acquire_alone(original, args, name, vm),
                _ => original.call(args, vm),
            }
        };
        set_method(vm, class, name, "Lock the lock.", guarded);
    }
    Ok(())
}

/// `acquire(blocking=True, timeout=-1)` in an interpreter with one thread.
fn acquire_alone(
    original: &PyObjectRef,
    args: FuncArgs,
    name: &str,
    vm: &VirtualMachine,
) -> PyResult {
    let Some(zelf) = args.args.first().cloned() else {
        return original.call(args, vm);
    };
    let blocking = match args.args.get(1).or_else(|| args.kwargs.get("blocking")) {
        Some(b) if name != "__enter__" => b.clone().try_to_bool(vm)?,
        _ => true,
    };
    let timeout = args
        .args
        .get(2)
        .or_else(|| args.kwargs.get("timeout"))
        .cloned();
    let got = original.call((zelf, false), vm)?;
    if got.clone().try_to_bool(vm)? || !blocking {
        return Ok(got);
    }
    let forever = match &timeout {
        None => true,
        Some(t) => t.clone().try_into_value::<ArgIntoFloat>(vm)?.into_float() < 0.0,
    };
    if forever {
        let why = message(Capability::Threads, "waiting for a lock this thread holds");
        return Err(vm.new_runtime_error(format!(
            "deadlock: {why}, so no other thread can release it"
        )));
    }
    Ok(vm.ctx.new_bool(false).into())
}
