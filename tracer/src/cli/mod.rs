//! The `fxvm` command line: argument parsing and dispatch to subcommands.

mod run;

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
}

/// Parses the process arguments and runs the chosen subcommand.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Run(args) => run::run(args),
    };
    ExitCode::from(status)
}

/// Prints a one-line CLI error and returns the usage-error status.
fn usage_error(message: impl std::fmt::Display) -> u8 {
    eprintln!("fxvm: error: {message}");
    2
}
