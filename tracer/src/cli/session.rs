//! One interpreter with fxvm's command-line driver (`torch.fx._cli`)
//! imported, serving `fxvm trace` and the workers of `fxvm check`: it
//! renders cases and compares numeric snapshots.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, VirtualMachine};

use super::trace::Format;
use fxvm_vm::text::Utf8;

/// What to trace (shared by `trace` and `check`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Target {
    /// The script to import (as a module, not `__main__`).
    pub(crate) file: PathBuf,
    /// An expression evaluated in the script's namespace.
    pub(crate) module: Option<String>,
    /// A function of the script.
    pub(crate) function: Option<String>,
    /// `NAME=VALUE` specialisations.
    pub(crate) concrete: Vec<String>,
    /// `NAME=SHAPE[:DTYPE[:HIGH]]` example inputs.
    pub(crate) example: Vec<String>,
    /// `NAME:DIMS` symbolic dims of the examples.
    pub(crate) dynamic: Vec<String>,
    /// The seed set before the model is built and its inputs drawn.
    pub(crate) seed: u64,
}

/// A case that did not render.
pub(crate) enum Failure {
    /// The user's script, model or trace raised: its traceback.
    Raised(String),
    /// The command line or manifest named something that is not there:
    /// one line.
    Usage(String),
}

impl Failure {
    /// One line: the usage error, or the exception a traceback ends with.
    pub(crate) fn summary(&self) -> &str {
        match self {
            Failure::Usage(message) => message,
            Failure::Raised(traceback) => traceback.trim_end().lines().last().unwrap_or_default(),
        }
    }
}

pub(crate) struct Session {
    /// Never dropped: tearing an interpreter down costs more than the
    /// process exit that follows, which frees it all at once.
    interp: ManuallyDrop<Interpreter>,
}

impl Session {
    /// An interpreter importing user packages from `site_packages` (then
    /// PYTHONPATH and the active virtualenv).
    pub(crate) fn new(site_packages: &[PathBuf]) -> Session {
        let interp = crate::interpreter(&fxvm_vm::Config {
            path: super::package_path(site_packages),
            write_bytecode: true,
            ..Default::default()
        });
        Session {
            interp: ManuallyDrop::new(interp),
        }
    }

    /// Each of `forms` for `target`, traced once: text for the traced
    /// forms, safetensors bytes for [`Format::Outputs`].
    pub(crate) fn render(
        &self,
        target: &Target,
        forms: &[Format],
    ) -> Result<Vec<Vec<u8>>, Failure> {
        self.interp.enter(|vm| {
            let out = render_case(vm, target, forms);
            fxvm_vm::script::flush_std(vm);
            out.map_err(|exc| failure(vm, exc))
        })
    }

    /// `None` when the outputs `actual` are close to `expected` (both
    /// safetensors bytes), else a report of what differs.
    pub(crate) fn compare_outputs(
        &self,
        expected: &[u8],
        actual: &[u8],
        rtol: Option<f64>,
        atol: Option<f64>,
    ) -> Result<Option<String>, Failure> {
        self.interp.enter(|vm| {
            let float =
                |v: Option<f64>| v.map_or_else(|| vm.ctx.none(), |v| vm.ctx.new_float(v).into());
            let args = vec![
                vm.ctx.new_bytes(expected.to_vec()).into(),
                vm.ctx.new_bytes(actual.to_vec()).into(),
                float(rtol),
                float(atol),
            ];
            let report = driver(vm)
                .and_then(|cli| cli.get_attr("compare_outputs", vm))
                .and_then(|f| f.call(FuncArgs::new(args, KwArgs::default()), vm))
                .and_then(|r| {
                    if vm.is_none(&r) {
                        Ok(None)
                    } else {
                        Ok(Some(r.str(vm)?.text(vm)?.to_owned()))
                    }
                });
            report.map_err(|exc| failure(vm, exc))
        })
    }
}

fn driver(vm: &VirtualMachine) -> PyResult<PyObjectRef> {
    vm.import("torch.fx._cli", 0)?
        .get_attr("fx", vm)?
        .get_attr("_cli", vm)
}

fn render_case(vm: &VirtualMachine, target: &Target, forms: &[Format]) -> PyResult<Vec<Vec<u8>>> {
    let opt = |v: &Option<String>| {
        v.as_ref()
            .map_or_else(|| vm.ctx.none(), |s| vm.ctx.new_str(s.as_str()).into())
    };
    let strings = |items: &[String]| -> PyObjectRef {
        vm.ctx
            .new_list(
                items
                    .iter()
                    .map(|c| vm.ctx.new_str(c.as_str()).into())
                    .collect(),
            )
            .into()
    };
    let names: Vec<String> = forms.iter().map(|f| f.name().to_owned()).collect();
    let args = vec![
        vm.ctx.new_str(path_text(&target.file)).into(),
        opt(&target.module),
        opt(&target.function),
        strings(&names),
        strings(&target.concrete),
        strings(&target.example),
        strings(&target.dynamic),
        vm.ctx.new_int(target.seed).into(),
    ];
    let rendered = driver(vm)?
        .get_attr("render_case", vm)?
        .call(FuncArgs::new(args, KwArgs::default()), vm)?;
    let items: Vec<PyObjectRef> = rendered.try_to_value(vm)?;
    items
        .into_iter()
        .map(
            |item| match item.downcast_ref::<rustpython_vm::builtins::PyBytes>() {
                Some(bytes) => Ok(bytes.as_bytes().to_vec()),
                None => Ok(item.str(vm)?.text(vm)?.as_bytes().to_vec()),
            },
        )
        .collect()
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn failure(vm: &VirtualMachine, exc: PyBaseExceptionRef) -> Failure {
    if exc.class().name().to_string() == "CliError" {
        let message = exc
            .as_object()
            .str(vm)
            .map(|s| s.lossy().into_owned())
            .unwrap_or_default();
        return Failure::Usage(message);
    }
    drop_cli_frames(&exc, vm);
    Failure::Raised(traceback_text(vm, &exc))
}

/// The traceback as `sys.excepthook` prints it (source lines and carets).
fn traceback_text(vm: &VirtualMachine, exc: &PyBaseExceptionRef) -> String {
    let formatted = vm
        .import("traceback", 0)
        .and_then(|tb| tb.get_attr("format_exception", vm))
        .and_then(|format| format.call((exc.clone(),), vm))
        .and_then(|lines| {
            let lines: Vec<String> = lines.try_to_value(vm)?;
            Ok(lines.concat())
        });
    formatted.unwrap_or_else(|_| {
        let mut text = String::new();
        // Writing into a String cannot fail.
        let _ = vm.write_exception(&mut text, exc);
        text
    })
}

/// Drops the traceback's leading entries in `torch.fx._cli` (fxvm's own
/// driver), so a traceback starts in the user's script.
fn drop_cli_frames(exc: &PyBaseExceptionRef, vm: &VirtualMachine) {
    let mut tb = exc.__traceback__();
    while let Some(entry) = &tb {
        if entry.frame.code.source_path.as_str() != "torch.fx._cli" {
            break;
        }
        let next = entry.next.lock().clone();
        tb = next;
    }
    let tb = tb.map_or_else(|| vm.ctx.none(), Into::into);
    // Setting a traceback object (or None) cannot fail.
    let _ = exc.set___traceback__(tb, vm);
}
