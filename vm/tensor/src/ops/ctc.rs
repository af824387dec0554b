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

/// `torch.ctc_loss(log_probs, targets, input_lengths, target_lengths,
/// blank, reduction, zero_infinity)`: `log_probs` is `[T, N, C]` (or
/// `[T, C]` unbatched), `targets` `[N, S]` padded or the concatenation of
/// all targets; `mean` divides each loss by its target length first.
pub fn ctc_loss(
    log_probs: &Tensor,
    targets: &Tensor,
    input_lengths: &[i64],
    target_lengths: &[i64],
    blank: i64,
    reduction: Reduction,
    zero_infinity: bool,
) -> Result<Tensor> {
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
        if targets.ndim() != 2 - unbatched as usize || rows != batch || (width as i64) < longest {
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
    let problem = Problem {
        batch,
        classes,
        blank: blank as usize,
    };
    let samples = (0..batch).map(|b| {
        let target = &labels[starts[b]..starts[b] + target_lengths[b] as usize];
        (b, target, input_lengths[b] as usize)
    });
    let losses = match log_probs.dtype() {
        DType::F32 => {
            problem.losses::<f32>(log_probs, samples, zero_infinity, reduction, target_lengths)
        }
        _ => problem.losses::<f64>(log_probs, samples, zero_infinity, reduction, target_lengths),
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

    /// `-log p(target | input)` over the first `frames` frames.
    fn negative_log_likelihood<F: Float>(
        &self,
        at: &dyn Fn(usize, usize) -> F,
        target: &[i64],
        frames: usize,
    ) -> F {
        let ninf = F::neg_infinity();
        // The extended target: blank, l1, blank, l2, …, blank.
        let len = 2 * target.len() + 1;
        let label = |s: usize| {
            if s.is_multiple_of(2) {
                self.blank
            } else {
                target[s / 2] as usize
            }
        };
        if frames == 0 {
            return if target.is_empty() {
                F::zero()
            } else {
                F::infinity()
            };
        }
        let mut alpha = vec![ninf; len];
        alpha[0] = at(0, self.blank);
        if len > 1 {
            alpha[1] = at(0, label(1));
        }
        let mut next = vec![ninf; len];
        for t in 1..frames {
            for s in 0..len {
                let here = alpha[s];
                let prev = if s > 0 { alpha[s - 1] } else { ninf };
                let skip = if s > 1 && label(s) != label(s - 2) {
                    alpha[s - 2]
                } else {
                    ninf
                };
                next[s] = log_sum_exp(&[here, prev, skip]) + at(t, label(s));
            }
            std::mem::swap(&mut alpha, &mut next);
        }
        let last = if len > 1 { alpha[len - 2] } else { ninf };
        -log_sum_exp(&[alpha[len - 1], last])
    }
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

    fn uniform(frames: usize, classes: usize) -> Tensor {
        let lp = (1.0 / classes as f64).ln();
        Tensor::from_vec(vec![lp; frames * classes], &[frames, 1, classes])
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
