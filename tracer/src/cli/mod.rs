//! The `fxvm` command line: argument parsing and dispatch to subcommands.

mod allocator;
mod check;
mod lint;
mod run;
mod session;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "fxvm",
    version,
    about = "torch.fx in Rust: run and trace PyTorch model scripts",
    after_help = "Built-in native packages: torch (with torch.nn, torch.fx, torch.optim), numpy (numpy 2.x: \
                  arrays, ufuncs, linalg, legacy np.random and default_rng streams, .npy/.npz, memmap) and safetensors.",
    arg_required_else_help = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    Run(run::RunArgs),
    Trace(trace::TraceArgs),
    Check(check::CheckArgs),
    Lint(lint::LintArgs),
}

/// How a command ended; the process's exit status follows from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Everything asked for was done (0).
    Success,
    /// The command ran and the answer is no: a check failed, lint found
    /// something, or the traced script raised (its traceback printed) (1).
    Failure,
    /// The status a script chose (`sys.exit(n)`, low byte, as python).
    Script(u8),
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        ExitCode::from(match status {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Script(code) => code,
        })
    }
}

/// The status of a command that could not do its job at all (a bad
/// invocation, an unreadable file): its error is printed as one line.
const USAGE_ERROR: u8 = 2;

/// Parses the process arguments and runs the chosen subcommand; an error
/// ends as one line `fxvm: error: …` and status 2.
pub fn main() -> ExitCode {
    allocator::tune();
    fxvm_tensor::threads::join_global_pool();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Check(args) => check::run(args),
        Command::Lint(args) => lint::run(args),
    };
    match result {
        Ok(status) => status.into(),
        Err(e) => {
            eprintln!("fxvm: error: {e:#}");
            ExitCode::from(USAGE_ERROR)
        }
    }
}

/// Writes to stdout; a reader that went away (`| head`) ends the output
/// quietly instead of panicking, as `print!` would.
fn out(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(text).and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("fxvm: error: can't write to stdout: {}", io_reason(&e));
    }
}

/// `println!` through [`out`].
macro_rules! outln {
    ($($arg:tt)*) => { $crate::cli::out(format_args!("{}\n", format_args!($($arg)*))) };
}
pub(crate) use outln;

/// Where user packages are found, as CPython finds them, behind fxvm's own
/// frozen `torch`: the `--site-packages` directories, then `PYTHONPATH`,
/// then the active virtualenv's site-packages (`$VIRTUAL_ENV`).
fn package_path(site_packages: &[std::path::PathBuf]) -> Vec<String> {
    let mut path: Vec<String> = site_packages
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(extra) = std::env::var_os("PYTHONPATH") {
        path.extend(
            std::env::split_paths(&extra)
                .filter(|p| !p.as_os_str().is_empty())
                .map(|p| p.to_string_lossy().into_owned()),
        );
    }
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        let lib = std::path::Path::new(&venv).join("lib");
        let mut found: Vec<String> = std::fs::read_dir(&lib)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("python3"))
            .map(|e| e.path().join("site-packages"))
            .filter(|p| p.is_dir())
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        found.sort();
        path.extend(found);
    }
    path
}

/// An I/O error's text without Rust's " (os error N)" suffix.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
