//! Checking one case: render it, compare each form with its golden, and
//! keep what differs as a pending snapshot (`*.new`) for review.

use std::path::Path;
use std::time::Duration;

use super::case::{Case, Snapshot};
use crate::cli::session::{Failure, Session};
use crate::cli::trace::{Format, check_script};
use crate::diff::unified_diff;

/// What a run may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Mismatches and missing goldens leave pending snapshots to review.
    Local,
    /// Nothing is written; a missing golden fails.
    Ci,
    /// What is rendered becomes the golden.
    Bless,
}

/// How one snapshot of a case ended.
pub(crate) enum Verdict {
    Passed,
    Blessed,
    /// The golden differs; `pending` is where its replacement was written.
    Differs {
        difference: Difference,
        pending: Option<String>,
    },
    /// There is no golden yet.
    Missing {
        pending: Option<String>,
    },
    /// The case did not render, or a file could not be read or written.
    Error {
        reason: String,
    },
}

impl Verdict {
    pub(crate) fn passed(&self) -> bool {
        matches!(self, Verdict::Passed | Verdict::Blessed)
    }
}

/// A golden and what was rendered, as far apart as a report shows them.
pub(crate) enum Difference {
    Text {
        expected: String,
        actual: String,
    },
    /// The numeric report of `torch.testing.assert_close` per output.
    Numbers(String),
}

impl Difference {
    /// A unified diff for text (with a per-node account for forms that
    /// show a graph); the worst elements for numbers.
    pub(crate) fn report(&self, golden: &Path, color: bool) -> String {
        match self {
            Difference::Text { expected, actual } => {
                let mut text = unified_diff(
                    expected,
                    actual,
                    &golden.display().to_string(),
                    "traced",
                    color,
                );
                if let (Some(before), Some(after)) = (
                    crate::structure::parse(expected),
                    crate::structure::parse(actual),
                ) {
                    text.push_str(&crate::structure::structural_diff(&before, &after));
                }
                text
            }
            Difference::Numbers(report) => {
                format!("outputs differ from {}:\n{report}", golden.display())
            }
        }
    }
}

/// The verdicts of a case, one per snapshot, and what it printed on the way.
pub(crate) struct CaseResult {
    pub(crate) verdicts: Vec<Verdict>,
    /// A traceback, when the case raised.
    pub(crate) log: String,
    pub(crate) time: Duration,
}

impl CaseResult {
    /// Every snapshot of `case` failed for `reason`.
    pub(crate) fn failed(case: &Case, reason: &str, log: String) -> CaseResult {
        CaseResult {
            verdicts: case
                .snapshots
                .iter()
                .map(|_| Verdict::Error {
                    reason: reason.to_owned(),
                })
                .collect(),
            log,
            time: Duration::ZERO,
        }
    }
}

pub(crate) fn check_case(session: &Session, case: &Case, mode: Mode) -> CaseResult {
    if let Err(e) = check_script(&case.target.file) {
        return CaseResult::failed(case, &e.to_string(), String::new());
    }
    let rendered = match session.render(&case.target, &case.formats()) {
        Ok(rendered) => rendered,
        Err(Failure::Raised(traceback)) => {
            return CaseResult::failed(case, "the trace raised", traceback);
        }
        Err(Failure::Usage(message)) => return CaseResult::failed(case, &message, String::new()),
    };
    let verdicts = case
        .snapshots
        .iter()
        .zip(rendered)
        .map(|(snapshot, actual)| verdict(session, case, snapshot, &actual, mode))
        .collect();
    CaseResult {
        verdicts,
        log: String::new(),
        time: Duration::ZERO,
    }
}

fn verdict(
    session: &Session,
    case: &Case,
    snapshot: &Snapshot,
    actual: &[u8],
    mode: Mode,
) -> Verdict {
    let golden = &snapshot.golden;
    if mode == Mode::Bless {
        return match write(golden, actual) {
            Ok(()) => {
                forget_pending(snapshot);
                Verdict::Blessed
            }
            Err(reason) => Verdict::Error { reason },
        };
    }
    let expected = match std::fs::read(golden) {
        Ok(expected) => expected,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match keep_pending(snapshot, actual, mode) {
                Ok(pending) => Verdict::Missing { pending },
                Err(reason) => Verdict::Error { reason },
            };
        }
        Err(e) => {
            return Verdict::Error {
                reason: format!(
                    "can't read golden '{}': {}",
                    golden.display(),
                    crate::cli::io_reason(&e)
                ),
            };
        }
    };
    if expected == actual {
        if mode == Mode::Local {
            forget_pending(snapshot);
        }
        return Verdict::Passed;
    }
    let difference = if snapshot.format == Format::Outputs {
        match session.compare_outputs(&expected, actual, case.rtol, case.atol) {
            Ok(None) => {
                if mode == Mode::Local {
                    forget_pending(snapshot);
                }
                return Verdict::Passed;
            }
            Ok(Some(report)) => Difference::Numbers(report),
            Err(failure) => {
                return Verdict::Error {
                    reason: format!(
                        "can't compare with '{}': {}",
                        golden.display(),
                        failure.summary()
                    ),
                };
            }
        }
    } else {
        Difference::Text {
            expected: String::from_utf8_lossy(&expected).into_owned(),
            actual: String::from_utf8_lossy(actual).into_owned(),
        }
    };
    match keep_pending(snapshot, actual, mode) {
        Ok(pending) => Verdict::Differs {
            difference,
            pending,
        },
        Err(reason) => Verdict::Error { reason },
    }
}

/// Writes the pending snapshot in [`Mode::Local`]; its path for the report.
fn keep_pending(snapshot: &Snapshot, actual: &[u8], mode: Mode) -> Result<Option<String>, String> {
    if mode != Mode::Local {
        return Ok(None);
    }
    let pending = snapshot.pending();
    write(&pending, actual)?;
    Ok(Some(pending.display().to_string()))
}

/// A golden that matches again leaves no stale replacement behind.
fn forget_pending(snapshot: &Snapshot) {
    // Absent is the usual case; anything else shows at review.
    let _ = std::fs::remove_file(snapshot.pending());
}

/// Writes `bytes` to `path`, creating its folder.
pub(crate) fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let made = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => std::fs::create_dir_all(dir),
        _ => Ok(()),
    };
    made.and_then(|()| std::fs::write(path, bytes))
        .map_err(|e| {
            format!(
                "can't write '{}': {}",
                path.display(),
                crate::cli::io_reason(&e)
            )
        })
}
