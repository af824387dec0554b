//! Python strings as the UTF-8 text fxvm's Rust side holds (op arguments,
//! graph names and targets, generated code). A Python `str` may carry a lone
//! surrogate, which no Rust string can; such a string is a `ValueError`,
//! never a panic.

use std::borrow::Cow;

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{AsObject, Py, PyResult, VirtualMachine};

pub trait Utf8 {
    /// The string as UTF-8, or a `ValueError` saying why it cannot be.
    fn text(&self, vm: &VirtualMachine) -> PyResult<&str>;
    /// The string for a message, a lone surrogate shown as U+FFFD.
    fn lossy(&self) -> Cow<'_, str>;
}

impl Utf8 for Py<PyStr> {
    fn text(&self, vm: &VirtualMachine) -> PyResult<&str> {
        self.to_str().ok_or_else(|| {
            // Python's repr escapes the surrogate, so it is UTF-8 itself.
            let shown = self
                .as_object()
                .repr(vm)
                .ok()
                .and_then(|r| r.to_str().map(str::to_owned))
                .unwrap_or_default();
            vm.new_value_error(format!(
                "fxvm needs UTF-8 text here, and {shown} has a lone surrogate"
            ))
        })
    }

    fn lossy(&self) -> Cow<'_, str> {
        self.as_wtf8().to_string_lossy()
    }
}
