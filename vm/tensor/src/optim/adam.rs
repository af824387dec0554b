//! Adam and AdamW (decoupled weight decay), with AMSGrad's running maximum.

use super::Grad;
use super::group::{Kernel, Real, advance, check_lengths, lerp, update};
use crate::{Result, Tensor};

const OP: &str = "adam";

#[derive(Clone, Copy, Debug)]
pub struct Adam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    /// AdamW: decay the parameter itself (`p *= 1 - lr·wd`), not the gradient.
    pub decoupled_weight_decay: bool,
    pub amsgrad: bool,
    pub maximize: bool,
}

/// One parameter's rule at its step.
struct Rule<'a> {
    adam: &'a Adam,
    /// `lr / (1 - beta1^step)`
    step_size: f64,
    /// `sqrt(1 - beta2^step)`
    bias_correction2_sqrt: f64,
}

impl Adam {
    /// One step over a group: `exp_avgs`/`exp_avg_sqs` (and, with AMSGrad,
    /// `max_exp_avg_sqs`) are each parameter's moments, `steps` its step
    /// count (advanced here).
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        exp_avgs: &[Tensor],
        exp_avg_sqs: &[Tensor],
        max_exp_avg_sqs: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let mut lists = vec![
            ("grads", grads.len()),
            ("exp_avgs", exp_avgs.len()),
            ("exp_avg_sqs", exp_avg_sqs.len()),
            ("state_steps", steps.len()),
        ];
        if self.amsgrad {
            lists.push(("max_exp_avg_sqs", max_exp_avg_sqs.len()));
        }
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            let step = advance(&steps[i])?;
            let rule = Rule {
                adam: self,
                step_size: self.lr / (1.0 - self.beta1.powf(step)),
                bias_correction2_sqrt: (1.0 - self.beta2.powf(step)).powf(0.5),
            };
            let (p, g, m, v) = (&params[i], &grads[i], &exp_avgs[i], &exp_avg_sqs[i]);
            if self.amsgrad {
                let names = (
                    ["param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"],
                    ["grad"],
                );
                update(OP, i, names, [p, m, v, &max_exp_avg_sqs[i]], [g], &rule)?;
            } else {
                let names = (["param", "exp_avg", "exp_avg_sq"], ["grad"]);
                update(OP, i, names, [p, m, v], [g], &rule)?;
            }
        }
        Ok(())
    }
}

/// What Adam, NAdam and RAdam first do with each element: decay the
/// parameter (decoupled weight decay) or add it to the gradient (L2), then
/// move the two moments.
pub(super) struct Moments<F> {
    grad: Grad<F>,
    decay: Option<F>,
    w1: F,
    beta2: F,
    w2: F,
}

impl<F: Real> Moments<F> {
    pub(super) fn new(
        lr: f64,
        (beta1, beta2): (f64, f64),
        weight_decay: f64,
        decoupled: bool,
        maximize: bool,
    ) -> Self {
        let coupled = if decoupled { 0.0 } else { weight_decay };
        Moments {
            grad: Grad::new(maximize, coupled),
            decay: (decoupled && weight_decay != 0.0).then(|| F::from_f64(1.0 - lr * weight_decay)),
            w1: F::from_f64(1.0 - beta1),
            beta2: F::from_f64(beta2),
            w2: F::from_f64(1.0 - beta2),
        }
    }

    /// The decayed parameter and the gradient as used; `m` and `v` moved.
    #[inline(always)]
    pub(super) fn update(&self, p: F, g: F, m: &mut F, v: &mut F) -> (F, F) {
        let p = self.decay.map_or(p, |d| p * d);
        let g = self.grad.of(g, p);
        *m = lerp(*m, g, self.w1);
        *v = (self.w2 * g).mul_add(g, *v * self.beta2);
        (p, g)
    }
}

/// The per-element constants of a rule, in the compute type.
struct Consts<F> {
    moments: Moments<F>,
    bc2: F,
    eps: F,
    step: F,
}

impl Rule<'_> {
    fn consts<F: Real>(&self) -> Consts<F> {
        let a = self.adam;
        let betas = (a.beta1, a.beta2);
        Consts {
            moments: Moments::new(
                a.lr,
                betas,
                a.weight_decay,
                a.decoupled_weight_decay,
                a.maximize,
            ),
            bc2: F::from_f64(self.bias_correction2_sqrt),
            eps: F::from_f64(a.eps),
            step: F::from_f64(-self.step_size),
        }
    }
}

impl<F: Real> Consts<F> {
    #[inline(always)]
    fn apply(&self, p: F, m: F, v: F) -> F {
        let denom = v.sqrt() / self.bc2 + self.eps;
        p + self.step * m / denom
    }
}

impl Kernel<3, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, m, v]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let c = self.consts::<F>();
        for (((p, m), v), &g) in p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()).zip(g) {
            let (q, _) = c.moments.update(*p, g, m, v);
            *p = c.apply(q, *m, *v);
        }
    }
}

impl Kernel<4, 1> for Rule<'_> {
    #[inline(always)]
    fn run<F: Real>(&self, [p, m, v, vmax]: [&mut [F]; 4], [g]: [&[F]; 1]) {
        let c = self.consts::<F>();
        let moments = p.iter_mut().zip(m.iter_mut()).zip(v.iter_mut());
        for (((p, m), v), (vmax, &g)) in moments.zip(vmax.iter_mut().zip(g)) {
            let (q, _) = c.moments.update(*p, g, m, v);
            *vmax = maximum(*vmax, *v);
            *p = c.apply(q, *m, *vmax);
        }
    }
}

/// `torch.maximum`: NaN when either side is.
#[inline(always)]
pub(super) fn maximum<F: Real>(a: F, b: F) -> F {
    if a.is_nan() || b.is_nan() {
        F::nan()
    } else if a > b {
        a
    } else {
        b
    }
}
