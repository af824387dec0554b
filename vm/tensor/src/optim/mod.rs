//! Optimizer updates, one call per parameter group: each parameter's
//! element loop fused into one pass over its tensors, in the arithmetic of
//! PyTorch's single-tensor (for-loop) implementation — the same operations
//! in the same order, each rounded to the parameter's dtype — so training
//! follows PyTorch's step for step. Hyper-parameters that depend on the
//! step count (bias corrections) are computed per parameter in double
//! precision from its step tensor, as PyTorch's Python computes them.
//! PyTorch's CPU kernels are compiled with FMA contraction, so each op's
//! `a + b·c` (`add(alpha=)`, `addcmul`, `lerp`) is one fused multiply-add
//! here too, and a division (`addcdiv`) is not.

mod adadelta;
mod adagrad;
mod adam;
mod adamax;
mod asgd;
mod group;
mod nadam;
mod radam;
mod rmsprop;
mod rprop;
mod sgd;

pub use adadelta::Adadelta;
pub use adagrad::Adagrad;
pub use adam::Adam;
pub use adamax::Adamax;
pub use asgd::Asgd;
pub use nadam::NAdam;
pub use radam::RAdam;
pub use rmsprop::RmsProp;
pub use rprop::Rprop;
pub use sgd::Sgd;

use group::Real;

/// The gradient as an update sees it: negated to maximize, plus L2 weight
/// decay (`grad.add(param, alpha=weight_decay)`) when that is not zero.
#[derive(Clone, Copy)]
struct Grad<F> {
    maximize: bool,
    weight_decay: Option<F>,
}

impl<F: Real> Grad<F> {
    fn new(maximize: bool, weight_decay: f64) -> Self {
        Grad {
            maximize,
            weight_decay: (weight_decay != 0.0).then(|| F::from_f64(weight_decay)),
        }
    }

    #[inline(always)]
    fn of(self, g: F, p: F) -> F {
        let g = if self.maximize { -g } else { g };
        match self.weight_decay {
            Some(wd) => wd.mul_add(p, g),
            None => g,
        }
    }
}

#[cfg(test)]
mod tests;
