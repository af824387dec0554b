//! Every formula (and composite row) against finite differences in float64 (PyTorch's
//! gradcheck), and gradients of gradients where the formula's own ops are
//! differentiable (gradgradcheck). Rows are taken from the registry: a
//! row with a formula and no sample (in `samples`) fails the test.

use std::collections::HashMap;

use fxvm_tensor::autograd::is_grad_enabled;
use fxvm_tensor::{DType, Tensor};

mod samples;

use samples::{Call, key, sample, tensor, values, x};

use super::Derivative;
use super::engine::{self, Options};
use crate::op::Op;
use crate::value::Value;

/// The outputs of a result that are differentiable tensors.
fn outputs(v: &Value, inputs: &[Value]) -> Vec<Tensor> {
    match v {
        Value::Tensor(t) => vec![t.clone()],
        Value::Tensors(ts) => ts.clone(),
        Value::Tuple(items) | Value::ReturnType(_, items) => {
            items.iter().flat_map(|i| outputs(i, inputs)).collect()
        }
        Value::Input(i) => outputs(&inputs[*i], inputs),
        _ => vec![],
    }
    .into_iter()
    // Floating-point outputs, less those that never require grad (flash
    // attention's log-sum-exp) while the call records.
    .filter(|t| t.dtype().is_float() && (t.requires_grad() || !is_grad_enabled()))
    .collect()
}

/// The leaves a call differentiates.
fn leaves(call: &Call) -> Vec<Tensor> {
    let mut out = Vec::new();
    for v in call.0.iter().chain(call.1.iter().map(|(_, v)| v)) {
        let ts: &[Tensor] = match v {
            Value::Tensor(t) => std::slice::from_ref(t),
            Value::Tensors(ts) => ts,
            _ => &[],
        };
        out.extend(ts.iter().filter(|t| t.requires_grad()).cloned());
    }
    out
}

/// Runs the row; an in-place row on a copy of its first input (a leaf
/// cannot be written in place), which stays differentiable.
fn run(op: &Op, call: &Call) -> Vec<Tensor> {
    let mut positional = call.0.clone();
    if op.schema.mutated().is_some() {
        let Value::Tensor(t) = &positional[0] else {
            unreachable!()
        };
        positional[0] = Value::Tensor(
            super::ops::call("clone", vec![Value::Tensor(t.clone())], vec![]).unwrap(),
        );
    }
    let kw: Vec<(&str, Value)> = call.1.iter().map(|(k, v)| (*k, v.clone())).collect();
    let r = op
        .call(positional.clone(), kw)
        .unwrap_or_else(|e| panic!("{}: {e}", key(op)));
    outputs(&r, &positional)
}

/// Σ outputs · weights (fixed weights per output).
fn project(outs: &[Tensor]) -> f64 {
    outs.iter()
        .enumerate()
        .map(|(k, t)| {
            let w = values(t.numel(), 100 + k as u64);
            t.to_vec::<f64>()
                .iter()
                .zip(w)
                .map(|(a, b)| a * b)
                .sum::<f64>()
        })
        .sum()
}

fn weights(outs: &[Tensor]) -> Vec<Option<Tensor>> {
    outs.iter()
        .enumerate()
        .map(|(k, t)| {
            Some(Tensor::from_vec(
                values(t.numel(), 100 + k as u64),
                t.shape(),
            ))
        })
        .collect()
}

/// The numeric gradient of `f` at each leaf by central differences.
fn numeric(leaves: &[Tensor], f: &dyn Fn() -> f64) -> Vec<Vec<f64>> {
    let h = 1e-6;
    leaves
        .iter()
        .map(|t| {
            (0..t.numel())
                .map(|i| {
                    let mut v = t.to_vec::<f64>();
                    let at = |v: &[f64]| {
                        t.copy_from(&Tensor::from_vec(v.to_vec(), t.shape()))
                            .unwrap();
                        f()
                    };
                    let orig = v[i];
                    v[i] = orig + h;
                    let up = at(&v);
                    v[i] = orig - h;
                    let down = at(&v);
                    v[i] = orig;
                    at(&v);
                    (up - down) / (2.0 * h)
                })
                .collect()
        })
        .collect()
}

fn close(what: &str, analytic: &[Option<Tensor>], numeric: &[Vec<f64>]) {
    for (k, (a, n)) in analytic.iter().zip(numeric).enumerate() {
        let a = a.as_ref().map_or(vec![0.0; n.len()], |a| a.to_vec::<f64>());
        for (i, (x, y)) in a.iter().zip(n).enumerate() {
            assert!(
                (x - y).abs() <= 1e-5 + 1e-3 * y.abs(),
                "{what}: input {k} element {i}: analytic {x}, numeric {y}\nanalytic {a:?}\nnumeric {n:?}"
            );
        }
    }
}

/// Formula rows and why some are left out of the second derivative:
/// their formulas use rows that have no formula yet (or, as PyTorch's
/// flash attention backward, none at all).
const NO_DOUBLE: &[&str] = &[
    "_scaled_dot_product_flash_attention_for_cpu",
    "mkldnn_rnn_layer",
    "F.nll_loss",
    "F.cross_entropy",
    // scatter_add and conv_transpose
    "max_pool2d",
    "F.max_pool1d_with_indices",
    "F.max_pool2d_with_indices",
    "F.max_pool3d_with_indices",
    "F.max_pool1d",
    "F.max_pool3d",
    "max_pool1d",
    "max_pool3d",
    "conv1d",
    "conv2d",
    "conv3d",
];

/// Conversion rows (checked through `to` and `double`) that leave float64.
const CONVERSIONS: &[&str] = &[
    "float", "half", "bfloat16", "long", "int", "bool", "byte", "char", "short",
];
const NARROW: &[&str] = &["float", "half", "bfloat16"];

#[test]
fn every_formula_matches_finite_differences_and_so_does_its_derivative() {
    let mut missing = Vec::new();
    let mut checked = HashMap::new();
    for op in crate::registry().ops() {
        if !matches!(
            op.derivative(),
            Some(Derivative::Formula { .. } | Derivative::Composite | Derivative::Decompose(_))
        ) {
            continue;
        }
        let k = key(op);
        let base = k.strip_suffix('_').unwrap_or(&k).to_owned();
        // Golden autograd/ops checks these against PyTorch instead: only
        // the lower triangle is read (so only symmetric perturbations are
        // meaningful), or, for CTC, PyTorch's gradient is the logits' under
        // a log-softmax rather than the log-probabilities' own.
        if matches!(
            base.as_str(),
            "linalg_cholesky" | "linalg_eigh" | "linalg_eigvalsh" | "ctc_loss" | "F.ctc_loss"
        ) {
            checked.insert(k, ());
            continue;
        }
        let Some(call) = sample(&base, op) else {
            missing.push(k);
            continue;
        };
        let leaves = leaves(&call);
        assert!(
            !leaves.is_empty(),
            "{k}: the sample has nothing to differentiate"
        );
        assert!(leaves.iter().all(|t| t.dtype() == DType::F64));
        // First derivatives.
        let outs = run(op, &call);
        if outs.is_empty() || NARROW.contains(&base.as_str()) {
            // Conversions to integers (nothing to differentiate) or to
            // narrower floats (finite differences need float64).
            assert!(
                CONVERSIONS.contains(&base.as_str()),
                "{k}: no float64 output"
            );
            continue;
        }
        let analytic = engine::grad(&outs, weights(&outs), &leaves, Options::default(), true)
            .unwrap_or_else(|e| panic!("{k}: {e}"));
        let n = numeric(&leaves, &|| project(&run(op, &call)));
        close(&k, &analytic, &n);
        // Second derivatives: of Σ grad · u.
        if !NO_DOUBLE.contains(&base.as_str()) {
            let second = |create: bool| -> (f64, Vec<Option<Tensor>>) {
                let outs = run(op, &call);
                let opts = Options {
                    retain_graph: true,
                    create_graph: create,
                };
                let g = engine::grad(&outs, weights(&outs), &leaves, opts, true)
                    .unwrap_or_else(|e| panic!("{k}: {e}"));
                let used: Vec<Tensor> = g.iter().flatten().cloned().collect();
                (
                    project(&used),
                    if create {
                        let w = weights(&used);
                        let needs: Vec<Tensor> =
                            used.iter().filter(|t| t.requires_grad()).cloned().collect();
                        if needs.is_empty() {
                            return (0.0, vec![None; leaves.len()]);
                        }
                        let w: Vec<Option<Tensor>> = used
                            .iter()
                            .zip(w)
                            .filter(|(t, _)| t.requires_grad())
                            .map(|(_, w)| w)
                            .collect();
                        engine::grad(&needs, w, &leaves, Options::default(), true)
                            .unwrap_or_else(|e| panic!("{k} (second): {e}"))
                    } else {
                        vec![]
                    },
                )
            };
            let (_, analytic2) = second(true);
            let n2 = numeric(&leaves, &|| second(false).0);
            close(&format!("{k} (second derivative)"), &analytic2, &n2);
        }
        checked.insert(k, ());
    }
    assert!(
        missing.is_empty(),
        "rows with a formula but no sample: {missing:?}"
    );
    assert!(checked.len() > 100, "only {} rows checked", checked.len());
}

/// `fixtures/autograd/derivatives.txt` lists each row's derivative; a row
/// gaining or losing one changes it (`FXVM_BLESS=1` rewrites it).
#[test]
fn the_derivative_coverage_report_is_current() {
    crate::assert_fixture_is_current("autograd/derivatives.txt", &super::coverage());
}

/// A root's gradient of the wrong shape is named by its position.
#[test]
fn a_mismatched_root_gradient_names_its_index() {
    let a = tensor(x(&[2], 1));
    let b = tensor(x(&[3], 2));
    let outs = [
        super::ops::mul_s(&a, 2.0).unwrap(),
        super::ops::mul_s(&b, 2.0).unwrap(),
    ];
    let grads = vec![
        Some(Tensor::from_vec(vec![1.0f64; 2], &[2])),
        Some(Tensor::from_vec(vec![1.0f64; 2], &[2])),
    ];
    let err = engine::backward(&outs, grads, None, Options::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Mismatch in shape: grad_output[1] has a shape of torch.Size([2]) and output[1] has a shape of torch.Size([3])."
    );
}
