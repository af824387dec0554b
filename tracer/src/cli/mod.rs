//! The `fxvm` command line: argument parsing and dispatch to subcommands.

mod check;
mod lint;
mod run;
mod trace;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "fxvm",
    version,
    about = "torch.fx in Rust: run and trace PyTorch model scripts",
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

/// Parses the process arguments and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Trace(args) => trace::run(args),
        Command::Check(args) => check::run(args),
        Command::Lint(args) => lint::run(args),
    };
    ExitCode::from(status)
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

/// Prints a one-line CLI error and returns the usage-error status.
fn usage_error(message: impl std::fmt::Display) -> u8 {
    eprintln!("fxvm: error: {message}");
    2
}

/// An I/O error's text without Rust's " (os error N)" suffix.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_owned(),
        None => text,
    }
}
