//! A JUnit XML report of a run (the format CI systems show as test
//! results): one testcase per case and form, failures carrying the diff.

use std::fmt::Write;
use std::path::Path;
use std::time::Duration;

use quick_xml::escape::escape;

use super::case::Case;
use super::verdict::{CaseResult, Verdict};

pub(crate) fn report(suite: &str, results: &[(&Case, &CaseResult)], elapsed: Duration) -> String {
    let (mut tests, mut failures, mut errors) = (0, 0, 0);
    let mut cases = String::new();
    for (case, result) in results {
        for (snapshot, verdict) in case.snapshots.iter().zip(&result.verdicts) {
            tests += 1;
            let golden = snapshot.golden.display().to_string();
            let _ = write!(
                cases,
                "    <testcase classname=\"{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
                text(&case.label),
                snapshot.format.name(),
                text(&case.target.file.display().to_string()),
                result.time.as_secs_f64()
            );
            let (tag, message, body) = match verdict {
                Verdict::Passed | Verdict::Blessed => {
                    cases.push_str("/>\n");
                    continue;
                }
                Verdict::Differs { difference, .. } => (
                    "failure",
                    format!("differs from {golden}"),
                    difference.report(Path::new(&golden), false),
                ),
                Verdict::Missing { .. } => {
                    ("failure", format!("no golden {golden}"), String::new())
                }
                Verdict::Error { reason } => ("error", reason.clone(), result.log.clone()),
            };
            if tag == "failure" {
                failures += 1;
            } else {
                errors += 1;
            }
            let _ = writeln!(
                cases,
                ">\n      <{tag} message=\"{}\" type=\"{}\">{}</{tag}>\n    </testcase>",
                text(&message),
                if tag == "failure" {
                    "mismatch"
                } else {
                    "error"
                },
                text(&body)
            );
        }
    }
    let suite = text(suite);
    let time = elapsed.as_secs_f64();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <testsuites name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{time:.3}\">\n  \
         <testsuite name=\"{suite}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{time:.3}\">\n\
         {cases}  </testsuite>\n</testsuites>\n"
    )
}

/// Text as XML 1.0 allows it: escaped, and without the control characters
/// it cannot carry at all (a colour code in a traceback).
fn text(raw: &str) -> String {
    let clean: String = raw
        .chars()
        .map(|c| match c {
            '\t' | '\n' | '\r' => c,
            c if c < ' ' || c == '\u{fffe}' || c == '\u{ffff}' => '\u{fffd}',
            c => c,
        })
        .collect();
    escape(clean.as_str()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::check::case::Snapshot;
    use crate::cli::check::verdict::Difference;
    use crate::cli::session::Target;
    use crate::cli::trace::Format;
    use std::path::PathBuf;

    #[test]
    fn failures_carry_their_diff_escaped() {
        let case = Case {
            label: "a<b".into(),
            target: Target {
                file: PathBuf::from("m.py"),
                ..Target::default()
            },
            snapshots: [Format::Code, Format::Graph, Format::Dot]
                .into_iter()
                .map(|format| Snapshot {
                    format,
                    golden: PathBuf::from(format!("s/m.{}", format.name())),
                })
                .collect(),
            rtol: None,
            atol: None,
        };
        let result = CaseResult {
            verdicts: vec![
                Verdict::Passed,
                Verdict::Differs {
                    difference: Difference::Text {
                        expected: "x & y\n".into(),
                        actual: "x & z\n".into(),
                    },
                    pending: None,
                },
                Verdict::Error {
                    reason: "the trace raised".into(),
                },
            ],
            log: "Traceback\x1b[0m\n".into(),
            time: Duration::from_millis(12),
        };
        let xml = report("fxvm check", &[(&case, &result)], Duration::from_millis(20));
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" errors=\"1\""),
            "{xml}"
        );
        assert!(xml.contains("classname=\"a&lt;b\" name=\"code\""), "{xml}");
        assert!(xml.contains("-x &amp; y\n+x &amp; z\n</failure>"), "{xml}");
        assert!(xml.contains(">Traceback\u{fffd}[0m\n</error>"), "{xml}");
    }
}
