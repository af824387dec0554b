//! Collecting the older generations of RustPython's cycle collector.
//!
//! RustPython 0.5 collects only its youngest generation by itself (after
//! every 2,000 tracked allocations); a cycle alive at one of those
//! collections moves to generation 1 and stays there, garbage or not, until
//! a script calls `gc.collect()`. A loop of `symbolic_trace` calls grew by
//! ~2 MB per trace that way (graphs, nodes and modules are cycles). CPython
//! collects generation 1 after `threshold1` young collections and the oldest
//! generation when `threshold2` of those have passed and it has grown by a
//! quarter since the last full collection;
//! [`collect_if_due`] applies the same rule, counted in objects, and is
//! called where fxvm's natives run often: every native op and every traced
//! node. It costs six atomic reads when nothing is due, and does nothing
//! while `gc.disable()` is in effect.

use std::sync::atomic::{AtomicUsize, Ordering};

use rustpython_vm::gc_state::gc_state;

/// Objects in the oldest generation just after the last full collection.
static LONG_LIVED: AtomicUsize = AtomicUsize::new(0);

/// Collections of generation 1 since the last full collection.
static MIDDLE_SINCE_FULL: AtomicUsize = AtomicUsize::new(0);

/// Collects generation 1 once it holds `threshold0 × threshold1` objects
/// (what that many young collections promote at most), then the oldest
/// generation too once `threshold2` such collections have passed since the
/// last full one and it grew by over a quarter (and by at least as much)
/// since then — CPython's rule. Without the count, the first op after a
/// large import (transformers: ~100k objects) walked all of them twice.
pub fn collect_if_due() {
    let gc = gc_state();
    let (t0, t1, t2) = gc.get_threshold();
    let batch = t0 as usize * t1 as usize;
    let (_, middle, _) = gc.get_count();
    if batch == 0 || middle < batch || !gc.is_enabled() {
        return;
    }
    gc.collect(1);
    if MIDDLE_SINCE_FULL.fetch_add(1, Ordering::Relaxed) + 1 < t2 as usize {
        return;
    }
    let oldest = gc.get_count().2;
    let long_lived = LONG_LIVED.load(Ordering::Relaxed);
    if oldest > long_lived + (long_lived / 4).max(batch) {
        gc.collect(2);
        LONG_LIVED.store(gc.get_count().2, Ordering::Relaxed);
        MIDDLE_SINCE_FULL.store(0, Ordering::Relaxed);
    }
}
