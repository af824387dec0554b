//! Adamax: Adam with the infinity norm of past gradients as its scale.

use super::Grad;
use super::adam::maximum;
use super::group::{Kernel, Real, advance, check_lengths, lerp, update};
use crate::{Result, Tensor};

const OP: &str = "adamax";

#[derive(Clone, Copy, Debug)]
pub struct Adamax {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub maximize: bool,
}

struct Rule<'a> {
    adamax: &'a Adamax,
    /// `lr / (1 - beta1^step)`
    clr: f64,
}

impl Adamax {
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_infs: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("exp_avgs", exp_avgs.len()),
            ("exp_infs", exp_infs.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let rule = Rule {
                adamax: self,
                clr: self.lr / (1.0 - self.beta1.powf(step)),
            };
            let names = (["param", "exp_avg", "exp_inf"], ["grad"]);
            let write = [&params[i], &exp_avgs[i], &exp_infs[i]];
            update(OP, i, names, write, [&grads[i]], &rule)?;
        }
        Ok(())
    }
}

impl Kernel<3, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, m, u]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let a = self.adamax;
        let grad = Grad::<F>::new(a.maximize, a.weight_decay);
        let (w1, beta2, eps) = (
            F::from_f64(1.0 - a.beta1),
            F::from_f64(a.beta2),
            F::from_f64(a.eps),
        );
        let step = F::from_f64(-self.clr);
        for (((p, m), u), &g) in p.iter_mut().zip(m.iter_mut()).zip(u.iter_mut()).zip(g) {
            let g = grad.of(g, *p);
            *m = lerp(*m, g, w1);
            *u = maximum(*u * beta2, g.abs() + eps);
            *p = *p + step * *m / *u;
        }
    }
}
