use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::dtype::{DType, Scalar};
use crate::error::TensorError;
use crate::ops::PARALLEL_MIN;
use crate::tensor::Tensor;

/// A random view of a 64-element base holding 0, 1, 2, …: any sizes,
/// strides (0 = expanded, out of order = transposed) and offset that
/// stay inside the base, plus its elements computed directly from them.
fn random_view(rng: &mut SmallRng, shape: &[usize]) -> (Tensor, Vec<f32>) {
    let base = Tensor::from_vec((0..64).map(|i| i as f32).collect(), &[64]);
    loop {
        let strides: Vec<usize> = shape.iter().map(|_| rng.random_range(0..5)).collect();
        let offset = rng.random_range(0..8);
        let last = offset
            + shape
                .iter()
                .zip(&strides)
                .map(|(d, s)| (d - 1) * s)
                .sum::<usize>();
        if last >= 64 {
            continue;
        }
        let view = base.as_strided(shape, &strides, offset).unwrap();
        let n: usize = shape.iter().product();
        let values = (0..n)
            .map(|flat| {
                let (mut rest, mut at) = (flat, offset);
                for (d, s) in shape.iter().zip(&strides).rev() {
                    at += (rest % d) * s;
                    rest /= d;
                }
                at as f32
            })
            .collect();
        return (view, values);
    }
}

/// The element of an operand of shape `shape` that output index `flat`
/// (of `out`) reads under broadcasting, in row-major order.
fn broadcast_index(out: &[usize], shape: &[usize], flat: usize) -> usize {
    let mut idx = vec![0; out.len()];
    let mut rest = flat;
    for (i, d) in out.iter().enumerate().rev() {
        idx[i] = rest % d;
        rest /= d;
    }
    let skip = out.len() - shape.len();
    shape.iter().enumerate().fold(0, |acc, (i, &d)| {
        acc * d + if d == 1 { 0 } else { idx[skip + i] }
    })
}

#[test]
fn binary_ops_on_random_broadcast_strided_views_match_a_naive_loop() {
    let mut rng = SmallRng::seed_from_u64(7);
    type Reference = fn(f32, f32) -> f32;
    let ops: [(Binary, Reference); 4] = [
        (Binary::Add, |a, b| a + b),
        (Binary::Sub, |a, b| a - b),
        (Binary::Mul, |a, b| a * b),
        (Binary::Maximum, f32::max),
    ];
    for _ in 0..500 {
        let rank = rng.random_range(0..4);
        let out: Vec<usize> = (0..rank).map(|_| rng.random_range(1..5)).collect();
        // Each side drops some leading dims and sets some to 1.
        let side = |rng: &mut SmallRng| -> Vec<usize> {
            let keep = rng.random_range(0..=rank);
            out[rank - keep..]
                .iter()
                .map(|&d| if rng.random_bool(0.3) { 1 } else { d })
                .collect()
        };
        let (sa, sb) = (side(&mut rng), side(&mut rng));
        let (a, va) = random_view(&mut rng, &sa);
        let (b, vb) = random_view(&mut rng, &sb);
        let full = crate::layout::broadcast_shapes(&sa, &sb).unwrap();
        let (op, f) = ops[rng.random_range(0..ops.len())];
        let got = binary(op, &Arg::Tensor(a), &Arg::Tensor(b)).unwrap();
        assert_eq!(got.shape(), &full[..]);
        let n: usize = full.iter().product();
        let want: Vec<f32> = (0..n)
            .map(|i| {
                f(
                    va[broadcast_index(&full, &sa, i)],
                    vb[broadcast_index(&full, &sb, i)],
                )
            })
            .collect();
        assert_eq!(
            got.to_vec::<f32>(),
            want,
            "{} of {sa:?} and {sb:?}",
            op.name()
        );
    }
}

/// Forty values either side of zero, for the in-place tests.
fn sample() -> Vec<f64> {
    (0..40).map(|i| (i as f64 - 17.5) * 0.3).collect()
}

/// Each element's bits (one value for every NaN), to compare exactly.
fn bits(t: &Tensor) -> Vec<u64> {
    t.to_vec::<f64>()
        .iter()
        .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
        .collect()
}

#[test]
fn unary_in_place_gives_what_unary_gives_and_writes_the_views_storage() {
    let data = sample();
    for &op in Unary::ALL {
        for dtype in [DType::F32, DType::F64] {
            // A dense view inside a larger storage (rewritten where it
            // lies), and a transposed one (computed and stored back).
            for dense in [true, false] {
                let base = Tensor::from_vec(data.clone(), &[5, 8]).to_dtype(dtype);
                let view = if dense {
                    crate::ops::shape::narrow(&base, 0, 1, 3).unwrap()
                } else {
                    crate::ops::shape::transpose(&base, 0, 1).unwrap()
                };
                let expected = unary(op, &view).unwrap();
                let untouched = bits(&base)[..8].to_vec();
                unary_(op, &view).unwrap();
                assert_eq!(
                    bits(&view),
                    bits(&expected),
                    "{op:?} {dtype:?} dense={dense}"
                );
                if dense {
                    assert_eq!(bits(&base)[..8], untouched, "{op:?}: outside the view");
                }
            }
        }
    }
}

#[test]
fn binary_in_place_on_an_empty_tensor_reads_no_operand() {
    // A value broadcast to no elements has none to read (this panicked).
    let x = Tensor::from_vec(Vec::<f32>::new(), &[0, 3]);
    for other in [
        Arg::Scalar(Scalar::Float(2.0)),
        Arg::Tensor(Tensor::scalar(Scalar::Float(1.0), DType::F32)),
        Arg::Tensor(Tensor::from_vec(vec![1.0f32; 3], &[3])),
    ] {
        binary_(Binary::Add, &x, &other).unwrap();
        assert_eq!(x.shape(), [0, 3]);
    }
}

#[test]
fn binary_in_place_gives_what_binary_gives_for_every_operand_kind() {
    use crate::ops::shape::{narrow, transpose};
    let data = sample();
    let fresh = |dtype| Tensor::from_vec(data.clone(), &[5, 8]).to_dtype(dtype);
    for &op in Binary::ALL {
        for dtype in [DType::F32, DType::F64] {
            // Right operands: a number, a dense tensor, a single value
            // broadcast, a broadcast row, a transposed view, another
            // dtype (promoting: an error), the written tensor itself,
            // one that broadcasts `x` to more dims (PyTorch's error).
            let others = |x: &Tensor| {
                let y = Tensor::from_vec(data.iter().map(|v| v * 0.7 - 1.0).collect(), &[5, 8])
                    .to_dtype(dtype);
                vec![
                    Arg::Scalar(Scalar::Float(0.37)),
                    Arg::Scalar(Scalar::Int(-3)),
                    Arg::Tensor(y.clone()),
                    Arg::Tensor(Tensor::scalar(Scalar::Float(1.5), dtype)),
                    Arg::Tensor(narrow(&y, 0, 2, 1).unwrap()),
                    Arg::Tensor(
                        transpose(&transpose(&y, 0, 1).unwrap().contiguous(), 0, 1).unwrap(),
                    ),
                    Arg::Tensor(y.to_dtype(if dtype == DType::F32 {
                        DType::F64
                    } else {
                        DType::F32
                    })),
                    Arg::Tensor(x.clone()),
                    Arg::Tensor(Tensor::from_vec(vec![1.0f64; 80], &[2, 5, 8]).to_dtype(dtype)),
                ]
            };
            for k in 0..9 {
                let x = fresh(dtype);
                let other = others(&x).swap_remove(k);
                let expected = binary(op, &Arg::Tensor(x.clone()), &other);
                let result = binary_(op, &x, &other);
                match expected {
                    Ok(e) if e.shape() != x.shape() => assert!(
                        matches!(result, Err(TensorError::InplaceShape { .. })),
                        "{op:?} {dtype:?} operand {k}"
                    ),
                    Ok(e) if e.dtype() == dtype => {
                        result.unwrap();
                        assert_eq!(bits(&x), bits(&e), "{op:?} {dtype:?} operand {k}");
                    }
                    // Bool results and promotions cannot be stored back.
                    Ok(e) if e.dtype().category() > dtype.category() => {
                        assert!(result.is_err(), "{op:?} {dtype:?} operand {k}")
                    }
                    Ok(e) => {
                        result.unwrap();
                        assert_eq!(
                            bits(&x),
                            bits(&e.to_dtype(dtype)),
                            "{op:?} {dtype:?} operand {k}"
                        );
                    }
                    Err(_) => assert!(result.is_err(), "{op:?} {dtype:?} operand {k}"),
                }
            }
        }
    }
}

#[test]
fn unary_ops_on_random_strided_views_match_a_naive_loop() {
    let mut rng = SmallRng::seed_from_u64(11);
    for _ in 0..200 {
        let shape: Vec<usize> = (0..rng.random_range(0..4))
            .map(|_| rng.random_range(1..6))
            .collect();
        let (x, values) = random_view(&mut rng, &shape);
        let got = unary(Unary::Sqrt, &x).unwrap().to_vec::<f32>();
        let want: Vec<f32> = values.iter().map(|v| v.sqrt()).collect();
        assert_eq!(got, want, "sqrt of a {shape:?} view");
    }
}

#[test]
fn large_outputs_are_built_in_parallel_chunks_in_order() {
    let n = PARALLEL_MIN * 3 + 17;
    let src: Vec<i64> = (0..n as i64).collect();
    let out = build(n, |start, len| {
        src[start..start + len].iter().map(|x| x * 2)
    });
    assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as i64));
}

#[test]
#[should_panic(expected = "the producer ended early")]
fn a_producer_that_ends_early_panics_instead_of_leaving_garbage() {
    build::<f32, _>(10, |_, len| std::iter::repeat_n(1.0, len - 1));
}

#[test]
fn an_in_place_operand_that_widens_the_output_is_refused_before_the_dtype() {
    // gcd has no float kernel, but PyTorch first finds that `y` broadcasts
    // `x` to a larger shape; an operand that does not broadcast at all is
    // its broadcast error.
    let x = Tensor::from_vec(vec![1.0f32], &[1]);
    let y = Tensor::from_vec(vec![1.0f32; 5], &[5]);
    let wider = binary_(Binary::Gcd, &x, &Arg::Tensor(y));
    assert!(
        matches!(wider, Err(TensorError::InplaceShape { ref output, ref broadcast }) if output == &[1] && broadcast == &[5]),
        "{wider:?}"
    );
    let x = Tensor::from_vec(vec![1.0f32; 3], &[3]);
    let clash = binary_(
        Binary::Gcd,
        &x,
        &Arg::Tensor(Tensor::from_vec(vec![1.0f32; 2], &[2])),
    );
    assert!(
        matches!(clash, Err(TensorError::Broadcast { .. })),
        "{clash:?}"
    );
    assert!(matches!(
        binary_(
            Binary::Gcd,
            &x,
            &Arg::Tensor(Tensor::from_vec(vec![1.0f32], &[1]))
        ),
        Err(TensorError::NotImplementedFor { .. })
    ));
}
