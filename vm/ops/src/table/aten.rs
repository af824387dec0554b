//! `torch.*` functions whose ATen signature differs from the
//! `torch.nn.functional` function of the same name: `torch.batch_norm` takes
//! the weight before the running statistics and a `cudnn_enabled` flag,
//! `torch.dropout` a required `train`, `torch.embedding` the weight first.
//! Each is its own public function, so its own row; the kernels are shared.

use fxvm_tensor::ops::create::DropoutKind;
use fxvm_tensor::ops::nn;
use fxvm_tensor::{Result, Tensor};

use super::nn::{FEATURE, PLAIN, dropout, layer_norm, norm_args};
use crate::meta;
use crate::op::{Op, Place, op};
use crate::value::Value;

/// The arguments of `torch.batch_norm` and `torch.instance_norm`, in
/// ATen's order: input, weight, bias, running mean and variance, whether
/// to use the input's statistics, momentum, eps, cudnn_enabled.
type AtenNorm = (
    Tensor,
    Option<Tensor>,
    Option<Tensor>,
    Option<Tensor>,
    Option<Tensor>,
    bool,
    f64,
    f64,
    bool,
);

/// Where [`AtenNorm`] keeps each argument a derivative reads.
const ATEN_NORM_ARGS: crate::derivatives::norm::BatchNormArgs =
    crate::derivatives::norm::BatchNormArgs {
        running_mean: 3,
        running_var: 4,
        weight: 1,
        bias: 2,
        training: 5,
        eps: 7,
    };

/// `torch.dropout(input, p, train)` and its kin: ATen's three required
/// arguments, never in place.
fn dropout_row(decl: &'static str, kind: DropoutKind) -> Op {
    op(
        decl,
        &[Place::Torch],
        move |(x, p, train): (Tensor, f64, bool)| {
            // The ATen op's own check is a RuntimeError (the functional's,
            // in Python, a ValueError).
            fxvm_tensor::ops::create::check_dropout_probability(p)
                .map_err(|e| fxvm_tensor::TensorError::runtime("dropout", e.to_string()))?;
            dropout(&x, p, train, false, kind, None)
        },
    )
    .grad(crate::derivatives::nn::dropout(kind.alpha))
}

pub(crate) fn rows() -> Vec<Op> {
    vec![
        op(
            "batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
            &[Place::Torch],
            |(x, w, b, rm, rv, training, momentum, eps, _): AtenNorm| -> Result<Tensor> {
                nn::batch_norm(&x, &norm_args([&rm, &rv, &w, &b], training, momentum, eps))
            },
        ).grad(crate::derivatives::norm::batch_norm(ATEN_NORM_ARGS))
        .meta(meta::same),
        op(
            "instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor",
            &[Place::Torch],
            |(x, w, b, rm, rv, use_input_stats, momentum, eps, _): AtenNorm| -> Result<Tensor> {
                nn::instance_norm(&x, &norm_args([&rm, &rv, &w, &b], use_input_stats, momentum, eps))
            },
        ).grad(crate::derivatives::norm::instance_norm(ATEN_NORM_ARGS))
        .meta(meta::same),
        op(
            "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
            &[Place::Torch],
            |(x, shape, w, b, eps, _): (Tensor, Vec<i64>, Option<Tensor>, Option<Tensor>, f64, bool)| {
                layer_norm(&x, shape, w, b, eps)
            },
        ).grad(crate::derivatives::norm::layer_norm())
        .meta(meta::same),
        // A convolution's weight gradient in one kernel (per image: im2col
        // and a product summed), which its derivative calls when no graph
        // of the backward is recorded.
        op(
            "convolution_backward_weight(Tensor grad_out, Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, int groups)",
            &[],
            |(g, x, kernel, stride, pad, dilation, groups): (Tensor, Tensor, Vec<i64>, Vec<i64>, Vec<i64>, Vec<i64>, i64)| {
                let kernel: Vec<usize> = kernel.iter().map(|&k| k.max(0) as usize).collect();
                fxvm_tensor::ops::conv::conv_weight_grad(&g, &x, &kernel, &stride, &pad, &dilation, groups)
            },
        )
        .nondiff(),
        // Max pooling's backward from its indices, which its derivative
        // calls when no graph of the backward is recorded.
        op(
            "max_pool_backward(Tensor grad_out, Tensor input, Tensor indices, int spatial)",
            &[],
            |(g, x, indices, spatial): (Tensor, Tensor, Tensor, i64)| {
                fxvm_tensor::ops::pool_backward::max_pool_backward(&g, &x, &indices, spatial.max(0) as usize)
            },
        )
        .nondiff(),
        // A layer norm's gradients in one pass (not bound in Python): what
        // its derivative calls when no graph of the backward is recorded;
        // recording one, the derivative is written in rows instead.
        op(
            "native_layer_norm_backward(Tensor grad_out, Tensor input, int[] normalized_shape, Tensor? weight, float eps)",
            &[],
            |(g, x, shape, w, eps): (Tensor, Tensor, Vec<i64>, Option<Tensor>, f64)| -> Result<Value> {
                let grads = fxvm_tensor::ops::norm::layer_norm_backward(&g, &x, &super::nn::normalized_shape(shape), w.as_ref(), eps)?;
                Ok(Value::Tuple(vec![
                    Value::Tensor(grads.input),
                    Value::Tensor(grads.weight),
                    Value::Tensor(grads.bias),
                ]))
            },
        )
        .nondiff(),
        op(
            "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enabled=True) -> Tensor",
            &[Place::Torch],
            |(x, groups, w, b, eps, _): (Tensor, i64, Option<Tensor>, Option<Tensor>, f64, bool)| {
                nn::group_norm(&x, groups, w.as_ref(), b.as_ref(), eps)
            },
        )
        .grad(crate::derivatives::norm::group_norm())
        .meta(meta::same),
        dropout_row("dropout(Tensor input, float p, bool train) -> Tensor", PLAIN).meta(meta::same),
        dropout_row("feature_dropout(Tensor input, float p, bool train) -> Tensor", FEATURE).meta(meta::same),
        dropout_row(
            "alpha_dropout(Tensor input, float p, bool train) -> Tensor",
            DropoutKind {
                feature: false,
                alpha: true,
            },
        )
        .meta(meta::same),
        dropout_row(
            "feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor",
            DropoutKind {
                feature: true,
                alpha: true,
            },
        )
        .meta(meta::same),
        op(
            "embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor",
            &[Place::Torch],
            |(w, indices, padding_idx, _, _): (Tensor, Tensor, i64, bool, bool)| -> Result<Value> {
                // ATen's -1 is "no padding index"; it only affects gradients.
                let padding = (padding_idx >= 0).then_some(padding_idx);
                nn::embedding(&indices, &w, padding).map(Value::Tensor)
            },
        ).grad(crate::derivatives::norm::embedding(0, 1, 2)),
    ]
}
