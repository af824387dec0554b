//! A case of `fxvm check`: what to trace and the goldens to compare with.

use std::path::{Path, PathBuf};

use crate::cli::session::Target;
use crate::cli::trace::Format;

/// One script (or model of a script) checked in one or more forms.
#[derive(Debug, Clone)]
pub(crate) struct Case {
    /// How reports name the case: the manifest's name, or the script's path.
    pub(crate) label: String,
    pub(crate) target: Target,
    pub(crate) snapshots: Vec<Snapshot>,
    /// Tolerances of numeric snapshots (`torch.testing.assert_close`'s
    /// per-dtype defaults when unset).
    pub(crate) rtol: Option<f64>,
    pub(crate) atol: Option<f64>,
}

/// One form of a case and where its golden lives.
#[derive(Debug, Clone)]
pub(crate) struct Snapshot {
    pub(crate) format: Format,
    pub(crate) golden: PathBuf,
}

impl Snapshot {
    /// Where a mismatching or missing golden's replacement waits for review
    /// (`model.code.new`).
    pub(crate) fn pending(&self) -> PathBuf {
        pending_of(&self.golden)
    }
}

fn pending_of(golden: &Path) -> PathBuf {
    let mut name = golden.as_os_str().to_owned();
    name.push(".new");
    PathBuf::from(name)
}

impl Case {
    pub(crate) fn formats(&self) -> Vec<Format> {
        self.snapshots.iter().map(|s| s.format).collect()
    }
}

/// Keeps partition `k` (1-based) of `n`: every `n`th case from the `k`th, so
/// the partitions of one list cover each case exactly once.
pub(crate) fn partition(cases: Vec<Case>, k: usize, n: usize) -> Vec<Case> {
    cases
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % n == k - 1)
        .map(|(_, case)| case)
        .collect()
}

/// `K/N` with `1 ≤ K ≤ N`.
pub(crate) fn parse_partition(text: &str) -> Result<(usize, usize), String> {
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
    match parsed {
        Some((k, n)) if 1 <= k && k <= n => Ok((k, n)),
        _ => Err(format!(
            "expected K/N with 1 <= K <= N (e.g. 2/4), got '{text}'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(label: &str) -> Case {
        Case {
            label: label.to_owned(),
            target: Target::default(),
            snapshots: vec![],
            rtol: None,
            atol: None,
        }
    }

    #[test]
    fn partitions_cover_every_case_exactly_once() {
        let labels: Vec<String> = (0..11).map(|i| format!("c{i}")).collect();
        let cases: Vec<Case> = labels.iter().map(|l| case(l)).collect();
        let mut seen: Vec<String> = (1..=4)
            .flat_map(|k| partition(cases.clone(), k, 4))
            .map(|c| c.label)
            .collect();
        seen.sort();
        let mut want = labels.clone();
        want.sort();
        assert_eq!(seen, want);
        let sizes: Vec<usize> = (1..=4)
            .map(|k| partition(cases.clone(), k, 4).len())
            .collect();
        assert_eq!(sizes, [3, 3, 3, 2]);
    }

    #[test]
    fn partition_specs_are_checked() {
        assert_eq!(parse_partition("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "4", "a/b", "1/0"] {
            assert!(parse_partition(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pending_snapshots_sit_beside_their_golden() {
        let snapshot = Snapshot {
            format: Format::Outputs,
            golden: PathBuf::from("snapshots/gpt.outputs.safetensors"),
        };
        assert_eq!(
            snapshot.pending(),
            PathBuf::from("snapshots/gpt.outputs.safetensors.new")
        );
    }
}
