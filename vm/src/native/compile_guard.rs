//! `compile`, `exec` and `eval` with CPython's nesting limits in front of
//! RustPython's parser (see [`crate::nesting`]), so that no source text —
//! a script, an imported module (importlib compiles through `compile`), an
//! `eval` string — can overflow the native stack. The wrappers are native, so
//! `eval`/`exec` without explicit namespaces still see the caller's frame.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyStr};
use rustpython_vm::function::{ArgBytesLike, FuncArgs};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, TryFromBorrowedObject, VirtualMachine};

use crate::nesting::{self, Limit, NestingError};

/// Replaces the three builtins with guarded versions; once per interpreter.
pub(crate) fn install(vm: &VirtualMachine) -> PyResult<()> {
    for name in ["compile", "exec", "eval"] {
        let original = vm.builtins.get_attr(name, vm)?;
        let guarded = vm.new_function(name, move |args: FuncArgs, vm: &VirtualMachine| {
            let source = args
                .args
                .first()
                .or_else(|| args.kwargs.get("source"))
                .cloned();
            if let Some(source) = source {
                let filename = match name {
                    "compile" => args
                        .args
                        .get(1)
                        .or_else(|| args.kwargs.get("filename"))
                        .and_then(|f| f.str(vm).ok())
                        .map_or_else(
                            || "<string>".to_owned(),
                            |f| f.to_string_lossy().into_owned(),
                        ),
                    _ => "<string>".to_owned(),
                };
                check(&source, &filename, vm)?;
            }
            original.call(args, vm)
        });
        vm.builtins.set_attr(name, guarded, vm)?;
    }
    Ok(())
}

/// Checks `source` (a str or bytes-like; code objects and ASTs pass).
fn check(source: &PyObjectRef, filename: &str, vm: &VirtualMachine) -> PyResult<()> {
    if let Some(s) = source.downcast_ref::<PyStr>() {
        check_source(s.as_bytes(), filename, vm)
    } else if let Ok(bytes) = ArgBytesLike::try_from_borrowed_object(vm, source) {
        check_source(&bytes.borrow_buf(), filename, vm)
    } else {
        Ok(())
    }
}

/// Checks source text against CPython's nesting limits at the current
/// recursion depth; the error is the exception CPython raises, located in
/// `filename`.
pub(crate) fn check_source(source: &[u8], filename: &str, vm: &VirtualMachine) -> PyResult<()> {
    let budget = nesting::depth_budget(vm.recursion_limit.get(), vm.current_recursion_depth());
    nesting::check(source, budget).map_err(|e| {
        let line = String::from_utf8_lossy(source)
            .lines()
            .nth(e.line - 1)
            .unwrap_or("")
            .to_owned();
        nesting_error(&e, filename, &line, vm)
    })
}

/// The exception CPython raises for `e`: SyntaxError / IndentationError with
/// the location, or RecursionError.
fn nesting_error(
    e: &NestingError,
    filename: &str,
    line_text: &str,
    vm: &VirtualMachine,
) -> PyBaseExceptionRef {
    let class = match e.kind {
        Limit::Depth => return vm.new_recursion_error(e.to_string()),
        Limit::Parens => vm.ctx.exceptions.syntax_error,
        Limit::Indent => vm.ctx.exceptions.indentation_error,
    };
    let exc = vm.new_exception_msg(class.to_owned(), e.to_string().into());
    // RustPython's SyntaxError does not unpack a location tuple; set the
    // attributes that traceback printing and user code read.
    let attrs: [(&str, PyObjectRef); 6] = [
        ("filename", vm.ctx.new_str(filename).into()),
        ("lineno", vm.ctx.new_int(e.line).into()),
        ("offset", vm.ctx.new_int(e.column).into()),
        ("text", vm.ctx.new_str(format!("{line_text}\n")).into()),
        ("end_lineno", vm.ctx.new_int(e.line).into()),
        ("end_offset", vm.ctx.new_int(e.column + 1).into()),
    ];
    for (name, value) in attrs {
        // Setting a plain attribute on a fresh exception cannot fail.
        let _ = exc.as_object().set_attr(name, value, vm);
    }
    exc
}
