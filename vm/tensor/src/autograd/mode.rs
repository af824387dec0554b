//! Grad mode and inference mode: per thread, as in PyTorch; anomaly
//! detection: for the whole process, as in PyTorch.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

static ANOMALY: AtomicBool = AtomicBool::new(false);
static ANOMALY_CHECKS_NAN: AtomicBool = AtomicBool::new(true);

/// `torch.is_anomaly_enabled()`: backward passes check what each node returns.
pub fn is_anomaly_enabled() -> bool {
    ANOMALY.load(Ordering::Relaxed)
}

/// `torch.is_anomaly_check_nan_enabled()`.
pub fn is_anomaly_check_nan_enabled() -> bool {
    ANOMALY_CHECKS_NAN.load(Ordering::Relaxed)
}

/// `torch.set_anomaly_enabled(enabled, check_nan)`.
pub fn set_anomaly_enabled(enabled: bool, check_nan: bool) {
    ANOMALY.store(enabled, Ordering::Relaxed);
    ANOMALY_CHECKS_NAN.store(check_nan, Ordering::Relaxed);
}

thread_local! {
    static GRAD: Cell<bool> = const { Cell::new(true) };
    static INFERENCE: Cell<bool> = const { Cell::new(false) };
}

/// Whether ops record their history (`torch.is_grad_enabled()`).
pub fn is_grad_enabled() -> bool {
    GRAD.with(Cell::get)
}

/// Sets grad mode for this thread; returns the previous mode.
pub fn set_grad_enabled(on: bool) -> bool {
    GRAD.with(|g| g.replace(on))
}

/// `torch.is_inference_mode_enabled()`.
pub fn is_inference_mode() -> bool {
    INFERENCE.with(Cell::get)
}

/// Whether ops record their history: grad mode on, outside inference mode
/// (where PyTorch records nothing, `enable_grad` or not).
pub fn records_history() -> bool {
    is_grad_enabled() && !is_inference_mode()
}

/// Sets inference mode for this thread; returns the previous mode.
pub fn set_inference_mode(on: bool) -> bool {
    INFERENCE.with(|g| g.replace(on))
}

/// Grad mode set to `on` until dropped, then restored.
#[must_use = "the mode lasts as long as the guard"]
pub struct GradMode(bool);

impl GradMode {
    pub fn set(on: bool) -> GradMode {
        GradMode(set_grad_enabled(on))
    }
}

impl Drop for GradMode {
    fn drop(&mut self) {
        set_grad_enabled(self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_guard_restores_the_mode_it_found() {
        assert!(is_grad_enabled());
        {
            let _off = GradMode::set(false);
            assert!(!is_grad_enabled());
            {
                let _on = GradMode::set(true);
                assert!(is_grad_enabled());
            }
            assert!(!is_grad_enabled());
        }
        assert!(is_grad_enabled());
    }
}
