//! RAdam: Adam whose adaptive step is rectified by the variance of its
//! estimate, and plain momentum SGD while that is undefined (ρ_t ≤ 5).

use super::adam::Moments;
use super::group::{Kernel, Real, advance, check_lengths, update};
use crate::{Result, Tensor};

const OP: &str = "radam";

#[derive(Clone, Copy, Debug)]
pub struct RAdam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub decoupled_weight_decay: bool,
    pub maximize: bool,
}

struct Rule<'a> {
    radam: &'a RAdam,
    bias_correction1: f64,
    bias_correction2: f64,
    /// The rectification term, when ρ_t > 5.
    rect: Option<f64>,
}

impl RAdam {
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("exp_avgs", exp_avgs.len()),
            ("exp_avg_sqs", exp_avg_sqs.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let bias_correction2 = 1.0 - self.beta2.powf(step);
            let rho_inf = 2.0 / (1.0 - self.beta2) - 1.0;
            let rho_t = rho_inf - 2.0 * step * self.beta2.powf(step) / bias_correction2;
            let rect = (rho_t > 5.0).then(|| {
                ((rho_t - 4.0) * (rho_t - 2.0) * rho_inf
                    / ((rho_inf - 4.0) * (rho_inf - 2.0) * rho_t))
                    .powf(0.5)
            });
            let rule = Rule {
                radam: self,
                bias_correction1: 1.0 - self.beta1.powf(step),
                bias_correction2,
                rect,
            };
            let names = (["param", "exp_avg", "exp_avg_sq"], ["grad"]);
            let write = [&params[i], &exp_avgs[i], &exp_avg_sqs[i]];
            update(OP, i, names, write, [&grads[i]], &rule)?;
        }
        Ok(())
    }
}

impl Kernel<3, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, m, v]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let a = self.radam;
        let betas = (a.beta1, a.beta2);
        let moments = Moments::<F>::new(
            a.lr,
            betas,
            a.weight_decay,
            a.decoupled_weight_decay,
            a.maximize,
        );
        let (bc1, lr, eps) = (
            F::from_f64(self.bias_correction1),
            F::from_f64(a.lr),
            F::from_f64(a.eps),
        );
        let bc2_sqrt = F::from_f64(self.bias_correction2.powf(0.5));
        let rect = self.rect.map(F::from_f64);
        for (((p, m), v), &g) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
            let (q, _) = moments.update(*p, g, m, v);
            let corrected = *m / bc1 * lr;
            // `bias_correction2 ** 0.5 / (sqrt(v) + eps)` is a reciprocal
            // times the number in PyTorch (`Tensor.__rdiv__`).
            let delta = match rect {
                Some(rect) => corrected * ((F::one() / (v.sqrt() + eps)) * bc2_sqrt) * rect,
                None => corrected,
            };
            *p = q - delta;
        }
    }
}
