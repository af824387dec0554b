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
                if let Some(code) = fixed_code(name, &source, &filename, &args, &original, vm)? {
                    if name == "compile" {
                        return Ok(code);
                    }
                    let mut args = args;
                    args.args[0] = code;
                    return original.call(args, vm);
                }
            }
            original.call(args, vm)
        });
        vm.builtins.set_attr(name, guarded, vm)?;
    }
    Ok(())
}

/// The code object of a source or `ast.Module` RustPython's compiler needs a
/// fix for ([`crate::compiler`]), compiled as `compile`/`exec` would; `None`
/// for everything else (code objects, `eval`, `compile(..., PyCF_ONLY_AST)`).
fn fixed_code(
    name: &str,
    source: &PyObjectRef,
    filename: &str,
    args: &FuncArgs,
    original_compile: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let arg = |i: usize, key: &str| args.args.get(i).or_else(|| args.kwargs.get(key));
    let (mode, optimize) = match name {
        "exec" if !args.args.is_empty() => ("exec".to_owned(), None),
        "compile" => {
            let mode = match arg(2, "mode") {
                Some(m) => m.str(vm)?.to_string_lossy().into_owned(),
                None => return Ok(None),
            };
            let flags = match arg(3, "flags") {
                Some(f) => f.try_to_value::<i64>(vm).unwrap_or(0),
                None => 0,
            };
            if flags & PY_CF_ONLY_AST != 0 {
                return Ok(None);
            }
            let optimize = match arg(5, "optimize") {
                Some(o) => u8::try_from(o.try_to_value::<i64>(vm).unwrap_or(-1)).ok(),
                None => None,
            };
            (mode, optimize)
        }
        _ => return Ok(None),
    };
    if mode != "exec" {
        return Ok(None);
    }
    let text = if let Some(s) = source.downcast_ref::<PyStr>() {
        s.to_str().map(str::to_owned)
    } else if let Ok(bytes) = ArgBytesLike::try_from_borrowed_object(vm, source) {
        utf8_source(&bytes.borrow_buf())
    } else {
        None
    };
    let Some(text) = text else {
        if name != "compile" || !is_module_tree(source, vm) {
            return Ok(None);
        }
        // RustPython's own validation first, with its errors.
        original_compile.call(
            (source.clone(), filename.to_owned(), "exec", PY_CF_ONLY_AST),
            vm,
        )?;
        return match crate::compiler::compile_tree(vm, source, filename, optimize) {
            Some(code) => code.map(|c| Some(c.into())),
            None => Ok(None),
        };
    };
    match crate::compiler::compile_fixed(vm, &text, filename, optimize) {
        Some(code) => code.map(|c| Some(c.into())),
        None => Ok(None),
    }
}

/// Whether `obj` is an `ast.Module` (of the `ast` module's own classes).
fn is_module_tree(obj: &PyObjectRef, vm: &VirtualMachine) -> bool {
    vm.import("_ast", 0)
        .and_then(|m| m.get_attr("Module", vm))
        .is_ok_and(|module| obj.class().as_object().is(&module))
}

/// `compile`'s flag asking for the AST only.
const PY_CF_ONLY_AST: i64 = 0x0400;

/// Source bytes as text when they are UTF-8 (PEP 263's default; a BOM is
/// dropped) and declare no other coding; otherwise `None`, leaving the
/// decoding to RustPython.
fn utf8_source(bytes: &[u8]) -> Option<String> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).ok()?;
    // Coding names are case-insensitive (`# -*- coding: UTF-8 -*-`).
    let declares_other = text.lines().take(2).any(|line| {
        let line = line.to_ascii_lowercase();
        line.trim_start().starts_with('#')
            && line.contains("coding")
            && !line.contains("utf-8")
            && !line.contains("utf8")
    });
    (!declares_other).then(|| text.to_owned())
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
