//! Per-op time of replayed graphs while profiling is on (`fxvm run
//! --profile`, `fxvm.profile()`): each plan times its steps under labels
//! made when it is built, and a plan dropped before the report (its
//! function reset or gone) leaves its totals behind for it.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether replays time each step.
static PROFILING: AtomicBool = AtomicBool::new(false);

/// Label → (calls, nanoseconds) of the plans dropped so far.
static RETIRED: Mutex<BTreeMap<String, (u64, u64)>> = Mutex::new(BTreeMap::new());

pub(crate) fn set_profiling(on: bool) {
    PROFILING.store(on, Ordering::Relaxed);
}

pub(crate) fn profiling() -> bool {
    PROFILING.load(Ordering::Relaxed)
}

/// One plan's per-step time.
#[derive(Debug)]
pub(crate) struct Timings {
    /// What each step runs, as the report names it.
    labels: Vec<String>,
    /// Per step: calls and nanoseconds.
    counts: Mutex<Vec<(u64, u64)>>,
}

impl Timings {
    pub(crate) fn new(labels: Vec<String>) -> Timings {
        let counts = Mutex::new(vec![(0, 0); labels.len()]);
        Timings { labels, counts }
    }

    pub(crate) fn labels(&self) -> &[String] {
        &self.labels
    }

    pub(crate) fn record(&self, step: usize, nanos: u64) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts[step].0 += 1;
        counts[step].1 += nanos;
    }

    /// `(step, label, calls, seconds)` of each step run while profiling.
    pub(crate) fn rows(&self) -> Vec<(usize, &str, u64, f64)> {
        let counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        counts
            .iter()
            .zip(&self.labels)
            .enumerate()
            .filter(|(_, ((calls, _), _))| *calls > 0)
            .map(|(i, (&(calls, nanos), label))| (i, label.as_str(), calls, nanos as f64 * 1e-9))
            .collect()
    }
}

impl Drop for Timings {
    fn drop(&mut self) {
        let counts = self.counts.get_mut().unwrap_or_else(|e| e.into_inner());
        let mut retired = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
        for (&(calls, nanos), label) in counts.iter().zip(&self.labels) {
            if calls > 0 {
                let total = retired.entry(label.clone()).or_default();
                total.0 += calls;
                total.1 += nanos;
            }
        }
    }
}

/// `(label, calls, seconds)` of the plans dropped so far.
pub(crate) fn retired() -> Vec<(String, u64, f64)> {
    let retired = RETIRED.lock().unwrap_or_else(|e| e.into_inner());
    retired
        .iter()
        .map(|(label, &(calls, nanos))| (label.clone(), calls, nanos as f64 * 1e-9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_plans_time_is_kept_under_its_labels() {
        let label = "a_dropped_plans_time_is_kept test op".to_owned();
        let timings = Timings::new(vec![label.clone(), "never run".into()]);
        timings.record(0, 1_500_000);
        timings.record(0, 500_000);
        assert_eq!(timings.rows(), [(0, label.as_str(), 2, 2e-3)]);
        drop(timings);
        let kept: Vec<_> = retired().into_iter().filter(|r| r.0 == label).collect();
        assert_eq!(kept, [(label, 2, 2e-3)]);
        assert!(retired().iter().all(|r| r.0 != "never run"));
    }
}
