//! Flash attention against its composed definition: values and
//! gradients in both dtypes, causal, masked, grouped and strided operands.

use super::*;

fn data(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (((i * 7919 + seed * 104_729) % 2003) as f64 / 1001.5 - 1.0) * 2.0)
        .collect()
}

/// The composed definition for one query head `h` of batch `b`, in
/// f64: scores, mask, softmax over the keys seen, product.
#[allow(clippy::too_many_arguments)] // the operands and where the head sits
fn reference(
    q: &[f64],
    k: &[f64],
    v: &[f64],
    mask: Option<&[f64]>,
    z: &Sizes,
    (b, h): (usize, usize),
    causal: bool,
    scale: f64,
) -> Vec<f64> {
    let (l, s, e) = (z.l, z.s, z.e);
    let qh = &q[(b * z.hq + h) * l * e..];
    let kv = (b * z.hk + h / z.group()) * s * e;
    let (kh, vh) = (&k[kv..], &v[kv..]);
    let mut out = vec![0.0; l * e];
    for i in 0..l {
        let seen = if causal { (i + 1).min(s) } else { s };
        let scores: Vec<f64> = (0..seen)
            .map(|j| {
                let dot: f64 = (0..e).map(|c| qh[i * e + c] * kh[j * e + c]).sum();
                dot * scale + mask.map_or(0.0, |m| m[i * s + j])
            })
            .collect();
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        if max == f64::NEG_INFINITY {
            continue;
        }
        let w: Vec<f64> = scores.iter().map(|x| (x - max).exp()).collect();
        let total: f64 = w.iter().sum();
        for (j, wj) in w.iter().enumerate() {
            for c in 0..e {
                out[i * e + c] += wj / total * vh[j * e + c];
            }
        }
    }
    out
}

struct Case {
    z: Sizes,
    causal: bool,
    mask: Option<Vec<f64>>,
}

fn cases() -> Vec<Case> {
    let z = |b, hq, hk, l, s, e| Sizes { b, hq, hk, l, s, e };
    let mut masked = data(3 * 5, 9);
    masked[5..10].fill(f64::NEG_INFINITY); // a query that sees no key
    vec![
        Case {
            z: z(2, 3, 3, 16, 16, 8),
            causal: true,
            mask: None,
        },
        Case {
            z: z(1, 2, 2, 5, 9, 3),
            causal: false,
            mask: None,
        },
        Case {
            z: z(1, 4, 2, 9, 5, 4),
            causal: true,
            mask: None,
        },
        // Causal runs of rows: two whole and a short one, keys cut by S.
        Case {
            z: z(1, 2, 1, 40, 25, 3),
            causal: true,
            mask: None,
        },
        Case {
            z: z(2, 4, 1, 3, 5, 2),
            causal: false,
            mask: Some(masked),
        },
    ]
}

fn operands(c: &Case) -> [Tensor; 3] {
    let z = &c.z;
    [
        Tensor::from_vec(data(z.b * z.hq * z.l * z.e, 1), &[z.b, z.hq, z.l, z.e]),
        Tensor::from_vec(data(z.b * z.hk * z.s * z.e, 2), &[z.b, z.hk, z.s, z.e]),
        Tensor::from_vec(data(z.b * z.hk * z.s * z.e, 3), &[z.b, z.hk, z.s, z.e]),
    ]
}

impl Case {
    fn mask(&self) -> Option<Tensor> {
        let shape = [self.z.l, self.z.s];
        self.mask
            .as_ref()
            .map(|m| Tensor::from_vec(m.clone(), &shape))
    }

    fn flash<'a>(&self, mask: Option<&'a Tensor>) -> Flash<'a> {
        Flash {
            mask,
            causal: self.causal,
            scale: 0.7,
        }
    }
}

fn run(c: &Case, [q, k, v]: &[Tensor; 3]) -> (Tensor, Tensor) {
    let mask = c.mask();
    flash_attention(q, k, v, &c.flash(mask.as_ref())).expect("flash attention")
}

#[test]
fn flash_attention_equals_the_composed_definition_in_both_dtypes() {
    for c in cases() {
        let ops = operands(&c);
        let (q, k, v) = (
            ops[0].to_vec::<f64>(),
            ops[1].to_vec::<f64>(),
            ops[2].to_vec::<f64>(),
        );
        for dtype in [DType::F64, DType::F32] {
            let typed = ops.clone().map(|t| t.to_dtype(dtype));
            let mask = c.mask().map(|m| m.to_dtype(dtype));
            let a = c.flash(mask.as_ref());
            let got = flash_attention(&typed[0], &typed[1], &typed[2], &a)
                .expect("flash attention")
                .0
                .to_vec::<f64>();
            let tol = if dtype == DType::F64 { 1e-12 } else { 1e-5 };
            for bh in 0..c.z.b * c.z.hq {
                let pos = (bh / c.z.hq, bh % c.z.hq);
                let want = reference(&q, &k, &v, c.mask.as_deref(), &c.z, pos, c.causal, 0.7);
                let at = bh * c.z.l * c.z.e;
                for (g, w) in got[at..at + want.len()].iter().zip(&want) {
                    assert!((g - w).abs() < tol, "{dtype:?}: {g} vs {w}");
                }
            }
        }
    }
}

#[test]
fn flash_attention_backward_equals_finite_differences() {
    for c in cases() {
        let ops = operands(&c);
        let (out, lse) = run(&c, &ops);
        let weights: Vec<f64> = (0..out.numel())
            .map(|i| ((i % 7) as f64 - 3.0) / 3.0)
            .collect();
        let g = Tensor::from_vec(weights.clone(), out.shape());
        let mask = c.mask();
        let a = c.flash(mask.as_ref());
        let grads = flash_attention_backward(&g, &ops[0], &ops[1], &ops[2], &out, &lse, &a)
            .expect("flash attention backward");
        let grads = [grads.0, grads.1, grads.2];
        let loss = |ops: &[Tensor; 3]| -> f64 {
            let out = run(&c, ops).0.to_vec::<f64>();
            out.iter().zip(&weights).map(|(o, w)| o * w).sum()
        };
        for (which, grad) in grads.iter().enumerate() {
            let grad = grad.to_vec::<f64>();
            let base = ops[which].to_vec::<f64>();
            for i in (0..base.len()).step_by(3) {
                let shifted = |d: f64| {
                    let mut moved = base.clone();
                    moved[i] += d;
                    let mut ops = ops.clone();
                    ops[which] = Tensor::from_vec(moved, ops[which].shape());
                    loss(&ops)
                };
                let numeric = (shifted(1e-6) - shifted(-1e-6)) / 2e-6;
                assert!(
                    (numeric - grad[i]).abs() < 1e-6,
                    "operand {which} element {i}: {} vs {numeric}",
                    grad[i]
                );
            }
        }
    }
}

#[test]
fn other_forms_are_left_to_the_composed_path() {
    let f = |shape: &[usize], dtype| Tensor::zeros(shape, dtype);
    let q = f(&[1, 2, 4, 8], DType::F32);
    let applies = |k: &Tensor, v: &Tensor, mask: Option<&Tensor>, gqa| {
        flash_applies(&q, k, v, mask, 0.0, gqa)
    };
    assert!(applies(&q, &q, None, false));
    assert!(!flash_applies(&q, &q, &q, None, 0.1, false), "dropout");
    assert!(
        !applies(&f(&[2, 2, 4, 8], DType::F32), &q, None, false),
        "batches differ"
    );
    assert!(
        !applies(&q, &f(&[1, 2, 4, 5], DType::F32), None, false),
        "values' width"
    );
    assert!(
        !applies(&q, &f(&[1, 2, 4, 8], DType::F64), None, false),
        "dtypes differ"
    );
    let (k3, v3) = (f(&[1, 3, 4, 8], DType::F32), f(&[1, 3, 4, 8], DType::F32));
    assert!(!applies(&k3, &v3, None, true), "heads that do not group");
    let q4 = f(&[1, 4, 4, 8], DType::F32);
    let (k2, v2) = (f(&[1, 2, 4, 8], DType::F32), f(&[1, 2, 4, 8], DType::F32));
    assert!(
        flash_applies(&q4, &k2, &v2, None, 0.0, true),
        "grouped heads"
    );
    assert!(
        !flash_applies(&q4, &k2, &v2, None, 0.0, false),
        "groups need enable_gqa"
    );
    assert!(
        !applies(&q, &q, Some(&f(&[4, 4], DType::I64)), false),
        "an integer mask"
    );
    assert!(
        !applies(&q, &q, Some(&f(&[3, 4, 4], DType::Bool)), false),
        "a mask of other heads"
    );
    assert!(applies(&q, &q, Some(&f(&[4, 4], DType::Bool)), false));
    assert_eq!(
        flash_form(
            &f(&[2, 4, 8], DType::F32),
            &f(&[2, 4, 8], DType::F32),
            &f(&[2, 4, 8], DType::F32),
            None,
            0.0,
            false
        ),
        Some(FlashForm::Unbatched)
    );
    assert_eq!(
        flash_form(
            &f(&[4, 8], DType::F32),
            &f(&[4, 8], DType::F32),
            &f(&[4, 8], DType::F32),
            None,
            0.0,
            false
        ),
        None
    );
}

/// Operands viewed by head from a [B, L, H, E] projection (strided, read in
/// place) give what their dense copies give, forward and backward.
#[test]
fn strided_operands_equal_their_dense_copies() {
    let (b, l, h, e) = (2, 20, 3, 4);
    let by_position = |seed| Tensor::from_vec(data(b * l * h * e, seed), &[b, l, h, e]);
    let by_head = |t: Tensor| t.with_layout(t.layout().transpose(1, 2));
    let ops = [1, 2, 3].map(|seed| by_head(by_position(seed)));
    let dense = ops.clone().map(|t| t.contiguous());
    for causal in [false, true] {
        let a = Flash {
            mask: None,
            causal,
            scale: 0.5,
        };
        let (out, lse) = flash_attention(&ops[0], &ops[1], &ops[2], &a).unwrap();
        let (want, _) = flash_attention(&dense[0], &dense[1], &dense[2], &a).unwrap();
        assert_eq!(out.to_vec::<f64>(), want.to_vec::<f64>());
        let g = by_head(by_position(4));
        let grads =
            flash_attention_backward(&g, &ops[0], &ops[1], &ops[2], &out, &lse, &a).unwrap();
        let wants = flash_attention_backward(
            &g.contiguous(),
            &dense[0],
            &dense[1],
            &dense[2],
            &out.contiguous(),
            &lse.contiguous(),
            &a,
        )
        .unwrap();
        for (got, want) in [(grads.0, wants.0), (grads.1, wants.1), (grads.2, wants.2)] {
            assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
        }
    }
}
