//! Optimizer updates over a parameter group, one row per optimizer: what
//! `torch.optim`'s `step()` calls once per group (the lists are the
//! group's parameters with a gradient, their gradients and their state).

use fxvm_tensor::optim::{
    Adadelta, Adagrad, Adam, Adamax, Asgd, NAdam, RAdam, RmsProp, Rprop, Sgd,
};
use fxvm_tensor::{Result, Tensor};

use crate::op::{Op, T, op};

type Ts = Vec<Tensor>;

/// Indices as `usize` (a negative one names no parameter).
fn indices(fresh: &[i64]) -> Vec<usize> {
    fresh
        .iter()
        .filter_map(|&i| usize::try_from(i).ok())
        .collect()
}

pub(super) fn rows() -> Vec<Op> {
    let rows = vec![
        op(
            "_optim_sgd_(Tensor[] params, Tensor[] grads, Tensor[] momentum_buffers, int[] fresh, *, float lr, float momentum, float dampening, float weight_decay, bool nesterov, bool maximize)",
            T,
            |(
                params,
                grads,
                buffers,
                fresh,
                lr,
                momentum,
                dampening,
                weight_decay,
                nesterov,
                maximize,
            ): (Ts, Ts, Ts, Vec<i64>, f64, f64, f64, f64, bool, bool)|
             -> Result<()> {
                let sgd = Sgd {
                    lr,
                    momentum,
                    dampening,
                    weight_decay,
                    nesterov,
                    maximize,
                };
                sgd.step(&params, &grads, &buffers, &indices(&fresh))
            },
        ),
        op(
            "_optim_adam_(Tensor[] params, Tensor[] grads, Tensor[] exp_avgs, Tensor[] exp_avg_sqs, Tensor[] max_exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay, bool amsgrad, bool maximize, bool decoupled_weight_decay)",
            T,
            |(
                params,
                grads,
                m,
                v,
                vmax,
                steps,
                lr,
                beta1,
                beta2,
                eps,
                weight_decay,
                amsgrad,
                maximize,
                decoupled_weight_decay,
            ): (
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                f64,
                f64,
                f64,
                f64,
                f64,
                bool,
                bool,
                bool,
            )|
             -> Result<()> {
                let adam = Adam {
                    lr,
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                    decoupled_weight_decay,
                    amsgrad,
                    maximize,
                };
                adam.step(&params, &grads, &m, &v, &vmax, &steps)
            },
        ),
        op(
            "_optim_adamax_(Tensor[] params, Tensor[] grads, Tensor[] exp_avgs, Tensor[] exp_infs, Tensor[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay, bool maximize)",
            T,
            |(params, grads, m, u, steps, lr, beta1, beta2, eps, weight_decay, maximize): (
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                f64,
                f64,
                f64,
                f64,
                f64,
                bool,
            )|
             -> Result<()> {
                Adamax {
                    lr,
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                    maximize,
                }
                .step(&params, &grads, &m, &u, &steps)
            },
        ),
        op(
            "_optim_nadam_(Tensor[] params, Tensor[] grads, Tensor[] exp_avgs, Tensor[] exp_avg_sqs, Tensor[] mu_products, Tensor[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay, float momentum_decay, bool decoupled_weight_decay, bool maximize)",
            T,
            |(
                params,
                grads,
                m,
                v,
                mu,
                steps,
                lr,
                beta1,
                beta2,
                eps,
                weight_decay,
                momentum_decay,
                decoupled_weight_decay,
                maximize,
            ): (
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                f64,
                f64,
                f64,
                f64,
                f64,
                f64,
                bool,
                bool,
            )|
             -> Result<()> {
                let nadam = NAdam {
                    lr,
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                    momentum_decay,
                    decoupled_weight_decay,
                    maximize,
                };
                nadam.step(&params, &grads, &m, &v, &mu, &steps)
            },
        ),
        op(
            "_optim_radam_(Tensor[] params, Tensor[] grads, Tensor[] exp_avgs, Tensor[] exp_avg_sqs, Tensor[] state_steps, *, float lr, float beta1, float beta2, float eps, float weight_decay, bool decoupled_weight_decay, bool maximize)",
            T,
            |(
                params,
                grads,
                m,
                v,
                steps,
                lr,
                beta1,
                beta2,
                eps,
                weight_decay,
                decoupled_weight_decay,
                maximize,
            ): (Ts, Ts, Ts, Ts, Ts, f64, f64, f64, f64, f64, bool, bool)|
             -> Result<()> {
                let radam = RAdam {
                    lr,
                    beta1,
                    beta2,
                    eps,
                    weight_decay,
                    decoupled_weight_decay,
                    maximize,
                };
                radam.step(&params, &grads, &m, &v, &steps)
            },
        ),
        op(
            "_optim_adagrad_(Tensor[] params, Tensor[] grads, Tensor[] state_sums, Tensor[] state_steps, *, float lr, float lr_decay, float weight_decay, float eps, bool maximize)",
            T,
            |(params, grads, sums, steps, lr, lr_decay, weight_decay, eps, maximize): (
                Ts,
                Ts,
                Ts,
                Ts,
                f64,
                f64,
                f64,
                f64,
                bool,
            )|
             -> Result<()> {
                Adagrad {
                    lr,
                    lr_decay,
                    weight_decay,
                    eps,
                    maximize,
                }
                .step(&params, &grads, &sums, &steps)
            },
        ),
        op(
            "_optim_adadelta_(Tensor[] params, Tensor[] grads, Tensor[] square_avgs, Tensor[] acc_deltas, Tensor[] state_steps, *, float lr, float rho, float eps, float weight_decay, bool maximize)",
            T,
            |(params, grads, sq, acc, steps, lr, rho, eps, weight_decay, maximize): (
                Ts,
                Ts,
                Ts,
                Ts,
                Ts,
                f64,
                f64,
                f64,
                f64,
                bool,
            )|
             -> Result<()> {
                Adadelta {
                    lr,
                    rho,
                    eps,
                    weight_decay,
                    maximize,
                }
                .step(&params, &grads, &sq, &acc, &steps)
            },
        ),
        op(
            "_optim_rmsprop_(Tensor[] params, Tensor[] grads, Tensor[] square_avgs, Tensor[] grad_avgs, Tensor[] momentum_buffers, Tensor[] state_steps, *, float lr, float alpha, float eps, float weight_decay, float momentum, bool centered, bool maximize)",
            T,
            |(
                params,
                grads,
                sq,
                ga,
                buf,
                steps,
                lr,
                alpha,
                eps,
                weight_decay,
                momentum,
                centered,
                maximize,
            ): (Ts, Ts, Ts, Ts, Ts, Ts, f64, f64, f64, f64, f64, bool, bool)|
             -> Result<()> {
                let rms = RmsProp {
                    lr,
                    alpha,
                    eps,
                    weight_decay,
                    momentum,
                    centered,
                    maximize,
                };
                rms.step(&params, &grads, &sq, &ga, &buf, &steps)
            },
        ),
        op(
            "_optim_rprop_(Tensor[] params, Tensor[] grads, Tensor[] prevs, Tensor[] step_sizes, Tensor[] state_steps, *, float etaminus, float etaplus, float step_size_min, float step_size_max, bool maximize)",
            T,
            |(
                params,
                grads,
                prevs,
                sizes,
                steps,
                etaminus,
                etaplus,
                step_size_min,
                step_size_max,
                maximize,
            ): (Ts, Ts, Ts, Ts, Ts, f64, f64, f64, f64, bool)|
             -> Result<()> {
                let rprop = Rprop {
                    etaminus,
                    etaplus,
                    step_size_min,
                    step_size_max,
                    maximize,
                };
                rprop.step(&params, &grads, &prevs, &sizes, &steps)
            },
        ),
        op(
            "_optim_asgd_(Tensor[] params, Tensor[] grads, Tensor[] axs, Tensor[] etas, Tensor[] mus, Tensor[] state_steps, *, float lr, float lambd, float alpha, float t0, float weight_decay, bool maximize)",
            T,
            |(
                params,
                grads,
                axs,
                etas,
                mus,
                steps,
                lr,
                lambd,
                alpha,
                t0,
                weight_decay,
                maximize,
            ): (Ts, Ts, Ts, Ts, Ts, Ts, f64, f64, f64, f64, f64, bool)|
             -> Result<()> {
                let asgd = Asgd {
                    lr,
                    lambd,
                    alpha,
                    t0,
                    weight_decay,
                    maximize,
                };
                asgd.step(&params, &grads, &axs, &etas, &mus, &steps)
            },
        ),
    ];
    // Updates run under `no_grad`, never part of a graph; the kernels
    // update float16 parameters themselves (through float32), in place.
    rows.into_iter()
        .map(|op| op.nondiff().dtype_generic())
        .collect()
}
