//! Pending snapshots (`*.new`, written by a run that found a mismatch or a
//! missing golden): `--review` walks them one by one, `--accept` takes all.

use std::io::{BufRead, IsTerminal};
use std::path::{Path, PathBuf};

use super::case::{Case, Snapshot};
use super::verdict::Difference;
use crate::cli::session::Session;
use crate::cli::trace::Format;
use crate::cli::{ExitStatus, out, outln};

/// The pending snapshots of `cases`, in order.
fn pending(cases: &[Case]) -> Vec<(&Case, &Snapshot)> {
    cases
        .iter()
        .flat_map(|case| case.snapshots.iter().map(move |s| (case, s)))
        .filter(|(_, snapshot)| snapshot.pending().is_file())
        .collect()
}

/// Moves every pending snapshot onto its golden.
pub(crate) fn accept_all(cases: &[Case]) -> anyhow::Result<ExitStatus> {
    let pending = pending(cases);
    if pending.is_empty() {
        outln!("no pending snapshots");
        return Ok(ExitStatus::Success);
    }
    for (_, snapshot) in &pending {
        accept(snapshot)?;
        outln!("accepted: {}", snapshot.golden.display());
    }
    outln!("{} accepted", pending.len());
    Ok(ExitStatus::Success)
}

fn accept(snapshot: &Snapshot) -> anyhow::Result<()> {
    std::fs::rename(snapshot.pending(), &snapshot.golden).map_err(|e| {
        anyhow::anyhow!(
            "can't move '{}' to '{}': {}",
            snapshot.pending().display(),
            snapshot.golden.display(),
            crate::cli::io_reason(&e)
        )
    })
}

fn reject(snapshot: &Snapshot) -> anyhow::Result<()> {
    std::fs::remove_file(snapshot.pending()).map_err(|e| {
        anyhow::anyhow!(
            "can't remove '{}': {}",
            snapshot.pending().display(),
            crate::cli::io_reason(&e)
        )
    })
}

/// Shows each pending snapshot against its golden and asks what to do with
/// it, reading one answer per line from standard input.
pub(crate) fn review(cases: &[Case], site_packages: &[PathBuf]) -> anyhow::Result<ExitStatus> {
    let pending = pending(cases);
    if pending.is_empty() {
        outln!("no pending snapshots");
        return Ok(ExitStatus::Success);
    }
    let color = std::io::stdout().is_terminal();
    // Numeric snapshots are compared by the interpreter, made on first need.
    let mut session: Option<Session> = None;
    let (mut accepted, mut rejected, mut skipped) = (0, 0, 0);
    let mut answers = std::io::stdin().lock().lines();
    for (i, (case, snapshot)) in pending.iter().enumerate() {
        outln!(
            "\n[{}/{}] {} ({}): {}",
            i + 1,
            pending.len(),
            case.label,
            snapshot.format.name(),
            snapshot.pending().display()
        );
        out(format_args!(
            "{}",
            show(case, snapshot, &mut session, site_packages, color)?
        ));
        let answer = loop {
            eprint!("accept (a), reject (r), skip (s)? ");
            match answers.next().transpose()? {
                None => break None,
                Some(line) => match line.trim() {
                    "a" | "accept" => break Some('a'),
                    "r" | "reject" => break Some('r'),
                    "s" | "skip" | "" => break Some('s'),
                    _ => eprintln!("answer a, r or s"),
                },
            }
        };
        match answer {
            Some('a') => {
                accept(snapshot)?;
                accepted += 1;
            }
            Some('r') => {
                reject(snapshot)?;
                rejected += 1;
            }
            Some(_) => skipped += 1,
            // Input ended: the rest stay pending.
            None => {
                eprintln!();
                skipped += pending.len() - i;
                break;
            }
        }
    }
    outln!("{accepted} accepted, {rejected} rejected, {skipped} skipped");
    Ok(ExitStatus::Success)
}

/// The pending snapshot against its golden (all of it when new).
fn show(
    case: &Case,
    snapshot: &Snapshot,
    session: &mut Option<Session>,
    site_packages: &[PathBuf],
    color: bool,
) -> anyhow::Result<String> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|e| {
            anyhow::anyhow!(
                "can't read '{}': {}",
                path.display(),
                crate::cli::io_reason(&e)
            )
        })
    };
    let actual = read(&snapshot.pending())?;
    let expected = if snapshot.golden.is_file() {
        Some(read(&snapshot.golden)?)
    } else {
        None
    };
    let difference = match (snapshot.format, expected) {
        (Format::Outputs, None) => {
            return Ok(format!("a new numeric snapshot ({} bytes)\n", actual.len()));
        }
        (Format::Outputs, Some(expected)) => {
            let session = session.get_or_insert_with(|| Session::new(site_packages));
            match session.compare_outputs(&expected, &actual, case.rtol, case.atol) {
                Ok(Some(report)) => Difference::Numbers(report),
                Ok(None) => Difference::Numbers("within tolerance\n".to_owned()),
                Err(failure) => {
                    Difference::Numbers(format!("can't compare: {}\n", failure.summary()))
                }
            }
        }
        (_, expected) => Difference::Text {
            expected: expected
                .map(|e| String::from_utf8_lossy(&e).into_owned())
                .unwrap_or_default(),
            actual: String::from_utf8_lossy(&actual).into_owned(),
        },
    };
    Ok(difference.report(&snapshot.golden, color))
}
