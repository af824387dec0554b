//! `fxvm lint`: report what symbolic tracing cannot handle, without running.

use std::path::PathBuf;

use clap::Args;

use super::ExitStatus;
use fxvm_lint::lint_source;

/// Report every construct in `forward` methods that symbolic tracing cannot handle (the script is parsed, not run).
#[derive(Debug, Args)]
#[command(
    after_help = "Each finding is a line `file:line:col: message`; the exit status is 1 when there are any.\n\nExamples:\n  fxvm lint model.py\n  fxvm lint model.py && fxvm trace model.py"
)]
pub(crate) struct LintArgs {
    /// The script to check.
    #[arg(value_name = "FILE.py")]
    file: PathBuf,
}

pub(crate) fn run(args: LintArgs) -> anyhow::Result<ExitStatus> {
    let shown = args.file.display();
    let source = std::fs::read_to_string(&args.file)
        .map_err(|e| anyhow::anyhow!("can't open file '{shown}': {}", super::io_reason(&e)))?;
    let findings = lint_source(&source)
        .map_err(|f| anyhow::anyhow!("{shown}:{}:{}: {}", f.line, f.column, f.message))?;
    for f in &findings {
        super::outln!("{shown}:{}:{}: {}", f.line, f.column, f.message);
    }
    Ok(if findings.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
