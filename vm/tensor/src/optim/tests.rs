//! Each rule against PyTorch 2.15's single-tensor optimizers: a float64
//! parameter of three elements after four steps on fixed gradients
//! (printed by PyTorch; the element order of operations is the same, so
//! the values are equal to the last bit).

use super::*;
use crate::{DType, Scalar, Tensor, TensorError};

const GRADS: [[f64; 3]; 4] = [
    [0.3, -0.2, 0.1],
    [-0.4, -0.1, 0.25],
    [0.05, 0.3, -0.6],
    [0.2, 0.2, 0.2],
];

/// A one-tensor list (a group of one parameter).
fn one(t: &Tensor) -> &[Tensor] {
    std::slice::from_ref(t)
}

fn param() -> Tensor {
    Tensor::from_vec(vec![0.5, -1.25, 2.0], &[3])
}

fn zeros() -> Tensor {
    Tensor::zeros(&[3], DType::F64)
}

fn step_count() -> Tensor {
    Tensor::zeros(&[], DType::F32)
}

/// Runs `step(p, g)` over the gradients and checks the parameter.
fn check(name: &str, expected: [f64; 3], mut step: impl FnMut(&Tensor, &Tensor)) {
    let p = param();
    for g in GRADS {
        step(&p, &Tensor::from_vec(g.to_vec(), &[3]));
    }
    assert_eq!(p.to_vec::<f64>(), expected, "{name}");
}

fn sgd(lr: f64) -> Sgd {
    Sgd {
        lr,
        momentum: 0.0,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        maximize: false,
    }
}

#[test]
fn sgd_plain_and_with_momentum() {
    check("sgd", [0.485, -1.27, 2.005], |p, g| {
        sgd(0.1).step(one(p), one(g), &[], &[]).unwrap()
    });
    let momentum = Sgd {
        momentum: 0.9,
        dampening: 0.2,
        weight_decay: 0.05,
        ..sgd(0.1)
    };
    let buf = zeros();
    let mut first = true;
    let expected = [0.44087191808, -1.1726633996799998, 1.90832572928];
    check("sgd momentum", expected, |p, g| {
        let fresh: &[usize] = if first { &[0] } else { &[] };
        first = false;
        momentum.step(one(p), one(g), one(&buf), fresh).unwrap()
    });
    let nesterov = Sgd {
        momentum: 0.9,
        nesterov: true,
        maximize: true,
        ..sgd(0.1)
    };
    let buf = zeros();
    let mut first = true;
    check(
        "sgd nesterov",
        [0.5368430000000001, -1.246992, 2.002326],
        |p, g| {
            let fresh: &[usize] = if first { &[0] } else { &[] };
            first = false;
            nesterov.step(one(p), one(g), one(&buf), fresh).unwrap()
        },
    );
}

fn adam(lr: f64) -> Adam {
    Adam {
        lr,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled_weight_decay: false,
        amsgrad: false,
        maximize: false,
    }
}

#[test]
fn adam_family() {
    let (m, v, vmax, t) = (zeros(), zeros(), zeros(), step_count());
    let run = |a: Adam| {
        move |p: &Tensor, g: &Tensor| {
            a.step(one(p), one(g), one(&m), one(&v), one(&vmax), one(&t))
                .unwrap()
        }
    };
    let expected = [0.37096361971873165, -0.99671092427056, 1.7370488524533885];
    check(
        "adam",
        expected,
        run(Adam {
            weight_decay: 0.1,
            ..adam(0.1)
        }),
    );
    let (m, v, vmax, t) = (zeros(), zeros(), zeros(), step_count());
    let adamw = Adam {
        weight_decay: 0.01,
        decoupled_weight_decay: true,
        amsgrad: true,
        maximize: true,
        ..adam(0.1)
    };
    let expected = [0.5849021753331201, -1.396216735165769, 2.1514985945325136];
    check("adamw amsgrad", expected, |p, g| {
        adamw
            .step(one(p), one(g), one(&m), one(&v), one(&vmax), one(&t))
            .unwrap()
    });
    assert_eq!(t.item().unwrap(), Scalar::Float(4.0));
}

#[test]
fn adamax_nadam_radam() {
    let (m, u, t) = (zeros(), zeros(), step_count());
    let adamax = Adamax {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.1,
        maximize: false,
    };
    let expected = [0.3783431055047495, -1.0251027138622868, 1.7582783774956925];
    check("adamax", expected, |p, g| {
        adamax
            .step(one(p), one(g), one(&m), one(&u), one(&t))
            .unwrap()
    });
    let nadam = NAdam {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
        momentum_decay: 4e-3,
        decoupled_weight_decay: false,
        maximize: false,
    };
    for (name, n, expected) in [
        (
            "nadam",
            nadam,
            [0.42006191655909764, -1.236304049107075, 1.861686775226267],
        ),
        (
            "nadam decoupled",
            NAdam {
                weight_decay: 0.1,
                decoupled_weight_decay: true,
                ..nadam
            },
            [0.4020024970174069, -1.1903790271742438, 1.787002134375298],
        ),
    ] {
        let (m, v, t) = (zeros(), zeros(), step_count());
        let product = Tensor::full(&[], Scalar::Float(1.0), DType::F32);
        check(name, expected, |p, g| {
            n.step(one(p), one(g), one(&m), one(&v), one(&product), one(&t))
                .unwrap()
        });
    }
    let (m, v, t) = (zeros(), zeros(), step_count());
    let radam = RAdam {
        lr: 0.1,
        beta1: 0.9,
        beta2: 0.5,
        eps: 1e-8,
        weight_decay: 0.0,
        decoupled_weight_decay: false,
        maximize: false,
    };
    let expected = [0.47525220259472145, -1.2241061988113338, 1.9848324246836537];
    check("radam", expected, |p, g| {
        radam
            .step(one(p), one(g), one(&m), one(&v), one(&t))
            .unwrap()
    });
}

#[test]
fn adagrad_adadelta_rmsprop() {
    let (sum, t) = (zeros(), step_count());
    let adagrad = Adagrad {
        lr: 0.1,
        lr_decay: 0.1,
        weight_decay: 0.1,
        eps: 1e-10,
        maximize: false,
    };
    let expected = [0.416215364386063, -1.1513946033685825, 1.8380689455208115];
    check("adagrad", expected, |p, g| {
        adagrad.step(one(p), one(g), one(&sum), one(&t)).unwrap()
    });
    let (sq, acc, t) = (zeros(), zeros(), step_count());
    let adadelta = Adadelta {
        lr: 1.0,
        rho: 0.9,
        eps: 1e-6,
        weight_decay: 0.1,
        maximize: false,
    };
    let expected = [0.49628906381002064, -1.2474752242017046, 1.993024074213458];
    check("adadelta", expected, |p, g| {
        adadelta
            .step(one(p), one(g), one(&sq), one(&acc), one(&t))
            .unwrap()
    });
    let rms = RmsProp {
        lr: 0.01,
        alpha: 0.99,
        eps: 1e-8,
        weight_decay: 0.0,
        momentum: 0.0,
        centered: false,
        maximize: false,
    };
    for (name, r, expected) in [
        (
            "rmsprop",
            rms,
            [0.4327690030272111, -1.2329777078609396, 1.8691543999253903],
        ),
        (
            "rmsprop centered momentum",
            RmsProp {
                centered: true,
                momentum: 0.5,
                ..rms
            },
            [0.3994384619105729, -1.1504185141051886, 1.7554035914630994],
        ),
    ] {
        let (sq, ga, buf, t) = (zeros(), zeros(), zeros(), step_count());
        check(name, expected, |p, g| {
            r.step(one(p), one(g), one(&sq), one(&ga), one(&buf), one(&t))
                .unwrap()
        });
    }
}

#[test]
fn rprop_and_asgd() {
    let (prev, t) = (zeros(), step_count());
    let size = Tensor::full(&[3], Scalar::Float(0.1), DType::F64);
    let rprop = Rprop {
        etaminus: 0.5,
        etaplus: 1.2,
        step_size_min: 1e-6,
        step_size_max: 50.0,
        maximize: false,
    };
    let expected = [0.29000000000000004, -1.0899999999999999, 1.7199999999999998];
    check("rprop", expected, |p, g| {
        rprop
            .step(one(p), one(g), one(&prev), one(&size), one(&t))
            .unwrap()
    });
    let (ax, t) = (zeros(), step_count());
    let eta = Tensor::full(&[], Scalar::Float(0.1), DType::F32);
    let mu = Tensor::full(&[], Scalar::Float(1.0), DType::F32);
    let asgd = Asgd {
        lr: 0.1,
        lambd: 1e-4,
        alpha: 0.75,
        t0: 2.0,
        weight_decay: 0.1,
        maximize: false,
    };
    let expected = [0.4654242177856202, -1.2211897221148778, 1.926309711007665];
    check("asgd", expected, |p, g| {
        asgd.step(one(p), one(g), one(&ax), one(&eta), one(&mu), one(&t))
            .unwrap()
    });
}

/// A long parameter is split over threads; a strided one and a float16
/// one go through dense copies: all give the elementwise result.
#[test]
fn long_strided_and_half_parameters_match_short_ones() {
    let n = 100_003;
    let values: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let grads: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
    let a = adam(0.01);
    let run = |p: &Tensor, g: &Tensor| {
        let (m, v, t) = (
            p.zeros_like(p.dtype()),
            p.zeros_like(p.dtype()),
            step_count(),
        );
        for _ in 0..3 {
            a.step(one(p), one(g), one(&m), one(&v), &[], one(&t))
                .unwrap();
        }
    };
    let long = Tensor::from_vec(values.clone(), &[n]);
    run(&long, &Tensor::from_vec(grads.clone(), &[n]));
    let each: Vec<f32> = values
        .iter()
        .zip(&grads)
        .map(|(&x, &g)| {
            let p = Tensor::from_vec(vec![x], &[1]);
            run(&p, &Tensor::from_vec(vec![g], &[1]));
            p.to_vec::<f32>()[0]
        })
        .step_by(997)
        .collect();
    let long_values: Vec<f32> = long.to_vec::<f32>().into_iter().step_by(997).collect();
    assert_eq!(long_values, each);

    let square = Tensor::from_vec(values[..9].to_vec(), &[3, 3]);
    let transposed = square.with_layout(square.layout().permute(&[1, 0]));
    let dense = transposed.copy();
    let g = Tensor::from_vec(grads[..9].to_vec(), &[3, 3]);
    run(&transposed, &g);
    run(&dense, &g);
    assert_eq!(transposed.to_vec::<f32>(), dense.to_vec::<f32>());

    let single = Tensor::from_vec(values[..9].to_vec(), &[9]);
    let g = Tensor::from_vec(grads[..9].to_vec(), &[9]);
    let half = single.to_dtype(DType::F16);
    run(&half, &g.to_dtype(DType::F16));
    run(&single, &g);
    let close = half
        .to_vec::<f32>()
        .iter()
        .zip(single.to_vec::<f32>())
        .all(|(h, s)| (h - s).abs() < 1e-2);
    assert!(close);
    assert_eq!(half.dtype(), DType::F16);
}

#[test]
fn mismatched_state_and_lists_are_refused() {
    let p = param();
    let wrong = Tensor::zeros(&[2], DType::F64);
    let err = sgd(0.1).step(one(&p), &[wrong], &[], &[]).unwrap_err();
    assert!(
        matches!(
            err,
            TensorError::OptimizerState {
                what: "grad",
                index: 0,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "sgd: the grad of parameter 0 is a float64 tensor of size torch.Size([2]), but the parameter is a float64 tensor of size torch.Size([3])"
    );
    let err = sgd(0.1)
        .step(&[p.clone(), p.clone()], &[zeros()], &[], &[])
        .unwrap_err();
    assert!(
        err.to_string().contains("expected 2 tensors in grads"),
        "{err}"
    );
    let ints = Tensor::zeros(&[3], DType::I64);
    let err = sgd(0.1).step(one(&ints), one(&ints), &[], &[]).unwrap_err();
    assert!(
        matches!(err, TensorError::NotImplementedFor { .. }),
        "{err}"
    );
}

/// A gradient that shares the parameter's storage is read before it is
/// written (the update goes through copies).
#[test]
fn aliased_gradient() {
    let p = param();
    sgd(0.5).step(one(&p), one(&p), &[], &[]).unwrap();
    assert_eq!(p.to_vec::<f64>(), [0.25, -0.625, 1.0]);
}
