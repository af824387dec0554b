//! Running user code as `python` would: a script or a `-c` string as
//! `__main__`, then the interpreter's exit sequence turned into a status.

use std::path::Path;

use rustpython_vm::{PyResult, VirtualMachine, stdlib::atexit};

/// What to run as `__main__`.
#[derive(Debug, Clone, Copy)]
pub enum Main<'a> {
    /// A script file; its folder goes first on `sys.path`.
    File(&'a Path),
    /// Source text, as `python -c`; the current folder goes first on `sys.path`.
    Code(&'a str),
}

/// Runs `main` in a fresh `__main__` module.
pub fn run_main(vm: &VirtualMachine, main: Main<'_>) -> PyResult<()> {
    let scope = vm.new_scope_with_main()?;
    match main {
        Main::File(path) => {
            let dir = path.parent().map(Path::to_string_lossy).unwrap_or_default();
            vm.insert_sys_path(vm.new_pyobj(dir.into_owned()))?;
            vm.run_any_file(scope, &path.to_string_lossy())
        }
        Main::Code(code) => {
            vm.insert_sys_path(vm.new_pyobj(""))?;
            vm.run_string(scope, code, "<string>".to_owned()).map(drop)
        }
    }
}

/// Ends a run as CPython does — print an uncaught exception, honour
/// `SystemExit`, join threads, run `atexit` handlers, flush the standard
/// streams — and returns the process exit status.
///
/// Module teardown is deliberately skipped: the caller is about to exit and
/// the OS reclaims the heap far faster than finalisers can walk it.
pub fn finish(vm: &VirtualMachine, result: PyResult<()>) -> u32 {
    flush_std(vm);
    let status = match result {
        Ok(()) => 0,
        Err(exc) => vm.handle_exit_exception(exc),
    };
    if let Ok(threading) = vm
        .sys_module
        .get_attr("modules", vm)
        .and_then(|m| m.get_item("threading", vm))
        && let Ok(shutdown) = threading.get_attr("_shutdown", vm)
        && let Err(e) = shutdown.call((), vm)
    {
        vm.run_unraisable(
            e,
            Some("Exception ignored in threading shutdown".to_owned()),
            threading,
        );
    }
    atexit::_run_exitfuncs(vm);
    if !flush_std(vm) && status == 0 {
        // CPython's status when stdout cannot be flushed (e.g. a closed pipe).
        return 120;
    }
    status
}

/// Flushes `sys.stdout` and `sys.stderr`; false when stdout could not be flushed.
pub fn flush_std(vm: &VirtualMachine) -> bool {
    let mut stdout_ok = true;
    for (name, is_stdout) in [("stdout", true), ("stderr", false)] {
        let Ok(stream) = vm.sys_module.get_attr(name, vm) else {
            continue;
        };
        if vm.is_none(&stream) {
            continue;
        }
        if let Err(e) = vm.call_method(&stream, "flush", ())
            && is_stdout
        {
            stdout_ok = false;
            vm.run_unraisable(e, None, stream);
        }
    }
    stdout_ok
}
