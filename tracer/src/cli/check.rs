//! `fxvm check`: compare traced output with golden files, as a unified diff.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;

use super::ExitStatus;
use super::trace::{Format, Target, traced_text, write_file};
use crate::diff::unified_diff;

/// Check traced output against golden files (a unified diff on mismatch).
#[derive(Debug, Args)]
#[command(
    after_help = "A directory checks every *.py with goldens beside it, named <stem>.<format>\n(model.py → model.code, model.graph, model.tabular, model.readable, model.dot, model.svg, model.html).\nA mismatch in a form that shows the graph (graph, dot, svg, html) also lists the nodes\nadded, removed and changed.\n\nExamples:\n  fxvm check model.py --expect model.code\n  fxvm check model.py --expect model.graph --format graph --bless\n  fxvm check fixtures/models/"
)]
pub(crate) struct CheckArgs {
    #[command(flatten)]
    target: Target,
    /// The golden file to compare with (required for a single script).
    #[arg(long, value_name = "GOLDEN")]
    expect: Option<PathBuf>,
    /// The form to compare (for a single script).
    #[arg(long, value_enum, default_value = "code")]
    format: Format,
    /// Write the traced output as the new golden instead of comparing.
    #[arg(long)]
    bless: bool,
}

/// How one comparison ended.
enum Outcome {
    Passed,
    Blessed,
    Failed,
    /// The script or its trace raised (the traceback was printed).
    Raised,
}

fn check_one(
    target: &Target,
    format: Format,
    golden: &Path,
    bless: bool,
) -> anyhow::Result<Outcome> {
    let Some(actual) = traced_text(target, format)? else {
        return Ok(Outcome::Raised);
    };
    if bless {
        write_file(golden, &actual)?;
        return Ok(Outcome::Blessed);
    }
    let expected = std::fs::read_to_string(golden).map_err(|e| {
        anyhow::anyhow!(
            "can't read golden '{}': {} (run with --bless to create it)",
            golden.display(),
            super::io_reason(&e)
        )
    })?;
    if expected == actual {
        return Ok(Outcome::Passed);
    }
    let color = std::io::stdout().is_terminal();
    super::out(format_args!(
        "{}",
        unified_diff(
            &expected,
            &actual,
            &golden.display().to_string(),
            "traced",
            color
        )
    ));
    // Forms that show a graph (graph, dot, svg, html) also get a per-node account.
    if let (Some(before), Some(after)) = (
        crate::structure::parse(&expected),
        crate::structure::parse(&actual),
    ) {
        super::out(format_args!(
            "{}",
            crate::structure::structural_diff(&before, &after)
        ));
    }
    Ok(Outcome::Failed)
}

/// Every `*.py` in `dir` with its goldens: `(script, format, golden)`.
fn goldens_in(dir: &Path) -> std::io::Result<Vec<(PathBuf, Format, PathBuf)>> {
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "py"))
        .collect();
    scripts.sort();
    let mut out = vec![];
    for script in scripts {
        for format in Format::ALL {
            let golden = script.with_extension(format.name());
            if golden.is_file() {
                out.push((script.clone(), format, golden));
            }
        }
    }
    Ok(out)
}

pub(crate) fn run(args: CheckArgs) -> anyhow::Result<ExitStatus> {
    if args.target.file.is_dir() {
        return run_dir(&args);
    }
    let Some(golden) = &args.expect else {
        anyhow::bail!("`fxvm check FILE.py` needs --expect GOLDEN (or give a directory)");
    };
    Ok(
        match check_one(&args.target, args.format, golden, args.bless)? {
            Outcome::Passed => {
                super::outln!(
                    "ok: {} matches {}",
                    args.target.file.display(),
                    golden.display()
                );
                ExitStatus::Success
            }
            Outcome::Blessed => {
                super::outln!("blessed: wrote {}", golden.display());
                ExitStatus::Success
            }
            Outcome::Failed | Outcome::Raised => ExitStatus::Failure,
        },
    )
}

fn run_dir(args: &CheckArgs) -> anyhow::Result<ExitStatus> {
    let dir = &args.target.file;
    let cases = goldens_in(dir).map_err(|e| {
        anyhow::anyhow!(
            "can't read directory '{}': {}",
            dir.display(),
            super::io_reason(&e)
        )
    })?;
    if cases.is_empty() {
        anyhow::bail!(
            "no goldens in {}: expected <stem>.<format> files beside the scripts",
            dir.display()
        );
    }
    let (mut passed, mut failed) = (0, 0);
    for (script, format, golden) in cases {
        let target = Target {
            file: script.clone(),
            ..args.target.clone()
        };
        // Each case runs in its own interpreter; a bug that panics in one
        // must not cost the summary of the others.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_one(&target, format, &golden, args.bless)
        }))
        .unwrap_or_else(|_| Err(anyhow::anyhow!("fxvm internal error (see above)")));
        let why = match outcome {
            Ok(Outcome::Passed | Outcome::Blessed) => {
                passed += 1;
                continue;
            }
            Ok(Outcome::Failed) => String::new(),
            Ok(Outcome::Raised) => ": the trace raised".to_owned(),
            Err(e) => format!(": {e:#}"),
        };
        super::outln!("FAILED: {} ({}){why}", script.display(), format.name());
        failed += 1;
    }
    super::outln!("{passed} passed, {failed} failed");
    Ok(if failed > 0 {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
