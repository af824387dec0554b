//! A count of the changes that can invalidate what was captured from a
//! module: a `training` flag set, a parameter, buffer or submodule
//! registered, replaced or deleted (`nn.Module.__setattr__`, `register_*`,
//! `add_module`, `__delattr__` report them). A compiled module compares it
//! with the count its graphs were checked at and checks them again only
//! when it moved, so its common call reads one number. It counts across
//! all interpreters of the process: a change elsewhere costs one needless
//! check, never a missed one.

use std::sync::atomic::{AtomicU64, Ordering};

static CHANGES: AtomicU64 = AtomicU64::new(0);

/// How many module-state changes the process has seen.
pub fn epoch() -> u64 {
    CHANGES.load(Ordering::Acquire)
}

pub(crate) fn changed() {
    CHANGES.fetch_add(1, Ordering::AcqRel);
}
