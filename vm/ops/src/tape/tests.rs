//! Recording a training step through the registry and the engine, then
//! replaying it: the same parameters as running the step again eagerly.

use fxvm_tensor::Tensor;

use super::{Segment, Tape};
use crate::autograd::engine::{self, Options};
use crate::autograd::ops;
use crate::value::Value;

fn param(v: Vec<f32>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(v, shape);
    t.set_requires_grad(true).unwrap();
    t
}

/// `w`, `b` of a tiny linear model and an SGD-with-momentum buffer each.
struct Model {
    w: Tensor,
    b: Tensor,
    bufs: Vec<Tensor>,
}

impl Model {
    fn new() -> Model {
        Model {
            w: param((0..12).map(|i| (i as f32 - 5.5) / 7.0).collect(), &[4, 3]),
            b: param(vec![0.1, -0.2, 0.3], &[3]),
            bufs: vec![
                Tensor::zeros(&[4, 3], fxvm_tensor::DType::F32),
                Tensor::zeros(&[3], fxvm_tensor::DType::F32),
            ],
        }
    }

    /// zero_grad (to None), loss = sum(tanh(x @ w + b)²), backward, SGD.
    fn step(&self, x: &Tensor) -> Tensor {
        for p in [&self.w, &self.b] {
            super::set_grad(p, None).unwrap();
        }
        let y = ops::add(&ops::mm(x, &self.w).unwrap(), &self.b).unwrap();
        let y = ops::unary("tanh", &y).unwrap();
        let loss = ops::sum(&ops::mul(&y, &y).unwrap(), &[], false).unwrap();
        engine::backward(
            std::slice::from_ref(&loss),
            vec![None],
            None,
            Options::default(),
        )
        .unwrap();
        let params = vec![self.w.clone(), self.b.clone()];
        let grads = params.iter().map(|p| p.grad().unwrap()).collect();
        ops::call_value(
            "_optim_sgd_",
            vec![
                Value::Tensors(params),
                Value::Tensors(grads),
                Value::Tensors(self.bufs.clone()),
                Value::Ints(vec![]),
            ],
            vec![
                ("lr", Value::Float(0.1)),
                ("momentum", Value::Float(0.9)),
                ("dampening", Value::Float(0.0)),
                ("weight_decay", Value::Float(0.0)),
                ("nesterov", Value::Bool(false)),
                ("maximize", Value::Bool(false)),
            ],
        )
        .unwrap();
        loss.detach()
    }

    fn values(&self) -> Vec<Vec<f32>> {
        [&self.w, &self.b, &self.bufs[0], &self.w.grad().unwrap()]
            .iter()
            .map(|t| t.to_vec())
            .collect()
    }
}

fn input(k: usize) -> Tensor {
    Tensor::from_vec(
        (0..8)
            .map(|i| ((i * 7 + k * 3) % 11) as f32 / 5.0 - 1.0)
            .collect(),
        &[2, 4],
    )
}

fn record(model: &Model, x: &Tensor) -> Result<Tape, String> {
    super::start(std::slice::from_ref(x)).unwrap();
    let loss = model.step(x);
    super::finish(&[loss])
}

fn replay(tape: &Tape, x: &Tensor) -> Vec<Tensor> {
    assert_eq!(tape.violation(std::slice::from_ref(x)), None);
    match tape.replay(vec![x.clone()], vec![]).resume(None).unwrap() {
        Segment::Done(outs) => outs,
        Segment::Call { .. } => panic!("no call steps were recorded"),
    }
}

#[test]
fn a_replayed_step_updates_as_the_eager_step_does() {
    let (eager, taped) = (Model::new(), Model::new());
    eager.step(&input(0));
    taped.step(&input(0));
    let mut eager_losses = vec![eager.step(&input(1))];
    let tape = record(&taped, &input(1)).unwrap();
    let mut replay_losses = vec![];
    for k in 2..6 {
        eager_losses.push(eager.step(&input(k)));
        replay_losses.push(replay(&tape, &input(k)).remove(0));
    }
    assert_eq!(eager.values(), taped.values());
    let losses = |ls: &[Tensor]| ls.iter().map(|l| l.to_vec::<f32>()).collect::<Vec<_>>();
    assert_eq!(losses(&eager_losses[1..]), losses(&replay_losses));
    // The backward pass is on the tape, its steps named for profiles.
    let labels: Vec<String> = (0..tape.len()).map(|i| tape.label(i)).collect();
    assert!(
        labels.contains(&"matmul (backward)".to_owned()),
        "{labels:?}"
    );
    assert!(labels.contains(&"full (backward)".to_owned()), "{labels:?}");
    assert!(labels.contains(&"accumulate grad".to_owned()), "{labels:?}");
}

#[test]
fn a_tensor_made_outside_the_registry_refuses_the_recording() {
    let model = Model::new();
    let x = input(0);
    super::start(std::slice::from_ref(&x)).unwrap();
    let made = Tensor::from_vec(vec![1.0f32; 3], &[3]);
    ops::add(&model.b, &made).unwrap();
    let why = super::finish(&[]).unwrap_err();
    assert!(
        why.contains("add reads a tensor (shape [3]) computed outside the op registry"),
        "{why}"
    );
}

#[test]
fn a_kept_intermediate_refuses_the_recording() {
    let model = Model::new();
    let x = input(0);
    super::start(std::slice::from_ref(&x)).unwrap();
    let kept = ops::mm(&x, &model.w.detach()).unwrap();
    let why = super::finish(&[]).unwrap_err();
    assert!(
        why.contains("shape [2, 3] computed in it is kept after it returns"),
        "{why}"
    );
    drop(kept);
}

#[test]
fn a_value_read_refuses_and_guards_reject_other_inputs() {
    let x = input(0);
    super::start(std::slice::from_ref(&x)).unwrap();
    super::value_read("Tensor.item at step.py:3");
    assert_eq!(
        super::finish(&[]).unwrap_err(),
        "it reads a tensor's value (Tensor.item at step.py:3)"
    );

    let model = Model::new();
    model.step(&x);
    let tape = record(&model, &x).unwrap();
    let wider = Tensor::zeros(&[3, 4], fxvm_tensor::DType::F32);
    assert!(
        tape.violation(&[wider])
            .unwrap()
            .contains("had shape [2, 4]")
    );
    let doubles = x.to_dtype(fxvm_tensor::DType::F64);
    assert!(
        tape.violation(&[doubles])
            .unwrap()
            .contains("was float32 when recorded")
    );
    // Recorded with gradients present (then dropped by the step): any
    // gradient fits, but not None — Python decided on `p.grad is None`.
    assert_eq!(tape.violation(std::slice::from_ref(&x)), None);
    model.w.set_grad(None).unwrap();
    assert!(
        tape.violation(std::slice::from_ref(&x))
            .unwrap()
            .contains(".grad")
    );
}

#[test]
fn nothing_records_outside_a_recording_or_twice() {
    assert!(!super::active());
    super::start(&[]).unwrap();
    assert!(super::start(&[]).is_err());
    super::abort();
    assert!(!super::active());
    assert_eq!(super::finish(&[]).unwrap_err(), "no step is being recorded");
}
