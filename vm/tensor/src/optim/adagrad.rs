//! Adagrad: each element's step scaled by its summed squared gradients,
//! the rate decaying with the step count.

use super::Grad;
use super::group::{Kernel, Real, advance, check_lengths, update};
use crate::{Result, Tensor};

const OP: &str = "adagrad";

#[derive(Clone, Copy, Debug)]
pub struct Adagrad {
    pub lr: f64,
    pub lr_decay: f64,
    pub weight_decay: f64,
    pub eps: f64,
    pub maximize: bool,
}

struct Rule<'a> {
    adagrad: &'a Adagrad,
    /// `lr / (1 + (step - 1)·lr_decay)`
    clr: f64,
}

impl Adagrad {
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        sums: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("state_sums", sums.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let rule = Rule {
                adagrad: self,
                clr: self.lr / (1.0 + (step - 1.0) * self.lr_decay),
            };
            let names = (["param", "sum"], ["grad"]);
            update(OP, i, names, [&params[i], &sums[i]], [&grads[i]], &rule)?;
        }
        Ok(())
    }
}

impl Kernel<2, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, sum]: [&mut [F]; 2], [g]: [&[F]; 1]) {
        let a = self.adagrad;
        let grad = Grad::<F>::new(a.maximize, a.weight_decay);
        let (eps, step) = (F::from_f64(a.eps), F::from_f64(-self.clr));
        for ((p, s), &g) in p.iter_mut().zip(sum.iter_mut()).zip(g) {
            let g = grad.of(g, *p);
            *s = g.mul_add(g, *s);
            *p = *p + step * g / (s.sqrt() + eps);
        }
    }
}
