//! `fxvm trace`: import a script, trace its model, print one form of it.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use rustpython_vm::{AsObject, PyResult, VirtualMachine};

use super::ExitStatus;
use fxvm_vm::text::Utf8;

/// The text form to print.
#[derive(Debug, Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum Format {
    /// `print(gm.graph)`
    Graph,
    /// `gm.code`: the generated forward
    Code,
    /// `gm.graph.print_tabular()`
    Tabular,
    /// `gm.print_readable()`
    Readable,
    /// DOT text, as torch.fx's `FxGraphDrawer(gm, name).get_dot_graph()`
    Dot,
    /// An SVG picture laid out natively (no graphviz)
    Svg,
    /// One self-contained HTML page: the picture, a searchable node table, a module tree
    Html,
}

impl Format {
    pub(crate) const ALL: [Format; 7] = [
        Format::Graph,
        Format::Code,
        Format::Tabular,
        Format::Readable,
        Format::Dot,
        Format::Svg,
        Format::Html,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            Format::Graph => "graph",
            Format::Code => "code",
            Format::Tabular => "tabular",
            Format::Readable => "readable",
            Format::Dot => "dot",
            Format::Svg => "svg",
            Format::Html => "html",
        }
    }
}

/// What to trace and how to print it (shared by `trace` and `check`).
#[derive(Debug, Args, Clone)]
pub(crate) struct Target {
    /// The script to import (as a module, not `__main__`).
    #[arg(value_name = "FILE.py")]
    pub(crate) file: PathBuf,
    /// Trace this expression, evaluated in the script's namespace (e.g. "GPT(GPTConfig(n_layer=2))").
    #[arg(long, value_name = "EXPR", conflicts_with = "function")]
    pub(crate) module: Option<String>,
    /// Trace this function of the script.
    #[arg(long, value_name = "NAME")]
    pub(crate) function: Option<String>,
    /// Specialise an argument: NAME=VALUE (a Python literal, or PH for a placeholder). Repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub(crate) concrete: Vec<String>,
    /// Trace with an example input of this shape (and dtype, float32 by default): NAME=2x8[:int64]. Repeatable; shape-dependent Python is then answered from the examples and leaves guards.
    #[arg(long, value_name = "NAME=SHAPE[:DTYPE]")]
    pub(crate) example: Vec<String>,
    /// Make these dims of an example input symbolic: NAME:DIM[,DIM] (or NAME:all). Repeatable.
    #[arg(long, value_name = "NAME:DIMS", requires = "example")]
    pub(crate) dynamic: Vec<String>,
    /// Also import pure-Python packages from DIR (repeatable; PYTHONPATH and an active virtualenv are used too).
    #[arg(long = "site-packages", value_name = "DIR")]
    pub(crate) site_packages: Vec<PathBuf>,
}

/// Trace a model in a script and print its graph, code, table or readable form.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --module or --function, the script's only nn.Module subclass that can be built\nwithout arguments is traced.\n\nExamples:\n  fxvm trace model.py\n  fxvm trace gpt.py --module \"GPT(GPTConfig(n_layer=2))\" --format graph\n  fxvm trace ops.py --function attention --concrete causal=True -o attention.code\n  fxvm trace gpt.py --example idx=1x8:int64 --dynamic idx:1 --format readable"
)]
pub(crate) struct TraceArgs {
    #[command(flatten)]
    target: Target,
    /// What to print.
    #[arg(long, value_enum, default_value = "code")]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

/// Traces `target` in a fresh interpreter and renders it as `format`;
/// `Ok(None)` when the script or the trace raised (the traceback was printed).
pub(crate) fn traced_text(target: &Target, format: Format) -> anyhow::Result<Option<String>> {
    let file = &target.file;
    match std::fs::metadata(file) {
        Ok(meta) if meta.is_dir() => {
            anyhow::bail!("{} is a directory, not a script", file.display())
        }
        Ok(_) => {}
        Err(e) => anyhow::bail!(
            "can't open file '{}': {}",
            file.display(),
            super::io_reason(&e)
        ),
    }
    let argv = vec![file.to_string_lossy().into_owned()];
    let interp = crate::interpreter(&fxvm_vm::Config {
        argv,
        path: super::package_path(&target.site_packages),
        ..Default::default()
    });
    let result = interp.enter(|vm| {
        let out = run_trace(vm, target, format);
        fxvm_vm::script::flush_std(vm);
        match out {
            Ok(text) => Ok(Some(text)),
            // The command line named something that is not there: one line.
            Err(exc) if exc.class().name().to_string() == "CliError" => {
                let message = exc
                    .as_object()
                    .str(vm)
                    .map(|s| s.lossy().into_owned())
                    .unwrap_or_default();
                Err(anyhow::anyhow!(message))
            }
            Err(exc) => {
                drop_cli_frames(&exc, vm);
                vm.print_exception(exc);
                Ok(None)
            }
        }
    });
    // Exiting is all that is left; the OS frees the heap faster.
    std::mem::forget(interp);
    result
}

/// Drops the traceback's leading entries in `torch.fx._cli` (fxvm's own
/// driver), so a traceback starts in the user's script.
fn drop_cli_frames(exc: &rustpython_vm::builtins::PyBaseExceptionRef, vm: &VirtualMachine) {
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

fn run_trace(vm: &VirtualMachine, target: &Target, format: Format) -> PyResult<String> {
    let cli = vm
        .import("torch.fx._cli", 0)?
        .get_attr("fx", vm)?
        .get_attr("_cli", vm)?;
    let opt = |v: &Option<String>| {
        v.as_ref()
            .map_or_else(|| vm.ctx.none(), |s| vm.ctx.new_str(s.as_str()).into())
    };
    let strings = |items: &[String]| {
        vm.ctx.new_list(
            items
                .iter()
                .map(|c| vm.ctx.new_str(c.as_str()).into())
                .collect(),
        )
    };
    let concrete = strings(&target.concrete);
    let args: Vec<rustpython_vm::PyObjectRef> = vec![
        vm.ctx
            .new_str(target.file.to_string_lossy().into_owned())
            .into(),
        opt(&target.module),
        opt(&target.function),
        vm.ctx.new_str(format.name()).into(),
        concrete.into(),
        strings(&target.example).into(),
        strings(&target.dynamic).into(),
    ];
    let text = cli.get_attr("trace_file", vm)?.call(
        rustpython_vm::function::FuncArgs::new(args, rustpython_vm::function::KwArgs::default()),
        vm,
    )?;
    Ok(text.str(vm)?.text(vm)?.to_owned())
}

pub(crate) fn run(args: TraceArgs) -> anyhow::Result<ExitStatus> {
    let Some(text) = traced_text(&args.target, args.format)? else {
        return Ok(ExitStatus::Failure);
    };
    match &args.output {
        Some(path) => write_file(path, &text)?,
        None => super::out(format_args!("{text}")),
    }
    Ok(ExitStatus::Success)
}

pub(crate) fn write_file(path: &Path, text: &str) -> anyhow::Result<()> {
    std::fs::write(path, text)
        .map_err(|e| anyhow::anyhow!("can't write '{}': {}", path.display(), super::io_reason(&e)))
}
