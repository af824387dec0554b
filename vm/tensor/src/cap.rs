//! A cap on the tensor memory one embedding host's scripts hold: while a
//! thread runs under a [`MemoryCap`] (see [`under`]), every storage created
//! is charged to it until dropped (on any thread), and an allocation that
//! would pass the cap is refused with [`TensorError::MemoryCap`] before it
//! happens — a `MemoryError` for the script, after which the host goes on.

use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Result, TensorError};

/// A limit on live tensor bytes and the bytes live now.
#[derive(Debug)]
pub struct MemoryCap {
    limit: usize,
    live: AtomicUsize,
}

impl MemoryCap {
    pub fn new(limit: usize) -> Arc<MemoryCap> {
        Arc::new(MemoryCap {
            limit,
            live: AtomicUsize::new(0),
        })
    }

    /// Bytes held by live storages charged to this cap.
    pub fn live(&self) -> usize {
        self.live.load(Ordering::Relaxed)
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Arc<MemoryCap>>> = const { RefCell::new(None) };
}

/// Runs `f` with `cap` charged for the storages this thread creates (the
/// previous cap, if any, is restored after, also on unwinding).
pub fn under<R>(cap: &Arc<MemoryCap>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<MemoryCap>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(cap.clone())));
    f()
}

/// Refuses `bytes` more when they would pass this thread's cap.
pub(crate) fn check(bytes: usize) -> Result<()> {
    CURRENT.with(|c| match &*c.borrow() {
        Some(cap) => {
            let live = cap.live();
            if live.saturating_add(bytes) > cap.limit {
                Err(TensorError::MemoryCap {
                    bytes,
                    live,
                    limit: cap.limit,
                })
            } else {
                Ok(())
            }
        }
        None => Ok(()),
    })
}

/// `bytes` of a new storage, held against this thread's cap until dropped.
#[derive(Debug)]
pub(crate) struct Charge {
    cap: Arc<MemoryCap>,
    bytes: usize,
}

impl Charge {
    /// The charge for a new storage of `bytes`, when a cap is in force.
    pub(crate) fn new(bytes: usize) -> Option<Charge> {
        CURRENT.with(|c| {
            c.borrow().as_ref().map(|cap| {
                cap.live.fetch_add(bytes, Ordering::Relaxed);
                Charge {
                    cap: cap.clone(),
                    bytes,
                }
            })
        })
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.cap.live.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Tensor};

    #[test]
    fn storages_count_until_dropped_and_the_cap_refuses_more() {
        let cap = MemoryCap::new(4096);
        under(&cap, || {
            let a = Tensor::zeros(&[256], DType::F32);
            assert_eq!(cap.live(), 1024);
            let view = a.with_layout(a.layout().clone());
            assert_eq!(cap.live(), 1024, "views share the charge");
            assert!(matches!(
                crate::alloc::new_numel(&[1024], DType::F32),
                Err(TensorError::MemoryCap {
                    bytes: 4096,
                    live: 1024,
                    limit: 4096
                })
            ));
            drop(a);
            drop(view);
            assert_eq!(cap.live(), 0);
            assert!(crate::alloc::new_numel(&[1024], DType::F32).is_ok());
        });
        // Outside the cap nothing is charged or refused.
        let b = Tensor::zeros(&[4096], DType::F32);
        assert_eq!(cap.live(), 0);
        drop(b);
    }
}
