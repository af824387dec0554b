//! Rprop: each element's own step size, grown while its gradient keeps its
//! sign and shrunk (that step skipped) when the sign flips.

use super::group::{Kernel, Real, advance, check_lengths, update};
use crate::{Result, Tensor};

const OP: &str = "rprop";

#[derive(Clone, Copy, Debug)]
pub struct Rprop {
    pub etaminus: f64,
    pub etaplus: f64,
    pub step_size_min: f64,
    pub step_size_max: f64,
    pub maximize: bool,
}

impl Rprop {
    /// `prevs` holds each parameter's previous (masked) gradient,
    /// `step_sizes` its per-element step sizes.
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        prevs: &[Tensor],
        step_sizes: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("prevs", prevs.len()),
            ("step_sizes", step_sizes.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            advance(&steps[i])?;
            let names = (["param", "prev", "step_size"], ["grad"]);
            let write = [&params[i], &prevs[i], &step_sizes[i]];
            update(OP, i, names, write, [&grads[i]], self)?;
        }
        Ok(())
    }
}

/// `torch.sign`: 0 for 0 and NaN.
#[inline(always)]
fn sign<F: Real>(x: F) -> F {
    if x > F::zero() {
        F::one()
    } else if x < F::zero() {
        -F::one()
    } else {
        F::zero()
    }
}

impl Kernel<3, 1> for Rprop {
    #[inline(always)]
    fn run<F: Real>(&self, [p, prev, size]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let (minus, plus) = (F::from_f64(self.etaminus), F::from_f64(self.etaplus));
        let (lo, hi) = (
            F::from_f64(self.step_size_min),
            F::from_f64(self.step_size_max),
        );
        for (((p, prev), size), &g) in p
            .iter_mut()
            .zip(prev.iter_mut())
            .zip(size.iter_mut())
            .zip(g)
        {
            let g = if self.maximize { -g } else { g };
            let s = sign(g * *prev);
            let factor = if s > F::zero() {
                plus
            } else if s < F::zero() {
                minus
            } else {
                F::one()
            };
            // `clamp_`: NaN stays NaN.
            let scaled = *size * factor;
            *size = if scaled.is_nan() {
                scaled
            } else {
                scaled.max(lo).min(hi)
            };
            let g = if factor == minus { F::zero() } else { g };
            *p = *p + -F::one() * sign(g) * *size;
            *prev = g;
        }
    }
}
