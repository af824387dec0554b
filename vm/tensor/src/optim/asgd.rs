//! ASGD: SGD whose rate decays as `lr / (1 + λ·lr·t)^α`, keeping a running
//! average of the parameters from step `t0` on.

use super::Grad;
use super::group::{Kernel, Real, advance, check_lengths, set, update, value};
use crate::{Result, Tensor};

const OP: &str = "asgd";

#[derive(Clone, Copy, Debug)]
pub struct Asgd {
    pub lr: f64,
    pub lambd: f64,
    pub alpha: f64,
    pub t0: f64,
    pub weight_decay: f64,
    pub maximize: bool,
}

struct Rule<'a> {
    asgd: &'a Asgd,
    /// The step's rate and averaging weight (`None`: the average is the
    /// parameter), as the state held them before this step.
    eta: f64,
    mu: Option<f64>,
}

impl Asgd {
    /// `axs` holds the averaged parameters; `etas` and `mus` each
    /// parameter's current rate and averaging weight (one-element tensors,
    /// set here for the next step).
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        axs: &[Tensor],
        etas: &[Tensor],
        mus: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let lists = [
            ("grads", grads.len()),
            ("axs", axs.len()),
            ("etas", etas.len()),
            ("mus", mus.len()),
            ("state_steps", steps.len()),
        ];
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let mu = value(&mus[i])?;
            let rule = Rule {
                asgd: self,
                eta: value(&etas[i])?,
                mu: (mu != 1.0).then_some(mu),
            };
            let names = (["param", "ax"], ["grad"]);
            update(OP, i, names, [&params[i], &axs[i]], [&grads[i]], &rule)?;
            let eta = self.lr / (1.0 + self.lambd * self.lr * step).powf(self.alpha);
            set(&etas[i], eta)?;
            set(&mus[i], 1.0 / f64::max(1.0, step - self.t0))?;
        }
        Ok(())
    }
}

impl Kernel<2, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, ax]: [&mut [F]; 2], [g]: [&[F]; 1]) {
        let a = self.asgd;
        let grad = Grad::<F>::new(a.maximize, a.weight_decay);
        let shrink = F::from_f64(1.0 - a.lambd * self.eta);
        let step = F::from_f64(-self.eta);
        let mu = self.mu.map(F::from_f64);
        for ((p, ax), &g) in p.iter_mut().zip(ax.iter_mut()).zip(g) {
            let g = grad.of(g, *p);
            *p = *p * shrink;
            *p = step.mul_add(g, *p);
            *ax = match mu {
                Some(mu) => *ax + (*p - *ax) * mu,
                None => *p,
            };
        }
    }
}
