//! The process environment: without the capability, `os.environ`,
//! `os.environb` and `posix.environ` are replaced by a stand-in that holds
//! no variables (the copies Python made at start-up become unreachable) and
//! refuses every use, and standard input — the embedding program's — is
//! empty (`input()` raises EOFError instead of waiting).

use rustpython_vm::{PyResult, VirtualMachine};

use super::guard::Replaced;
use super::{Capability, Policy, message};

pub(crate) fn install(
    vm: &VirtualMachine,
    policy: &Policy,
    replaced: &mut Replaced,
) -> PyResult<()> {
    if policy.environment {
        return Ok(());
    }
    let class = vm
        .import("_fxvm_denied", 0)?
        .get_attr("DeniedEnviron", vm)?;
    let os = vm.import("os", 0)?;
    let posix = vm.import("posix", 0)?;
    for (module, name) in [(&os, "environ"), (&os, "environb"), (&posix, "environ")] {
        let Ok(original) = module.get_attr(name, vm) else {
            continue;
        };
        let stand_in = class.call(
            (message(Capability::Environment, &format!("os.{name}")),),
            vm,
        )?;
        module.set_attr(name, stand_in.clone(), vm)?;
        replaced.push(original, stand_in);
    }
    let empty = vm
        .import("_io", 0)?
        .get_attr("StringIO", vm)?
        .call((), vm)?;
    for name in ["stdin", "__stdin__"] {
        if let Ok(original) = vm.sys_module.get_attr(name, vm) {
            vm.sys_module.set_attr(name, empty.clone(), vm)?;
            replaced.push(original, empty.clone());
        }
    }
    Ok(())
}
