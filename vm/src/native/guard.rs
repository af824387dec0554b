//! The last line of defence between a kernel bug and the interpreter: a
//! panic inside a native op becomes a Python `SystemError` naming the op,
//! instead of unwinding through the VM (which skips `finally`, `atexit` and
//! buffered output). Kernels report misuse as errors; this only catches bugs.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use rustpython_vm::{PyResult, VirtualMachine};

use super::convert::to_py_err;
use crate::tensor::TensorError;

thread_local! {
    /// How many guards are active on this thread; the panic hook stays quiet inside one.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
    /// The message and location of the last panic a guard caught.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs, once per process, a panic hook that records panics inside a
/// guard instead of printing them, and leaves every other panic to the
/// previous hook. Called when an interpreter is built, not per op.
pub(crate) fn install_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if DEPTH.with(Cell::get) == 0 {
                return previous(info);
            }
            let message = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            let location = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST.with(|last| *last.borrow_mut() = Some(format!("{message}{location}")));
        }));
    });
}

/// Runs `f` (the native body of `op`); a panic becomes `SystemError`.
pub(crate) fn guard<T>(
    op: &str,
    vm: &VirtualMachine,
    f: impl FnOnce() -> PyResult<T>,
) -> PyResult<T> {
    crate::collector::collect_if_due();
    DEPTH.with(|d| d.set(d.get() + 1));
    // The VM state `f` touches stays consistent: the error replaces the result,
    // and tensors a kernel was writing are only ever its own outputs.
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get() - 1));
    result.unwrap_or_else(|payload| {
        // A kernel's refused allocation unwinds with the tensor error itself
        // (see `fxvm_tensor::alloc::ensure`): PyTorch's exception, not a bug.
        if let Some(e) = payload.downcast_ref::<TensorError>() {
            LAST.with(|last| last.borrow_mut().take());
            return Err(to_py_err(e.clone(), vm));
        }
        let detail = LAST.with(|last| last.borrow_mut().take()).unwrap_or_default();
        Err(vm.new_system_error(format!(
            "fxvm internal error in {op}: {detail}. This is a bug in fxvm; please report it with the code that raised it."
        )))
    })
}

#[cfg(test)]
mod tests {
    use rustpython_vm::AsObject;

    use super::*;

    #[test]
    fn a_panic_becomes_system_error_naming_the_op() {
        let interp = crate::build(&crate::Config::default());
        interp.enter(|vm| {
            let err = guard::<()>("torch.boom", vm, || panic!("index out of bounds")).unwrap_err();
            assert!(err.fast_isinstance(vm.ctx.exceptions.system_error));
            let text = err.as_object().str(vm).unwrap().expect_str().to_owned();
            assert!(
                text.starts_with("fxvm internal error in torch.boom: index out of bounds at "),
                "{text}"
            );
            assert!(text.contains("guard.rs"), "{text}");
            let err = guard::<()>("torch.big", vm, || {
                crate::tensor::alloc::ensure::<f64>(1 << 60);
                Ok(())
            })
            .unwrap_err();
            assert!(err.fast_isinstance(vm.ctx.exceptions.runtime_error));
            // The next op runs normally; nothing is left recorded.
            assert_eq!(guard("torch.ok", vm, || Ok(7)).unwrap(), 7);
            assert_eq!(DEPTH.with(Cell::get), 0);
        });
    }
}
