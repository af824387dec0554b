//! The connectionist temporal classification loss (Graves et al., 2006):
//! the negative log-likelihood of a target sequence summed over every
//! alignment of it to the input frames, by the forward (alpha) recursion
//! over the target with blanks between its labels.

use num_traits::Float;

use super::nn::Reduction;
use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::{Element, Storage};
use crate::tensor::Tensor;

fn fail(message: String) -> TensorError {
    TensorError::runtime("ctc_loss", message)
}

/// A `torch.ctc_loss(log_probs, targets, input_lengths, target_lengths,
/// blank, reduction, zero_infinity)` call: `log_probs` is `[T, N, C]` (or
/// `[T, C]` unbatched), `targets` `[N, S]` padded or the concatenation of
/// all targets; `mean` divides each loss by its target length first.
pub struct Ctc<'a> {
    pub log_probs: &'a Tensor,
    pub targets: &'a Tensor,
    pub input_lengths: &'a [i64],
    pub target_lengths: &'a [i64],
    pub blank: i64,
    pub reduction: Reduction,
    pub zero_infinity: bool,
}

impl Ctc<'_> {
    fn setup(&self) -> Result<Setup> {
        Setup::new(
            self.log_probs,
            self.targets,
            self.input_lengths,
            self.target_lengths,
            self.blank,
        )
    }

    /// The loss, reduced as asked.
    pub fn loss(&self) -> Result<Tensor> {
        let Ctc {
            log_probs,
            input_lengths,
            target_lengths,
            reduction,
            zero_infinity,
            ..
        } = *self;
        let setup = self.setup()?;
        let (problem, unbatched, batch) = (&setup.problem, setup.unbatched, setup.problem.batch);
        let samples = setup.samples(input_lengths, target_lengths);
        let losses = match log_probs.dtype() {
            DType::F32 => {
                problem.losses::<f32>(log_probs, samples, zero_infinity, reduction, target_lengths)
            }
            _ => {
                problem.losses::<f64>(log_probs, samples, zero_infinity, reduction, target_lengths)
            }
        };
        let shape = if unbatched && reduction == Reduction::None {
            vec![]
        } else {
            vec![batch]
        };
        let losses = Tensor::from_storage(losses, &shape);
        match reduction {
            Reduction::None => Ok(losses),
            Reduction::Sum => super::reduce::sum(&losses, None, false, None),
            Reduction::Mean => super::reduce::mean(&losses, None, false, None),
        }
    }
}

/// A checked CTC problem: its sizes, and each sample's labels in `labels`
/// from `starts[b]`.
struct Setup {
    unbatched: bool,
    problem: Problem,
    labels: Vec<i64>,
    starts: Vec<usize>,
}

impl Setup {
    fn new(
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &[i64],
        target_lengths: &[i64],
        blank: i64,
    ) -> Result<Setup> {
        let unbatched = log_probs.ndim() == 2;
        let shape = log_probs.shape();
        if !(2..=3).contains(&shape.len()) {
            return Err(fail(format!(
                "ctc_loss(): log_probs must be 2-D (unbatched) or 3-D, got {}-D",
                shape.len()
            )));
        }
        let (frames, batch, classes) = if unbatched {
            (shape[0], 1, shape[1])
        } else {
            (shape[0], shape[1], shape[2])
        };
        if !log_probs.dtype().is_float() {
            return Err(TensorError::not_implemented_for(
                "ctc_loss_cpu",
                log_probs.dtype(),
            ));
        }
        if blank < 0 || blank as usize >= classes {
            return Err(fail("blank must be in label range".into()));
        }
        if input_lengths.len() != batch {
            return Err(fail(format!(
                "input_lengths must be of size batch_size, but got {} and batch_size {batch}",
                input_lengths.len()
            )));
        }
        if target_lengths.len() != batch {
            return Err(fail(format!(
                "target_lengths must be of size batch_size, but got {} and batch_size {batch}",
                target_lengths.len()
            )));
        }
        for (b, &l) in input_lengths.iter().enumerate() {
            if l < 0 || l as usize > frames {
                return Err(fail(format!(
                    "Expected input_lengths to have value at most {frames}, but got value {l} (while checking arguments for ctc_loss_allocate_outputs)"
                )));
            }
            if target_lengths[b] < 0 {
                return Err(fail(format!(
                    "Expected target_lengths to be non-negative, but got value {}",
                    target_lengths[b]
                )));
            }
        }
        if !(1..=2).contains(&targets.ndim()) {
            return Err(fail(format!(
                "Expected 1 to 2 dimensions, but got {}-dimensional tensor for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)",
                targets.ndim()
            )));
        }
        let labels: Vec<i64> = targets.to_dtype(DType::I64).contiguous().to_vec();
        // Where each sample's labels start in `labels`.
        if unbatched && targets.numel() as i64 != target_lengths[0] {
            return Err(fail(format!(
                "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)",
                target_lengths[0],
                targets.numel()
            )));
        }
        let starts: Vec<usize> = if targets.ndim() == 1 && !unbatched {
            let total: i64 = target_lengths.iter().sum();
            if labels.len() < total as usize {
                return Err(fail(format!(
                    "Expected tensor to have size at least {total} at dimension 0, but got size {} for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)",
                    labels.len()
                )));
            }
            target_lengths
                .iter()
                .scan(0usize, |at, &l| {
                    let start = *at;
                    *at += l as usize;
                    Some(start)
                })
                .collect()
        } else {
            let width = *targets.shape().last().unwrap_or(&0);
            let rows = if unbatched { 1 } else { targets.shape()[0] };
            let longest = target_lengths.iter().copied().max().unwrap_or(0);
            if targets.ndim() != 2 - unbatched as usize || rows != batch || (width as i64) < longest
            {
                return Err(fail(format!(
                    "Expected tensor to have size at least {longest} at dimension 1, but got size {width} for argument #2 'targets' (while checking arguments for ctc_loss_allocate_outputs)"
                )));
            }
            (0..batch).map(|b| b * width).collect()
        };
        if let Some(&bad) = labels.iter().find(|&&l| l < 0 || l as usize >= classes) {
            return Err(TensorError::index_error(format!(
                "index {bad} is out of bounds for dimension 0 with size {classes}"
            )));
        }
        Ok(Setup {
            unbatched,
            problem: Problem {
                batch,
                classes,
                blank: blank as usize,
            },
            labels,
            starts,
        })
    }

    /// Each sample: its index, labels and frames.
    fn samples<'a>(
        &'a self,
        input_lengths: &'a [i64],
        target_lengths: &'a [i64],
    ) -> impl Iterator<Item = (usize, &'a [i64], usize)> + 'a {
        (0..self.problem.batch).map(move |b| {
            let start = self.starts[b];
            let target = &self.labels[start..start + target_lengths[b] as usize];
            (b, target, input_lengths[b] as usize)
        })
    }
}

struct Problem {
    batch: usize,
    classes: usize,
    blank: usize,
}

impl Problem {
    /// Each sample's loss, divided by its target length (at least 1) when
    /// the reduction is the mean.
    fn losses<'a, F: Float + Element>(
        &self,
        log_probs: &Tensor,
        samples: impl Iterator<Item = (usize, &'a [i64], usize)>,
        zero_infinity: bool,
        reduction: Reduction,
        target_lengths: &[i64],
    ) -> Storage {
        let lp: Vec<F> = log_probs.contiguous().to_vec();
        let losses: Vec<F> = samples
            .map(|(b, target, frames)| {
                // The log-probability of frame `t`, class `c` for this sample.
                let at = |t: usize, c: usize| lp[(t * self.batch + b) * self.classes + c];
                let mut nll = self.negative_log_likelihood(&at, target, frames);
                if zero_infinity && nll == F::infinity() {
                    nll = F::zero();
                }
                if reduction == Reduction::Mean {
                    nll = nll / F::from(target_lengths[b].max(1)).unwrap();
                }
                nll
            })
            .collect();
        F::wrap(losses)
    }

    /// The extended target's label at `s`: blank, l1, blank, l2, …, blank.
    fn label(&self, target: &[i64], s: usize) -> usize {
        if s.is_multiple_of(2) {
            self.blank
        } else {
            target[s / 2] as usize
        }
    }

    /// Whether a path may skip from extended position `s - 2` to `s` (a
    /// label differing from the previous label).
    fn skips(&self, target: &[i64], s: usize) -> bool {
        s > 1 && self.label(target, s) != self.label(target, s - 2)
    }

    /// The forward variables `log α_t(s)` for `t < frames` (row-major,
    /// rows of `2·len(target) + 1`): the log-probability of the paths
    /// through the first `t + 1` frames ending at extended position `s`.
    fn alphas<F: Float>(
        &self,
        at: &dyn Fn(usize, usize) -> F,
        target: &[i64],
        frames: usize,
    ) -> Vec<F> {
        let len = 2 * target.len() + 1;
        let mut alpha = vec![F::neg_infinity(); frames * len];
        if frames == 0 {
            return alpha;
        }
        alpha[0] = at(0, self.blank);
        if len > 1 {
            alpha[1] = at(0, self.label(target, 1));
        }
        for t in 1..frames {
            let (before, row) = alpha.split_at_mut(t * len);
            let prev = &before[(t - 1) * len..];
            for s in 0..len {
                let from = [
                    prev[s],
                    if s > 0 {
                        prev[s - 1]
                    } else {
                        F::neg_infinity()
                    },
                    if self.skips(target, s) {
                        prev[s - 2]
                    } else {
                        F::neg_infinity()
                    },
                ];
                row[s] = log_sum_exp(&from) + at(t, self.label(target, s));
            }
        }
        alpha
    }

    /// The backward variables `log β_t(s)`, laid out as [`Problem::alphas`]:
    /// the paths from extended position `s` at frame `t` (its emission
    /// included) to the end.
    fn betas<F: Float>(
        &self,
        at: &dyn Fn(usize, usize) -> F,
        target: &[i64],
        frames: usize,
    ) -> Vec<F> {
        let len = 2 * target.len() + 1;
        let mut beta = vec![F::neg_infinity(); frames * len];
        if frames == 0 {
            return beta;
        }
        let last = (frames - 1) * len;
        beta[last + len - 1] = at(frames - 1, self.blank);
        if len > 1 {
            beta[last + len - 2] = at(frames - 1, self.label(target, len - 2));
        }
        for t in (0..frames - 1).rev() {
            let (row, after) = beta.split_at_mut((t + 1) * len);
            let (row, next) = (&mut row[t * len..], &after[..len]);
            for s in 0..len {
                let to = [
                    next[s],
                    if s + 1 < len {
                        next[s + 1]
                    } else {
                        F::neg_infinity()
                    },
                    if s + 2 < len && self.skips(target, s + 2) {
                        next[s + 2]
                    } else {
                        F::neg_infinity()
                    },
                ];
                row[s] = log_sum_exp(&to) + at(t, self.label(target, s));
            }
        }
        beta
    }

    /// `-log p(target | input)` from the forward variables' last frame.
    fn nll_of<F: Float>(alpha: &[F], len: usize, frames: usize, empty_target: bool) -> F {
        if frames == 0 {
            return if empty_target {
                F::zero()
            } else {
                F::infinity()
            };
        }
        let row = &alpha[(frames - 1) * len..frames * len];
        let last = if len > 1 {
            row[len - 2]
        } else {
            F::neg_infinity()
        };
        -log_sum_exp(&[row[len - 1], last])
    }

    /// `-log p(target | input)` over the first `frames` frames.
    fn negative_log_likelihood<F: Float>(
        &self,
        at: &dyn Fn(usize, usize) -> F,
        target: &[i64],
        frames: usize,
    ) -> F {
        let alpha = self.alphas(at, target, frames);
        Self::nll_of(&alpha, 2 * target.len() + 1, frames, target.is_empty())
    }

    /// One sample's gradient into `out` (its `[T, C]` rows, strided by the
    /// batch), scaled by `scale`, as PyTorch's kernel gives it: with respect
    /// to the logits `log_probs` were the log-softmax of, `p - (Σ_{s: l'(s)
    /// = c} α β) / (P · p)`, zero past the sample's frames.
    fn gradient<F: Float>(
        &self,
        lp: &[F],
        (b, target, frames): (usize, &[i64], usize),
        scale: F,
        zero_infinity: bool,
        out: &mut [F],
    ) {
        let at = |t: usize, c: usize| lp[(t * self.batch + b) * self.classes + c];
        let len = 2 * target.len() + 1;
        let alpha = self.alphas(&at, target, frames);
        let beta = self.betas(&at, target, frames);
        let nll = Self::nll_of(&alpha, len, frames, target.is_empty());
        if zero_infinity && nll == F::infinity() {
            return;
        }
        let mut both = vec![F::neg_infinity(); self.classes];
        for t in 0..frames {
            both.iter_mut().for_each(|v| *v = F::neg_infinity());
            for s in 0..len {
                let c = self.label(target, s);
                both[c] = log_sum_exp(&[both[c], alpha[t * len + s] + beta[t * len + s]]);
            }
            for (c, &ab) in both.iter().enumerate() {
                let p = at(t, c);
                let g = p.exp() - (ab + nll - p).exp();
                out[(t * self.batch + b) * self.classes + c] = g * scale;
            }
        }
    }
}

impl Ctc<'_> {
    /// The loss's gradient with respect to `log_probs`, given the loss's
    /// (`grad`, shaped as the loss), as PyTorch computes it: for the logits
    /// under a log-softmax (which passes it through unchanged).
    pub fn backward(&self, grad: &Tensor) -> Result<Tensor> {
        let Ctc {
            log_probs,
            input_lengths,
            target_lengths,
            reduction,
            zero_infinity,
            ..
        } = *self;
        let setup = self.setup()?;
        let batch = setup.problem.batch;
        let upstream: Vec<f64> = grad.contiguous().to_dtype(DType::F64).to_vec();
        // Each sample's share of the reduced loss.
        let scale = |b: usize| match reduction {
            Reduction::None => upstream[b],
            Reduction::Sum => upstream[0],
            Reduction::Mean => upstream[0] / (batch as f64 * target_lengths[b].max(1) as f64),
        };
        let out = match log_probs.dtype() {
            DType::F32 => gradients::<f32>(
                &setup,
                log_probs,
                input_lengths,
                target_lengths,
                &scale,
                zero_infinity,
            ),
            _ => gradients::<f64>(
                &setup,
                log_probs,
                input_lengths,
                target_lengths,
                &scale,
                zero_infinity,
            ),
        };
        Ok(Tensor::from_storage(out, log_probs.shape()))
    }
}

/// Every sample's gradient, in `log_probs`' element type.
fn gradients<F: Float + Element>(
    setup: &Setup,
    log_probs: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    scale: &dyn Fn(usize) -> f64,
    zero_infinity: bool,
) -> Storage {
    let lp: Vec<F> = log_probs.contiguous().to_vec();
    let mut out = vec![F::zero(); lp.len()];
    for sample in setup.samples(input_lengths, target_lengths) {
        let s = F::from(scale(sample.0)).unwrap_or_else(F::zero);
        setup
            .problem
            .gradient(&lp, sample, s, zero_infinity, &mut out);
    }
    F::wrap(out)
}

/// `log Σ exp(xᵢ)` shifted by the largest term (by zero when all are -inf).
fn log_sum_exp<F: Float>(xs: &[F]) -> F {
    let mut max = xs.iter().copied().fold(F::neg_infinity(), F::max);
    if max == F::neg_infinity() {
        max = F::zero();
    }
    xs.iter()
        .fold(F::zero(), |acc, &x| acc + (x - max).exp())
        .ln()
        + max
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctc_loss(
        log_probs: &Tensor,
        targets: &Tensor,
        input_lengths: &[i64],
        target_lengths: &[i64],
        blank: i64,
        reduction: Reduction,
        zero_infinity: bool,
    ) -> Result<Tensor> {
        let call = Ctc {
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            blank,
            reduction,
            zero_infinity,
        };
        call.loss()
    }

    fn uniform(frames: usize, classes: usize) -> Tensor {
        let lp = (1.0 / classes as f64).ln();
        Tensor::from_vec(vec![lp; frames * classes], &[frames, 1, classes])
    }

    /// For log-softmax outputs each frame's gradient sums to zero over the
    /// classes (probabilities minus posteriors), and frames past a sample's
    /// length get none.
    #[test]
    fn gradients_are_probabilities_minus_posteriors_within_each_sample() {
        let lp = uniform(4, 3);
        let targets = Tensor::from_vec(vec![1i64, 2], &[1, 2]);
        let grad = Tensor::from_vec(vec![1.0f64], &[]);
        let g = Ctc {
            log_probs: &lp,
            targets: &targets,
            input_lengths: &[3],
            target_lengths: &[2],
            blank: 0,
            reduction: Reduction::Sum,
            zero_infinity: false,
        }
        .backward(&grad)
        .unwrap();
        let g: Vec<f64> = g.to_vec();
        for frame in g.chunks(3).take(3) {
            assert!(frame.iter().sum::<f64>().abs() < 1e-12, "{frame:?}");
            assert!(frame.iter().any(|v| v.abs() > 1e-3));
        }
        assert!(g[9..].iter().all(|&v| v == 0.0));
    }

    #[test]
    fn a_single_frame_single_label_is_its_log_probability() {
        let lp = uniform(1, 4);
        let targets = Tensor::from_vec(vec![2i64], &[1, 1]);
        let loss = ctc_loss(&lp, &targets, &[1], &[1], 0, Reduction::Sum, false).unwrap();
        assert!((loss.to_vec::<f64>()[0] - 4f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn paths_are_counted_like_the_brute_force_enumeration() {
        // Three frames, label "1": the alignments are one run of 1s with
        // blanks around it — 1__, _1_, __1, 11_, _11, 111 — six paths of
        // probability (1/3)^3 each.
        let lp = uniform(3, 3);
        let targets = Tensor::from_vec(vec![1i64], &[1, 1]);
        let loss = ctc_loss(&lp, &targets, &[3], &[1], 0, Reduction::Sum, false).unwrap();
        let want = -(6.0 * (1.0f64 / 27.0)).ln();
        assert!((loss.to_vec::<f64>()[0] - want).abs() < 1e-12);
    }

    #[test]
    fn an_impossible_alignment_is_infinite_or_zeroed() {
        // Two repeated labels need a blank between them: 3 frames at least.
        let lp = uniform(2, 3);
        let targets = Tensor::from_vec(vec![1i64, 1], &[1, 2]);
        let loss = ctc_loss(&lp, &targets, &[2], &[2], 0, Reduction::None, false).unwrap();
        assert_eq!(loss.to_vec::<f64>()[0], f64::INFINITY);
        let loss = ctc_loss(&lp, &targets, &[2], &[2], 0, Reduction::None, true).unwrap();
        assert_eq!(loss.to_vec::<f64>()[0], 0.0);
    }

    #[test]
    fn bad_lengths_are_refused() {
        let lp = uniform(2, 3);
        let targets = Tensor::from_vec(vec![1i64], &[1, 1]);
        let err = ctc_loss(&lp, &targets, &[5], &[1], 0, Reduction::Sum, false).unwrap_err();
        assert!(err.to_string().contains("at most 2"), "{err}");
    }

    #[test]
    fn zero_dimensional_targets_are_refused() {
        // Found by the registry fuzz: this indexed an empty shape.
        let targets = Tensor::from_vec(vec![1i64], &[]);
        let err = ctc_loss(
            &uniform(6, 2),
            &targets,
            &[6],
            &[2],
            0,
            Reduction::Mean,
            false,
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("Expected 1 to 2 dimensions"),
            "{err}"
        );
    }
}
