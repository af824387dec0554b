//! RMSprop: steps scaled by a running RMS of gradients (centered: of their
//! deviation from a running mean), with optional momentum.

use super::Grad;
use super::group::{Kernel, Real, advance, check_lengths, lerp, update};
use crate::{Result, Tensor};

const OP: &str = "rmsprop";

#[derive(Clone, Copy, Debug)]
pub struct RmsProp {
    pub lr: f64,
    pub alpha: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub momentum: f64,
    pub centered: bool,
    pub maximize: bool,
}

impl RmsProp {
    /// `grad_avgs` is used when centered, `momentum_buffers` with momentum
    /// (either may be empty otherwise).
    pub fn step(
        &self,
        params: &[Tensor],
        grads: &[Tensor],
        square_avgs: &[Tensor],
        grad_avgs: &[Tensor],
        momentum_buffers: &[Tensor],
        steps: &[Tensor],
    ) -> Result<()> {
        let mut lists = vec![
            ("grads", grads.len()),
            ("square_avgs", square_avgs.len()),
            ("state_steps", steps.len()),
        ];
        if self.centered {
            lists.push(("grad_avgs", grad_avgs.len()));
        }
        if self.momentum > 0.0 {
            lists.push(("momentum_buffers", momentum_buffers.len()));
        }
        check_lengths(OP, params.len(), &lists)?;
        for i in 0..params.len() {
            advance(&steps[i])?;
            let (p, g, sq) = (&params[i], &grads[i], &square_avgs[i]);
            match (self.centered, self.momentum > 0.0) {
                (false, false) => {
                    update(
                        OP,
                        i,
                        (["param", "square_avg"], ["grad"]),
                        [p, sq],
                        [g],
                        self,
                    )?;
                }
                (true, false) => {
                    let names = (["param", "square_avg", "grad_avg"], ["grad"]);
                    update(OP, i, names, [p, sq, &grad_avgs[i]], [g], self)?;
                }
                (false, true) => {
                    let names = (["param", "square_avg", "momentum_buffer"], ["grad"]);
                    update(OP, i, names, [p, sq, &momentum_buffers[i]], [g], self)?;
                }
                (true, true) => {
                    let names = (
                        ["param", "square_avg", "grad_avg", "momentum_buffer"],
                        ["grad"],
                    );
                    let write = [p, sq, &grad_avgs[i], &momentum_buffers[i]];
                    update(OP, i, names, write, [g], self)?;
                }
            }
        }
        Ok(())
    }

    /// One element: the new square average, grad average and buffer (each
    /// when kept), and the parameter.
    #[inline(always)]
    fn element<F: Real>(
        &self,
        c: &Consts<F>,
        p: &mut F,
        sq: &mut F,
        ga: Option<&mut F>,
        buf: Option<&mut F>,
        g: F,
    ) {
        let g = c.grad.of(g, *p);
        *sq = (c.w * g).mul_add(g, *sq * c.alpha);
        let avg = match ga {
            Some(ga) => {
                *ga = lerp(*ga, g, c.w);
                (-*ga).mul_add(*ga, *sq).sqrt()
            }
            None => sq.sqrt(),
        } + c.eps;
        match buf {
            Some(b) => {
                *b = *b * c.momentum + g / avg;
                *p = c.step.mul_add(*b, *p);
            }
            None => *p = *p + c.step * g / avg,
        }
    }
}

struct Consts<F> {
    grad: Grad<F>,
    alpha: F,
    w: F,
    eps: F,
    momentum: F,
    step: F,
}

impl RmsProp {
    fn consts<F: Real>(&self) -> Consts<F> {
        Consts {
            grad: Grad::new(self.maximize, self.weight_decay),
            alpha: F::from_f64(self.alpha),
            w: F::from_f64(1.0 - self.alpha),
            eps: F::from_f64(self.eps),
            momentum: F::from_f64(self.momentum),
            step: F::from_f64(-self.lr),
        }
    }
}

impl Kernel<2, 1> for RmsProp {
    #[inline(always)]
    fn run<F: Real>(&self, [p, sq]: [&mut [F]; 2], [g]: [&[F]; 1]) {
        let c = self.consts();
        for ((p, sq), &g) in p.iter_mut().zip(sq.iter_mut()).zip(g) {
            self.element(&c, p, sq, None, None, g);
        }
    }
}

impl Kernel<3, 1> for RmsProp {
    #[inline(always)]
    fn run<F: Real>(&self, [p, sq, extra]: [&mut [F]; 3], [g]: [&[F]; 1]) {
        let c = self.consts();
        for (((p, sq), x), &g) in p.iter_mut().zip(sq.iter_mut()).zip(extra.iter_mut()).zip(g) {
            let (ga, buf) = if self.centered {
                (Some(x), None)
            } else {
                (None, Some(x))
            };
            self.element(&c, p, sq, ga, buf, g);
        }
    }
}

impl Kernel<4, 1> for RmsProp {
    #[inline(always)]
    fn run<F: Real>(&self, [p, sq, ga, buf]: [&mut [F]; 4], [g]: [&[F]; 1]) {
        let c = self.consts();
        let state = p.iter_mut().zip(sq.iter_mut()).zip(ga.iter_mut());
        for (((p, sq), ga), (b, &g)) in state.zip(buf.iter_mut().zip(g)) {
            self.element(&c, p, sq, Some(ga), Some(b), g);
        }
    }
}
