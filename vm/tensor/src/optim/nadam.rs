//! NAdam: Adam with Nesterov momentum, its momentum decaying by
//! `0.96^(step·momentum_decay)`; decoupled weight decay optional.

use super::adam::Moments;
use super::group::{Kernel, Real, advance, check_lengths, scale, update, value};
use crate::{Result, Tensor};

const OP: &str = "nadam";

#[derive(Clone, Copy, Debug)]
pub struct NAdam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub momentum_decay: f64,
    pub decoupled_weight_decay: bool,
    pub maximize: bool,
}

struct Rule<'a> {
    nadam: &'a NAdam,
    bias_correction2: f64,
    /// The step's coefficients of the gradient and of the first moment.
    on_grad: f64,
    on_avg: f64,
}

impl NAdam {
    /// `mu_products` holds each parameter's running product of momentum
    /// coefficients (a one-element tensor, float32 in PyTorch's state).
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        mu_products: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("exp_avgs", exp_avgs.len()),
            ("exp_avg_sqs", exp_avg_sqs.len()),
            ("mu_products", mu_products.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let mu = self.beta1 * (1.0 - 0.5 * 0.96f64.powf(step * self.momentum_decay));
            let mu_next =
                self.beta1 * (1.0 - 0.5 * 0.96f64.powf((step + 1.0) * self.momentum_decay));
            // `mu_product *= mu` happens in the state tensor's own dtype.
            let product = &mu_products[i];
            scale(product, mu)?;
            let product = value(product)?;
            let rule = Rule {
                nadam: self,
                bias_correction2: 1.0 - self.beta2.powf(step),
                on_grad: -self.lr * (1.0 - mu) / (1.0 - product),
                on_avg: (-self.lr * mu_next) / (1.0 - product * mu_next),
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
        let a = self.nadam;
        let betas = (a.beta1, a.beta2);
        let moments = Moments::<F>::new(
            a.lr,
            betas,
            a.weight_decay,
            a.decoupled_weight_decay,
            a.maximize,
        );
        let (bc2, eps) = (F::from_f64(self.bias_correction2), F::from_f64(a.eps));
        let (on_grad, on_avg) = (F::from_f64(self.on_grad), F::from_f64(self.on_avg));
        for (((p, m), v), &g) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
            let (q, g) = moments.update(*p, g, m, v);
            let denom = (*v / bc2).sqrt() + eps;
            let q = q + on_grad * g / denom;
            *p = q + on_avg * *m / denom;
        }
    }
}
