//! Rows of the op table for `torch.nn.functional`: convolution, pooling,
//! normalisation, losses, attention, resampling, and the activations that
//! take `inplace`.

use rustpython_vm::builtins::PyStr;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::Tensor;
use crate::tensor::ops::conv::{self, Padding};
use crate::tensor::ops::elementwise::{self as ew, Unary};
use crate::tensor::ops::nn::{self, Reduction};
use crate::tensor::ops::pool::{self, Window};
use crate::tensor::ops::resample::{self, InterpMode, PadMode, Target};
use crate::tensor::ops::{create, einsum, reduce};

use super::convert::{IntoPy, scalar};
use super::ops::{F, Form, Row, T, TF, out, row, tuple};
use super::signature::{Bound, seq};
use super::tensor::{wrap, write_back};

/// The `__torch_function__` forms of the functions PyTorch writes in Python
/// (`F.relu(x)` reaches an override as `relu(x, inplace=False)`).
pub(super) fn dispatch_form(name: &str) -> Option<&'static Form> {
    const fn form(positional: &'static [&'static str], keywords: &'static [&'static str]) -> Form {
        Form {
            positional,
            keywords,
        }
    }
    const INPLACE: Form = form(&["input"], &["inplace"]);
    const SOFTMAX: Form = form(&["input"], &["dim", "_stacklevel", "dtype"]);
    const MAX_POOL: Form = form(
        &["input", "kernel_size"],
        &[
            "stride",
            "padding",
            "dilation",
            "ceil_mode",
            "return_indices",
        ],
    );
    static ADAPTIVE: Form = form(&["input", "output_size"], &[]);
    static BATCH_NORM: Form = form(
        &["input", "running_mean", "running_var"],
        &["weight", "bias", "training", "momentum", "eps"],
    );
    static CROSS_ENTROPY: Form = form(
        &["input", "target"],
        &[
            "weight",
            "size_average",
            "ignore_index",
            "reduce",
            "reduction",
            "label_smoothing",
        ],
    );
    static DROPOUT: Form = form(&["input"], &["p", "training", "inplace"]);
    static EMBEDDING: Form = form(
        &["input", "weight"],
        &[
            "padding_idx",
            "max_norm",
            "norm_type",
            "scale_grad_by_freq",
            "sparse",
        ],
    );
    static GROUP_NORM: Form = form(&["input", "num_groups"], &["weight", "bias", "eps"]);
    static INTERPOLATE: Form = form(
        &["input"],
        &[
            "size",
            "scale_factor",
            "mode",
            "align_corners",
            "recompute_scale_factor",
            "antialias",
        ],
    );
    static L1: Form = form(
        &["input", "target"],
        &["size_average", "reduce", "reduction"],
    );
    static LAYER_NORM: Form = form(&["input", "normalized_shape"], &["weight", "bias", "eps"]);
    static MSE: Form = form(
        &["input", "target"],
        &["size_average", "reduce", "reduction", "weight"],
    );
    static NLL: Form = form(
        &["input", "target"],
        &[
            "weight",
            "size_average",
            "ignore_index",
            "reduce",
            "reduction",
        ],
    );
    static PAD: Form = form(&["input", "pad"], &["mode", "value"]);
    static FORMS: [(&str, &Form); 19] = [
        ("adaptive_avg_pool2d", &ADAPTIVE),
        ("batch_norm", &BATCH_NORM),
        ("cross_entropy", &CROSS_ENTROPY),
        ("dropout", &DROPOUT),
        ("embedding", &EMBEDDING),
        ("group_norm", &GROUP_NORM),
        ("interpolate", &INTERPOLATE),
        ("l1_loss", &L1),
        ("layer_norm", &LAYER_NORM),
        ("log_softmax", &SOFTMAX),
        ("softmax", &SOFTMAX),
        ("max_pool1d", &MAX_POOL),
        ("max_pool2d", &MAX_POOL),
        ("mish", &INPLACE),
        ("relu", &INPLACE),
        ("silu", &INPLACE),
        ("mse_loss", &MSE),
        ("nll_loss", &NLL),
        ("pad", &PAD),
    ];
    FORMS.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// The result of an activation, written into `input` when `inplace` is set.
fn maybe_inplace(b: &Bound, r: crate::tensor::Result<Tensor>, vm: &VirtualMachine) -> PyResult {
    let r = r.py(vm)?;
    if b.bool("inplace", vm)? {
        return write_back(&b.obj("input").expect("input is required"), r, vm);
    }
    Ok(wrap(r, vm))
}

fn reduction(b: &Bound, vm: &VirtualMachine) -> PyResult<Reduction> {
    // The legacy `size_average`/`reduce` flags override `reduction`, as in PyTorch.
    let legacy = |name: &str| b.obj(name).map(|o| o.try_to_bool(vm)).transpose();
    let (size_average, reduce) = (legacy("size_average")?, legacy("reduce")?);
    if size_average.is_some() || reduce.is_some() {
        return Ok(
            match (size_average.unwrap_or(true), reduce.unwrap_or(true)) {
                (_, false) => Reduction::None,
                (true, true) => Reduction::Mean,
                (false, true) => Reduction::Sum,
            },
        );
    }
    Reduction::parse(&b.str("reduction", vm)?).py(vm)
}

fn padding(b: &Bound, vm: &VirtualMachine) -> PyResult<Padding> {
    match b.obj("padding") {
        Some(o) if o.downcast_ref::<PyStr>().is_some() => {
            Padding::parse(&b.str("padding", vm)?).py(vm)
        }
        _ => Ok(Padding::Explicit(
            b.opt_ints("padding", vm)?.unwrap_or_else(|| vec![0]),
        )),
    }
}

fn conv_row(decl: &'static str, spatial: usize) -> Row {
    row(decl, TF, move |b, vm| {
        let (x, w, bias) = (
            b.tensor("input", vm)?,
            b.tensor("weight", vm)?,
            b.opt_tensor("bias", vm)?,
        );
        let (stride, dilation) = (b.ints("stride", vm)?, b.ints("dilation", vm)?);
        out(
            conv::conv(
                &x,
                &w,
                bias.as_ref(),
                &stride,
                &padding(b, vm)?,
                &dilation,
                b.int("groups", vm)?,
                spatial,
            ),
            vm,
        )
    })
}

fn window<'a>(
    b: &Bound,
    vm: &VirtualMachine,
    store: &'a mut [Vec<i64>; 4],
) -> PyResult<Window<'a>> {
    store[0] = b.ints("kernel_size", vm)?;
    store[1] = b.opt_ints("stride", vm)?.unwrap_or_default();
    store[2] = b.ints("padding", vm)?;
    store[3] = if b.has("dilation") {
        b.ints("dilation", vm)?
    } else {
        vec![1]
    };
    let [k, s, p, d] = store;
    Ok(Window {
        kernel: k,
        stride: s,
        padding: p,
        dilation: d,
        ceil_mode: b.bool("ceil_mode", vm)?,
    })
}

fn max_pool_row(decl: &'static str, spatial: usize) -> Row {
    row(decl, TF, move |b, vm| {
        let mut store = Default::default();
        let w = window(b, vm, &mut store)?;
        let (values, indices) = pool::max_pool(&b.tensor("input", vm)?, &w, spatial).py(vm)?;
        if b.bool("return_indices", vm)? {
            return tuple(vec![values, indices], vm);
        }
        Ok(wrap(values, vm))
    })
}

fn avg_pool_row(decl: &'static str, spatial: usize) -> Row {
    row(decl, TF, move |b, vm| {
        let mut store = Default::default();
        let w = window(b, vm, &mut store)?;
        let divisor = if b.has("divisor_override") {
            b.opt_int("divisor_override", vm)?
        } else {
            None
        };
        out(
            pool::avg_pool(
                &b.tensor("input", vm)?,
                &w,
                spatial,
                b.bool("count_include_pad", vm)?,
                divisor,
            ),
            vm,
        )
    })
}

/// An output size whose items may be `None` (keep the input's size).
fn output_size(b: &Bound, vm: &VirtualMachine) -> PyResult<Vec<Option<i64>>> {
    let o = b
        .obj("output_size")
        .ok_or_else(|| vm.new_type_error(format!("{}(): output_size must not be None", b.op())))?;
    let items = seq(&o).unwrap_or_else(|| vec![o.clone()]);
    items
        .iter()
        .map(|x| match scalar(x, vm) {
            _ if vm.is_none(x) => Ok(None),
            Some(crate::tensor::Scalar::Int(v)) => Ok(Some(v)),
            _ => Err(vm.new_type_error(format!(
                "{}(): argument 'output_size' must be tuple of ints, not {}",
                b.op(),
                x.class().name()
            ))),
        })
        .collect()
}

fn adaptive_row(decl: &'static str, spatial: usize) -> Row {
    row(decl, TF, move |b, vm| {
        out(
            pool::adaptive_avg_pool(&b.tensor("input", vm)?, &output_size(b, vm)?, spatial),
            vm,
        )
    })
}

/// Floats from a number or a sequence of numbers.
fn floats(o: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<Vec<f64>> {
    let items = seq(o).unwrap_or_else(|| vec![o.clone()]);
    items
        .iter()
        .map(|x| {
            scalar(x, vm).map(|s| s.to_f64()).ok_or_else(|| {
                vm.new_type_error(format!("{what} must be a number or a sequence of numbers"))
            })
        })
        .collect()
}

/// The softmax dim PyTorch picks when none is given.
fn softmax_dim(b: &Bound, vm: &VirtualMachine) -> PyResult<i64> {
    if let Some(d) = b.opt_int("dim", vm)? {
        return Ok(d);
    }
    let n = b.tensor("input", vm)?.ndim();
    Ok(if n == 0 || n == 1 || n == 3 { 0 } else { 1 })
}

pub(super) fn rows() -> Vec<Row> {
    vec![
        conv_row(
            "conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, Any padding=0, int[] dilation=1, int groups=1)",
            1,
        ),
        conv_row(
            "conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[] stride=1, Any padding=0, int[] dilation=1, int groups=1)",
            2,
        ),
        max_pool_row(
            "max_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False)",
            1,
        ),
        max_pool_row(
            "max_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, int[] dilation=1, bool ceil_mode=False, bool return_indices=False)",
            2,
        ),
        avg_pool_row(
            "avg_pool1d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True)",
            1,
        ),
        avg_pool_row(
            "avg_pool2d(Tensor input, int[] kernel_size, int[]? stride=None, int[] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None)",
            2,
        ),
        adaptive_row("adaptive_avg_pool1d(Tensor input, Any output_size)", 1),
        adaptive_row("adaptive_avg_pool2d(Tensor input, Any output_size)", 2),
        row(
            "batch_norm(Tensor input, Tensor? running_mean, Tensor? running_var, Tensor? weight=None, Tensor? bias=None, bool training=False, float momentum=0.1, float eps=1e-05)",
            TF,
            |b, vm| {
                let (rm, rv) = (
                    b.opt_tensor("running_mean", vm)?,
                    b.opt_tensor("running_var", vm)?,
                );
                let (w, bias) = (b.opt_tensor("weight", vm)?, b.opt_tensor("bias", vm)?);
                let args = nn::BatchNorm {
                    running_mean: rm.as_ref(),
                    running_var: rv.as_ref(),
                    weight: w.as_ref(),
                    bias: bias.as_ref(),
                    training: b.bool("training", vm)?,
                    momentum: b.opt_float("momentum", vm)?.unwrap_or(0.1),
                    eps: b.float("eps", vm)?,
                };
                out(nn::batch_norm(&b.tensor("input", vm)?, &args), vm)
            },
        ),
        row(
            "layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05)",
            TF,
            |b, vm| {
                let shape: Vec<usize> = b
                    .ints("normalized_shape", vm)?
                    .into_iter()
                    .map(|d| d.max(0) as usize)
                    .collect();
                let (w, bias) = (b.opt_tensor("weight", vm)?, b.opt_tensor("bias", vm)?);
                out(
                    nn::layer_norm(
                        &b.tensor("input", vm)?,
                        &shape,
                        w.as_ref(),
                        bias.as_ref(),
                        b.float("eps", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1e-05)",
            TF,
            |b, vm| {
                let (w, bias) = (b.opt_tensor("weight", vm)?, b.opt_tensor("bias", vm)?);
                out(
                    nn::group_norm(
                        &b.tensor("input", vm)?,
                        b.int("num_groups", vm)?,
                        w.as_ref(),
                        bias.as_ref(),
                        b.float("eps", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "embedding(Tensor input, Tensor weight, int? padding_idx=None, float? max_norm=None, float norm_type=2.0, bool scale_grad_by_freq=False, bool sparse=False)",
            F,
            |b, vm| {
                out(
                    nn::embedding(
                        &b.tensor("input", vm)?,
                        &b.tensor("weight", vm)?,
                        b.opt_int("padding_idx", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "pad(Tensor input, int[] pad, str mode='constant', float? value=None)",
            F,
            |b, vm| {
                let mode = PadMode::parse(&b.str("mode", vm)?).py(vm)?;
                out(
                    resample::pad(
                        &b.tensor("input", vm)?,
                        &b.ints("pad", vm)?,
                        mode,
                        b.opt_float("value", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "interpolate(Tensor input, Any? size=None, Any? scale_factor=None, str mode='nearest', bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False)",
            F,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                let target = match (b.obj("size"), b.obj("scale_factor")) {
                    (Some(_), Some(_)) => {
                        return Err(vm.new_value_error(
                            "only one of size or scale_factor should be defined",
                        ));
                    }
                    (None, None) => {
                        return Err(
                            vm.new_value_error("either size or scale_factor should be defined")
                        );
                    }
                    (Some(_), None) => Target::Size(b.ints("size", vm)?),
                    (None, Some(f)) => Target::Scale(floats(&f, "scale_factor", vm)?),
                };
                let mode = InterpMode::parse(&b.str("mode", vm)?, t.ndim()).py(vm)?;
                let align = b
                    .obj("align_corners")
                    .map(|o| o.try_to_bool(vm))
                    .transpose()?;
                out(
                    resample::interpolate(
                        &t,
                        target,
                        mode,
                        align,
                        b.bool("recompute_scale_factor", vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, *, float? scale=None, bool enable_gqa=False)",
            F,
            |b, vm| {
                let mask = b.opt_tensor("attn_mask", vm)?;
                let args = nn::Attention {
                    mask: mask.as_ref(),
                    dropout_p: b.float("dropout_p", vm)?,
                    is_causal: b.bool("is_causal", vm)?,
                    scale: b.opt_float("scale", vm)?,
                    enable_gqa: b.bool("enable_gqa", vm)?,
                };
                out(
                    nn::scaled_dot_product_attention(
                        &b.tensor("query", vm)?,
                        &b.tensor("key", vm)?,
                        &b.tensor("value", vm)?,
                        &args,
                    ),
                    vm,
                )
            },
        ),
        row(
            "cross_entropy(Tensor input, Tensor target, Tensor? weight=None, Any? size_average=None, int ignore_index=-100, Any? reduce=None, str reduction='mean', float label_smoothing=0.0)",
            F,
            |b, vm| {
                let w = b.opt_tensor("weight", vm)?;
                let args = nn::CrossEntropy {
                    weight: w.as_ref(),
                    ignore_index: b.int("ignore_index", vm)?,
                    reduction: reduction(b, vm)?,
                    label_smoothing: b.float("label_smoothing", vm)?,
                };
                out(
                    nn::cross_entropy(&b.tensor("input", vm)?, &b.tensor("target", vm)?, &args),
                    vm,
                )
            },
        ),
        row(
            "nll_loss(Tensor input, Tensor target, Tensor? weight=None, Any? size_average=None, int ignore_index=-100, Any? reduce=None, str reduction='mean')",
            F,
            |b, vm| {
                let w = b.opt_tensor("weight", vm)?;
                out(
                    nn::nll_loss(
                        &b.tensor("input", vm)?,
                        &b.tensor("target", vm)?,
                        w.as_ref(),
                        b.int("ignore_index", vm)?,
                        reduction(b, vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "mse_loss(Tensor input, Tensor target, Any? size_average=None, Any? reduce=None, str reduction='mean')",
            F,
            |b, vm| {
                out(
                    nn::mse_loss(
                        &b.tensor("input", vm)?,
                        &b.tensor("target", vm)?,
                        reduction(b, vm)?,
                    ),
                    vm,
                )
            },
        ),
        row(
            "l1_loss(Tensor input, Tensor target, Any? size_average=None, Any? reduce=None, str reduction='mean')",
            F,
            |b, vm| {
                out(
                    nn::l1_loss(
                        &b.tensor("input", vm)?,
                        &b.tensor("target", vm)?,
                        reduction(b, vm)?,
                    ),
                    vm,
                )
            },
        ),
        row("einsum(str equation, Tensor[] *operands)", T, |b, vm| {
            out(
                einsum::einsum(&b.str("equation", vm)?, &b.tensors("operands", vm)?),
                vm,
            )
        }),
        // Activations: `F.x(input, inplace=False)`; `torch.x` and `Tensor.x` come from the elementwise table.
        row("relu(Tensor input, bool inplace=False)", F, |b, vm| {
            maybe_inplace(b, ew::unary(Unary::Relu, &b.tensor("input", vm)?), vm)
        }),
        row("silu(Tensor input, bool inplace=False)", F, |b, vm| {
            maybe_inplace(b, ew::unary(Unary::Silu, &b.tensor("input", vm)?), vm)
        }),
        row("mish(Tensor input, bool inplace=False)", F, |b, vm| {
            maybe_inplace(b, ew::unary(Unary::Mish, &b.tensor("input", vm)?), vm)
        }),
        row(
            "softplus(Tensor input, Scalar beta=1, Scalar threshold=20)",
            F,
            |b, vm| {
                let (beta, threshold) = (b.float("beta", vm)?, b.float("threshold", vm)?);
                let t = b.tensor("input", vm)?;
                // x when beta·x > threshold, else log1p(exp(beta·x)) / beta.
                let y = ew::map::<f64, f64>(&t.to_dtype(crate::tensor::DType::F64), move |x| {
                    if x * beta > threshold {
                        x
                    } else {
                        (x * beta).exp().ln_1p() / beta
                    }
                });
                Ok(wrap(y.to_dtype(t.dtype()), vm))
            },
        ),
        row(
            "gelu(Tensor input, *, str approximate='none')",
            TF,
            |b, vm| {
                let op = match b.str("approximate", vm)?.as_str() {
                    "none" => Unary::Gelu,
                    "tanh" => Unary::GeluTanh,
                    other => {
                        return Err(vm.new_runtime_error(format!(
                            "approximate argument must be either none or tanh., got {other}"
                        )));
                    }
                };
                out(ew::unary(op, &b.tensor("input", vm)?), vm)
            },
        ),
        row(
            "softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)",
            F,
            |b, vm| {
                out(
                    reduce::softmax(
                        &b.tensor("input", vm)?,
                        softmax_dim(b, vm)?,
                        b.dtype("dtype", vm)?,
                        reduce::SoftmaxKind::Softmax,
                    ),
                    vm,
                )
            },
        ),
        row(
            "log_softmax(Tensor input, int? dim=None, int _stacklevel=3, ScalarType? dtype=None)",
            F,
            |b, vm| {
                out(
                    reduce::softmax(
                        &b.tensor("input", vm)?,
                        softmax_dim(b, vm)?,
                        b.dtype("dtype", vm)?,
                        reduce::SoftmaxKind::LogSoftmax,
                    ),
                    vm,
                )
            },
        ),
        row(
            "dropout(Tensor input, float p=0.5, bool training=True, bool inplace=False)",
            TF,
            |b, vm| {
                let t = b.tensor("input", vm)?;
                let p = b.float("p", vm)?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(vm.new_value_error(format!(
                        "dropout probability has to be between 0 and 1, but got {p}"
                    )));
                }
                if !b.bool("training", vm)? {
                    return Ok(b.obj("input").expect("input is required"));
                }
                maybe_inplace(b, create::dropout(&t, p), vm)
            },
        ),
    ]
}
