use super::*;
use crate::dtype::Scalar;

#[test]
fn embedding_reads_the_rows_a_view_of_indices_names() {
    let w = Tensor::from_vec((0..8).map(|v| v as f32).collect(), &[4, 2]);
    let t = Tensor::from_vec(vec![0i64, 1, 2, 3], &[2, 2]);
    let row = crate::ops::shape::select(&t, 0, 1).unwrap();
    let picked = embedding(&row, &w, None).unwrap();
    assert_eq!(picked.to_vec::<f32>(), vec![4., 5., 6., 7.]);
    let picked = crate::ops::index::index_select(&w, 0, &row).unwrap();
    assert_eq!(picked.to_vec::<f32>(), vec![4., 5., 6., 7.]);
}

#[test]
fn eval_batch_norm_in_f32_matches_the_f64_path() {
    let x64 = Tensor::from_vec(
        (0..2 * 3 * 40)
            .map(|i| ((i * 37) % 101) as f64 / 10.0 - 5.0)
            .collect::<Vec<f64>>(),
        &[2, 3, 5, 8],
    );
    let stats = |v: [f64; 3]| Tensor::from_vec(v.to_vec(), &[3]);
    let (rm, rv, w, b) = (
        stats([0.5, -1.0, 2.0]),
        stats([1.0, 0.25, 4.0]),
        stats([1.5, -2.0, 0.5]),
        stats([0.1, 0.2, -0.3]),
    );
    let args64 = BatchNorm {
        running_mean: Some(&rm),
        running_var: Some(&rv),
        weight: Some(&w),
        bias: Some(&b),
        training: false,
        momentum: 0.1,
        eps: 1e-5,
    };
    let args = BatchNorm { ..args64 };
    let want = batch_norm(&x64, &args).unwrap().to_vec::<f64>();
    let x32 = x64.to_dtype(DType::F32);
    // Parameters of the input's dtype, as PyTorch's CPU kernels require.
    let [rm, rv, w, b] = [&rm, &rv, &w, &b].map(|t| t.to_dtype(DType::F32));
    let args = BatchNorm {
        running_mean: Some(&rm),
        running_var: Some(&rv),
        weight: Some(&w),
        bias: Some(&b),
        ..args
    };
    let got = batch_norm(&x32, &args).unwrap();
    assert_eq!(got.dtype(), DType::F32);
    for (g, w) in got.to_vec::<f64>().iter().zip(&want) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
    }
    // A transposed (non-contiguous) view.
    let t = x32.with_layout(x32.layout().transpose(2, 3));
    let t64 = x64.with_layout(x64.layout().transpose(2, 3));
    let (got, want) = (
        batch_norm(&t, &args).unwrap(),
        batch_norm(&t64, &args64).unwrap(),
    );
    assert_eq!(got.shape(), want.shape());
    for (g, w) in got.to_vec::<f64>().iter().zip(&want.to_vec::<f64>()) {
        assert!((g - w).abs() <= 1e-5 * w.abs().max(1.0), "{g} vs {w}");
    }
}

fn training<'a>(
    running_mean: Option<&'a Tensor>,
    running_var: Option<&'a Tensor>,
) -> BatchNorm<'a> {
    BatchNorm {
        running_mean,
        running_var,
        weight: None,
        bias: None,
        training: true,
        momentum: 0.5,
        eps: 0.0,
    }
}

#[test]
fn instance_norm_normalises_each_sample_channel_alone() {
    // Two samples, one channel: [1, 2, 3] and [10, 20, 30].
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 10.0, 20.0, 30.0], &[2, 1, 3]);
    let (rm, rv) = (
        Tensor::zeros(&[1], DType::F64),
        Tensor::full(&[1], Scalar::Float(1.0), DType::F64),
    );
    let y = instance_norm(&x, &training(Some(&rm), Some(&rv)))
        .unwrap()
        .to_vec::<f64>();
    let s = (1.5f64).sqrt();
    for (got, want) in y.iter().zip([-s, 0.0, s, -s, 0.0, s]) {
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }
    // Running mean: half of the average of the two sample means (2, 20).
    assert!((rm.to_vec::<f64>()[0] - 5.5).abs() < 1e-12);
}

#[test]
fn instance_norm_needs_a_channel_dim() {
    let x = Tensor::zeros(&[3], DType::F32);
    assert!(instance_norm(&x, &training(None, None)).is_err());
}

/// PyTorch's CPU norms take parameters of one dtype: the input's, or
/// float32 for a half-precision input.
#[test]
fn norm_parameters_share_the_inputs_dtype_or_float32_for_half_inputs() {
    let ones = |d: DType| Tensor::from_vec(vec![1.0f32; 3], &[3]).to_dtype(d);
    let check = |x: DType, p: DType| check_norm_params(&ones(x), &[Some(&ones(p)), None]);
    assert!(check(DType::F32, DType::F32).is_ok());
    assert!(check(DType::BF16, DType::F32).is_ok());
    assert!(check(DType::F16, DType::F16).is_ok());
    assert_eq!(
        check(DType::F64, DType::F32).unwrap_err().to_string(),
        "mixed dtype (CPU): all inputs must share same datatype."
    );
    assert_eq!(
        check(DType::F32, DType::F64).unwrap_err().to_string(),
        "mixed dtype (CPU): expect parameter to have scalar type of Float"
    );
    let (w, b) = (ones(DType::F32), ones(DType::F64));
    assert!(check_norm_params(&ones(DType::F64), &[Some(&w), Some(&b)]).is_err());
}
