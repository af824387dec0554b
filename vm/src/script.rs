//! Running user code as `python` would: a script or a `-c` string as
//! `__main__`, then the interpreter's exit sequence turned into a status.

use std::path::Path;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyCode};
use rustpython_vm::scope::Scope;
use rustpython_vm::{PyRef, PyResult, VirtualMachine, stdlib::atexit};

use crate::native::compile_guard::check_source;

/// What to run as `__main__`.
#[derive(Debug, Clone, Copy)]
pub enum Main<'a> {
    /// A script file; its folder goes first on `sys.path`.
    File(&'a Path),
    /// Source text, as `python -c`; the current folder goes first on `sys.path`.
    Code(&'a str),
    /// A module found on `sys.path`, run as `python -m` runs it (runpy's
    /// `__main__` semantics: `sys.argv[0]` becomes the module's file); the
    /// current folder goes first on `sys.path`.
    Module(&'a str),
}

/// Runs `main` in a fresh `__main__` module.
pub fn run_main(vm: &VirtualMachine, main: Main<'_>) -> PyResult<()> {
    let scope = vm.new_scope_with_main()?;
    match main {
        Main::File(path) => {
            let dir = path.parent().map(Path::to_string_lossy).unwrap_or_default();
            vm.insert_sys_path(vm.new_pyobj(dir.into_owned()))?;
            let name = path.to_string_lossy();
            let source = read_source(vm, path)?;
            check_source(&source, &name, vm)?;
            let Ok(text) = std::str::from_utf8(&source) else {
                return Err(non_utf8_error(vm, &source, &name));
            };
            match crate::compiler::compile_fixed(vm, text, &name, None) {
                Some(code) => run_as_main_file(vm, scope, code?, &name),
                None => vm.run_any_file(scope, &name),
            }
        }
        Main::Code(code) => {
            vm.insert_sys_path(vm.new_pyobj(""))?;
            check_source(code.as_bytes(), "<string>", vm)?;
            vm.run_string(scope, code, "<string>".to_owned()).map(drop)
        }
        Main::Module(name) => {
            let cwd = std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .unwrap_or_default();
            vm.insert_sys_path(vm.new_pyobj(cwd))?;
            let run = vm.import("runpy", 0)?.get_attr("_run_module_as_main", vm)?;
            run.call((name.to_owned(), true), vm).map(drop)
        }
    }
}

/// Runs a script compiled by [`crate::compiler`] as RustPython's
/// `run_any_file` runs the others: `__file__`, `__cached__` and a source
/// loader set for the run, `__file__` and `__cached__` removed after it.
fn run_as_main_file(
    vm: &VirtualMachine,
    scope: Scope,
    code: PyRef<PyCode>,
    path: &str,
) -> PyResult<()> {
    let globals = scope.globals.clone();
    globals.set_item("__file__", vm.new_pyobj(path), vm)?;
    globals.set_item("__cached__", vm.ctx.none(), vm)?;
    let loader = vm
        .import("importlib.machinery", 0)?
        .get_attr("machinery", vm)?
        .get_attr("SourceFileLoader", vm)?
        .call(("__main__", path), vm)?;
    globals.set_item("__loader__", loader, vm)?;
    let result = vm.run_code_obj(code, scope).map(drop);
    for name in ["__file__", "__cached__"] {
        // Absent only if the script deleted it itself.
        let _ = globals.del_item(name, vm);
    }
    result
}

/// The script's bytes; an error names the file, as python's does.
fn read_source(vm: &VirtualMachine, path: &Path) -> PyResult<Vec<u8>> {
    std::fs::read(path).map_err(|e| {
        let errno = e.raw_os_error().unwrap_or(0);
        let reason = e.to_string();
        let reason = reason.split(" (os error").next().unwrap_or(&reason);
        vm.new_os_error(format!(
            "can't open file '{}': [Errno {errno}] {reason}",
            path.display()
        ))
    })
}

/// CPython's SyntaxError for a script that is not UTF-8 (fxvm reads scripts
/// as UTF-8; a PEP 263 coding line is honoured only for imported modules).
fn non_utf8_error(vm: &VirtualMachine, source: &[u8], filename: &str) -> PyBaseExceptionRef {
    let bad = std::str::from_utf8(source).expect_err("checked by the caller");
    let at = bad.valid_up_to();
    let line = source[..at].iter().filter(|&&b| b == b'\n').count() + 1;
    vm.new_exception_msg(
        vm.ctx.exceptions.syntax_error.to_owned(),
        format!(
            "Non-UTF-8 code starting with '\\x{:02x}' in file {filename} on line {line}, but no encoding declared; see https://peps.python.org/pep-0263/ for details",
            source[at]
        )
        .into(),
    )
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
        // As CPython, a stream the program closed is not flushed.
        let closed = stream
            .get_attr("closed", vm)
            .and_then(|c| c.try_to_bool(vm))
            .unwrap_or(false);
        if vm.is_none(&stream) || closed {
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
