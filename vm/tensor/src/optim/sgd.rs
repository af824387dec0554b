//! SGD: momentum (with dampening, or Nesterov's look-ahead), weight decay.

use super::Grad;
use super::group::{Kernel, Real, check_lengths, update};
use crate::{Result, Tensor};

const OP: &str = "sgd";

#[derive(Clone, Copy, Debug)]
pub struct Sgd {
    pub lr: f64,
    pub momentum: f64,
    pub dampening: f64,
    pub weight_decay: f64,
    pub nesterov: bool,
    pub maximize: bool,
}

/// One parameter's rule; `fresh` when its momentum buffer is new (it
/// starts as the gradient rather than decaying).
struct Rule<'a> {
    sgd: &'a Sgd,
    fresh: bool,
}

impl Sgd {
    /// Updates `params` from `grads`; with momentum, `buffers` holds each
    /// parameter's momentum buffer, and the indices in `fresh` name buffers
    /// created for this step (they are set to the gradient).
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        buffers: &[Tensor],
        fresh: &[usize],
    ) -> Result<()> {
        check_lengths(OP, params.len(), &[("grads", grads.len())])?;
        if self.momentum == 0.0 {
            for (i, (p, g)) in params.iter().zip(grads).enumerate() {
                let rule = Rule {
                    sgd: self,
                    fresh: false,
                };
                update(OP, i, (["param"], ["grad"]), [p], [g], &rule)?;
            }
            return Ok(());
        }
        check_lengths(OP, params.len(), &[("momentum_buffers", buffers.len())])?;
        for (i, ((p, g), b)) in params.iter().zip(grads).zip(buffers).enumerate() {
            let rule = Rule {
                sgd: self,
                fresh: fresh.contains(&i),
            };
            let names = (["param", "momentum_buffer"], ["grad"]);
            update(OP, i, names, [p, b], [g], &rule)?;
        }
        Ok(())
    }
}

impl Kernel<1, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p]: [&mut [F]; 1], [g]: [&[F]; 1]) {
        let s = self.sgd;
        let grad = Grad::<F>::new(s.maximize, s.weight_decay);
        let step = F::from_f64(-s.lr);
        for (p, &g) in p.iter_mut().zip(g) {
            *p = step.mul_add(grad.of(g, *p), *p);
        }
    }
}

impl Kernel<2, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, buf]: [&mut [F]; 2], [g]: [&[F]; 1]) {
        let s = self.sgd;
        let grad = Grad::<F>::new(s.maximize, s.weight_decay);
        let (step, momentum) = (F::from_f64(-s.lr), F::from_f64(s.momentum));
        let keep = F::from_f64(1.0 - s.dampening);
        for ((p, b), &g) in p.iter_mut().zip(buf.iter_mut()).zip(g) {
            let g = grad.of(g, *p);
            *b = if self.fresh {
                g
            } else {
                keep.mul_add(g, *b * momentum)
            };
            let d = if s.nesterov {
                momentum.mul_add(*b, g)
            } else {
                *b
            };
            *p = step.mul_add(d, *p);
        }
    }
}
