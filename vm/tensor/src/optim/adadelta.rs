//! Adadelta: steps scaled by the ratio of running RMS of past updates to
//! running RMS of gradients.

use super::Grad;
use super::group::{Kernel, Real, advance, check_lengths, update};
use crate::{Result, Tensor};

const OP: &str = "adadelta";

#[derive(Clone, Copy, Debug)]
pub struct Adadelta {
    pub lr: f64,
    pub rho: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub maximize: bool,
}

impl Adadelta {
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        square_avgs: &[Tensor],
        acc_deltas: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("square_avgs", square_avgs.len()),
            ("acc_deltas", acc_deltas.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            advance(&steps[i])?;
            let names = (["param", "square_avg", "acc_delta"], ["grad"]);
            let write = [&params[i], &square_avgs[i], &acc_deltas[i]];
            update(OP, i, names, write, [&grads[i]], self)?;
        }
        Ok(())
    }
}

impl Kernel<3, 1> for Adadelta {
    #[inline(always)]
    fn run<F: Real>(&self, [p, sq, acc]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let grad = Grad::<F>::new(self.maximize, self.weight_decay);
        let (rho, w, eps) = (
            F::from_f64(self.rho),
            F::from_f64(1.0 - self.rho),
            F::from_f64(self.eps),
        );
        let step = F::from_f64(-self.lr);
        for (((p, sq), acc), &g) in p.iter_mut().zip(sq.iter_mut()).zip(acc.iter_mut()).zip(g) {
            let g = grad.of(g, *p);
            *sq = (w * g).mul_add(g, *sq * rho);
            let std = (*sq + eps).sqrt();
            let delta = (*acc + eps).sqrt() / std * g;
            *acc = (w * delta).mul_add(delta, *acc * rho);
            *p = step.mul_add(delta, *p);
        }
    }
}
