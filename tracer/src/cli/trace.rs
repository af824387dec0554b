//! `fxvm trace`: import a script, trace its model, print one form of it.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::ExitStatus;
use super::session::{Failure, Session, Target};

/// The form to print (or, for `outputs`, to write).
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
    /// The model's outputs on its seeded --example inputs, as safetensors (a numeric snapshot)
    Outputs,
}

impl Format {
    pub(crate) const ALL: [Format; 8] = [
        Format::Graph,
        Format::Code,
        Format::Tabular,
        Format::Readable,
        Format::Dot,
        Format::Svg,
        Format::Html,
        Format::Outputs,
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
            Format::Outputs => "outputs",
        }
    }

    /// The extension of a golden in this form (`model.code`,
    /// `model.outputs.safetensors`).
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Format::Outputs => "outputs.safetensors",
            text => text.name(),
        }
    }
}

/// What to trace, as the command line gives it (shared by `trace` and `check`).
#[derive(Debug, Args, Clone)]
pub(crate) struct TargetArgs {
    /// Trace this expression, evaluated in the script's namespace (e.g. "GPT(GPTConfig(n_layer=2))").
    #[arg(long, value_name = "EXPR", conflicts_with = "function")]
    pub(crate) module: Option<String>,
    /// Trace this function of the script.
    #[arg(long, value_name = "NAME")]
    pub(crate) function: Option<String>,
    /// Specialise an argument: NAME=VALUE (a Python literal, or PH for a placeholder). Repeatable.
    #[arg(long, value_name = "NAME=VALUE")]
    pub(crate) concrete: Vec<String>,
    /// Trace with an example input of this shape (and dtype, float32 by default): NAME=2x8[:int64]. Repeatable; shape-dependent Python is then answered from the examples and leaves guards. For outputs, floats are drawn from randn and integers from randint(0, HIGH) (NAME=2x8:int64:HIGH, 10 by default).
    #[arg(long, value_name = "NAME=SHAPE[:DTYPE]")]
    pub(crate) example: Vec<String>,
    /// Make these dims of an example input symbolic: NAME:DIM[,DIM] (or NAME:all). Repeatable.
    #[arg(long, value_name = "NAME:DIMS", requires = "example")]
    pub(crate) dynamic: Vec<String>,
    /// Also import pure-Python packages from DIR (repeatable; PYTHONPATH and an active virtualenv are used too).
    #[arg(long = "site-packages", value_name = "DIR")]
    pub(crate) site_packages: Vec<PathBuf>,
}

impl TargetArgs {
    pub(crate) fn target(&self, file: PathBuf) -> Target {
        Target {
            file,
            module: self.module.clone(),
            function: self.function.clone(),
            concrete: self.concrete.clone(),
            example: self.example.clone(),
            dynamic: self.dynamic.clone(),
            seed: 0,
        }
    }
}

/// Trace a model in a script and print its graph, code, table or readable form.
#[derive(Debug, Args)]
#[command(
    after_help = "Without --module or --function, the script's only nn.Module subclass that can be built\nwithout arguments is traced.\n\nExamples:\n  fxvm trace model.py\n  fxvm trace gpt.py --module \"GPT(GPTConfig(n_layer=2))\" --format graph\n  fxvm trace ops.py --function attention --concrete causal=True -o attention.code\n  fxvm trace gpt.py --example idx=1x8:int64 --dynamic idx:1 --format readable"
)]
pub(crate) struct TraceArgs {
    /// The script to import (as a module, not `__main__`).
    #[arg(value_name = "FILE.py")]
    file: PathBuf,
    #[command(flatten)]
    target: TargetArgs,
    /// What to print.
    #[arg(long, value_enum, default_value = "code")]
    format: Format,
    /// Write to this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

/// Renders `target` in each of `forms` in a fresh interpreter; `Ok(None)`
/// when the script or the trace raised (the traceback was printed).
pub(crate) fn rendered(
    target: &Target,
    forms: &[Format],
    site_packages: &[PathBuf],
) -> anyhow::Result<Option<Vec<Vec<u8>>>> {
    check_script(&target.file)?;
    match Session::new(site_packages).render(target, forms) {
        Ok(out) => Ok(Some(out)),
        Err(Failure::Usage(message)) => Err(anyhow::anyhow!(message)),
        Err(Failure::Raised(traceback)) => {
            eprint!("{traceback}");
            Ok(None)
        }
    }
}

/// A clear one-line error for a script path that cannot be one.
pub(crate) fn check_script(file: &Path) -> anyhow::Result<()> {
    match std::fs::metadata(file) {
        Ok(meta) if meta.is_dir() => {
            anyhow::bail!("{} is a directory, not a script", file.display())
        }
        Ok(_) => Ok(()),
        Err(e) => anyhow::bail!(
            "can't open file '{}': {}",
            file.display(),
            super::io_reason(&e)
        ),
    }
}

pub(crate) fn run(args: TraceArgs) -> anyhow::Result<ExitStatus> {
    if args.format == Format::Outputs && args.output.is_none() {
        anyhow::bail!("--format outputs writes safetensors: give the file with -o OUT");
    }
    let target = args.target.target(args.file);
    let Some(mut out) = rendered(&target, &[args.format], &args.target.site_packages)? else {
        return Ok(ExitStatus::Failure);
    };
    let bytes = out.remove(0);
    match &args.output {
        Some(path) => write_file(path, &bytes)?,
        None => super::out(format_args!("{}", String::from_utf8_lossy(&bytes))),
    }
    Ok(ExitStatus::Success)
}

pub(crate) fn write_file(path: &Path, text: &[u8]) -> anyhow::Result<()> {
    std::fs::write(path, text)
        .map_err(|e| anyhow::anyhow!("can't write '{}': {}", path.display(), super::io_reason(&e)))
}
