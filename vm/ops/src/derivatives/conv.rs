//! Convolutions and pooling: gradients as other convolutions (the
//! transposed convolution for the input, a convolution of input and
//! gradient for the weight), pooled positions scattered back.

use fxvm_tensor::{Result, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Name, Save, derivative};
use crate::value::Value;

/// A per-dim argument (`stride=2` is `[2, 2]` in 2-d).
fn per_dim(v: Vec<i64>, n: usize) -> Vec<i64> {
    if v.len() == 1 { vec![v[0]; n] } else { v }
}

/// The explicit padding of `padding` (a list, `'valid'` or symmetric `'same'`).
fn padding(c: &Back<'_>, kernel: &[usize], dilation: &[i64]) -> Result<Vec<i64>> {
    match c.value(4) {
        Value::Str(s) if s == "valid" => Ok(vec![0; kernel.len()]),
        Value::Str(_) => kernel
            .iter()
            .zip(dilation)
            .map(|(&k, &d)| {
                let total = d * (k as i64 - 1);
                if total % 2 != 0 {
                    return Err(TensorError::not_implemented(
                        "the derivative of a 'same'-padded convolution with asymmetric padding is not implemented.",
                    ));
                }
                Ok(total / 2)
            })
            .collect(),
        _ => Ok(per_dim(c.ints(4), kernel.len())),
    }
}

fn ints(v: &[i64]) -> Value {
    Value::Ints(v.to_vec())
}

/// `conv{1,2,3}d(input, weight, bias, stride, padding, dilation, groups)`.
pub(crate) fn conv(spatial: usize) -> Derivative {
    derivative(
        "ConvolutionBackward0",
        &[Save::In(0), Save::In(1)],
        move |c| {
            let (x, w, g) = (c.input(0)?, c.input(1)?, c.grad()?);
            let kernel = &w.shape()[2..];
            let stride = per_dim(c.ints(3), spatial);
            let dilation = per_dim(c.ints(5), spatial);
            let pad = padding(c, kernel, &dilation)?;
            let groups = c.int(6).max(1) as usize;
            if c.needs(2) {
                c.set(2, bias_grad(&g)?);
            }
            if c.needs(0) {
                // The transposed convolution, with the output padding that
                // gives back the input's size.
                let out_pad: Vec<i64> = (0..spatial)
                    .map(|i| {
                        let made = (g.shape()[2 + i] as i64 - 1) * stride[i] - 2 * pad[i]
                            + dilation[i] * (kernel[i] as i64 - 1)
                            + 1;
                        x.shape()[2 + i] as i64 - made
                    })
                    .collect();
                let d = o::call(
                    &format!("conv_transpose{spatial}d"),
                    vec![
                        Value::Tensor(g.clone()),
                        Value::Tensor(w.clone()),
                        Value::None,
                        ints(&stride),
                        ints(&pad),
                        ints(&out_pad),
                        Value::Int(groups as i64),
                        ints(&dilation),
                    ],
                    vec![],
                )?;
                c.set(0, d);
            }
            if c.needs(1) {
                let window = Window {
                    kernel,
                    stride: &stride,
                    pad: &pad,
                    dilation: &dilation,
                    groups,
                };
                c.set(1, any_weight_grad(&x, &g, &window)?);
            }
            Ok(())
        },
    )
}

/// A convolution's bias gradient: the gradient summed over all but channels.
fn bias_grad(g: &Tensor) -> Result<Tensor> {
    let dims: Vec<i64> = (0..g.ndim() as i64).filter(|&d| d != 1).collect();
    o::sum(g, &dims, false)
}

/// A convolution's window: what its weight gradient depends on.
struct Window<'a> {
    kernel: &'a [usize],
    stride: &'a [i64],
    pad: &'a [i64],
    dilation: &'a [i64],
    groups: usize,
}

/// A convolution's weight gradient from its input `x` and output gradient
/// `g`: as products for 2-d, as a convolution otherwise.
fn any_weight_grad(x: &Tensor, g: &Tensor, w: &Window<'_>) -> Result<Tensor> {
    let spatial = w.kernel.len();
    // Recording no graph of the backward: the one-kernel row.
    if !fxvm_tensor::autograd::is_grad_enabled() {
        return o::call(
            "convolution_backward_weight",
            vec![
                o::value(g),
                o::value(x),
                Value::Ints(w.kernel.iter().map(|&k| k as i64).collect()),
                ints(w.stride),
                ints(w.pad),
                ints(w.dilation),
                Value::Int(w.groups as i64),
            ],
            vec![],
        );
    }
    if spatial == 2 {
        weight_grad_2d(x, g, w.kernel, w.stride, w.pad, w.dilation, w.groups)
    } else {
        weight_grad(
            x, g, w.kernel, w.stride, w.pad, w.dilation, w.groups, spatial,
        )
    }
}

/// A convolution's weight gradient, per group: the input's channels as a
/// batch convolved with the gradient's channels as filters (stride and
/// dilation swap), cut to the kernel.
#[allow(clippy::too_many_arguments)]
fn weight_grad(
    x: &Tensor,
    g: &Tensor,
    kernel: &[usize],
    stride: &[i64],
    pad: &[i64],
    dilation: &[i64],
    groups: usize,
    spatial: usize,
) -> Result<Tensor> {
    let cin = x.shape()[1] / groups;
    let cout = g.shape()[1] / groups;
    let mut parts = Vec::with_capacity(groups);
    for k in 0..groups {
        let xg = o::transpose(&o::narrow(x, 1, k * cin, cin)?, 0, 1)?;
        let gg = o::transpose(&o::narrow(g, 1, k * cout, cout)?, 0, 1)?;
        let full = o::call(
            &format!("conv{spatial}d"),
            vec![
                Value::Tensor(xg),
                Value::Tensor(gg),
                Value::None,
                ints(dilation),
                ints(pad),
                ints(stride),
                Value::Int(1),
            ],
            vec![],
        )?;
        let mut part = o::transpose(&full, 0, 1)?;
        for (i, &k) in kernel.iter().enumerate() {
            if part.shape()[2 + i] != k {
                part = o::narrow(&part, 2 + i as i64, 0, k)?;
            }
        }
        parts.push(part);
    }
    if groups == 1 {
        Ok(parts.remove(0))
    } else {
        o::cat(&parts, 0)
    }
}

/// A 2-d convolution's weight gradient as one product: the gradient's
/// channels times the input's patches, over every sample and position at
/// once (the convolution form above slides a gradient-sized filter, far
/// slower; a product per sample summed after is ~2× slower than one long
/// product).
fn weight_grad_2d(
    x: &Tensor,
    g: &Tensor,
    kernel: &[usize],
    stride: &[i64],
    pad: &[i64],
    dilation: &[i64],
    groups: usize,
) -> Result<Tensor> {
    let cols = o::call_functional(
        "unfold",
        vec![
            Value::Tensor(x.clone()),
            Value::Ints(kernel.iter().map(|&k| k as i64).collect()),
            ints(dilation),
            ints(pad),
            ints(stride),
        ],
    )?;
    let (n, patches) = (x.shape()[0], kernel[0] * kernel[1]);
    let cin = x.shape()[1] / groups;
    let cout = g.shape()[1] / groups;
    let positions = cols.shape()[2];
    let mut parts = Vec::with_capacity(groups);
    for k in 0..groups {
        let cg = o::narrow(&cols, 1, k * cin * patches, cin * patches)?;
        let gg = o::reshape(&o::narrow(g, 1, k * cout, cout)?, &[n, cout, positions])?;
        // The gradient as [channels, samples × positions], the patches as
        // [samples × positions, patch values]: both row-major, the layout
        // the gemm multiplies fastest.
        let a = o::reshape(&o::transpose(&gg, 0, 1)?, &[cout, n * positions])?;
        let b = o::reshape(&o::transpose(&cg, 1, 2)?, &[n * positions, cin * patches])?;
        let product = o::mm(&a, &b)?;
        parts.push(o::reshape(&product, &[cout, cin, kernel[0], kernel[1]])?);
    }
    if groups == 1 {
        Ok(parts.remove(0))
    } else {
        o::cat(&parts, 0)
    }
}

/// `max_pool{1,2,3}d(input, kernel_size, stride, padding, dilation,
/// ceil_mode, return_indices)`: the gradient scattered to the positions
/// that won (found again by the pooling with indices).
pub(crate) fn max_pool(spatial: usize) -> Derivative {
    let name = match spatial {
        1 => "MaxPool1DWithIndicesBackward0",
        2 => "MaxPool2DWithIndicesBackward0",
        _ => "MaxPool3DWithIndicesBackward0",
    };
    derivative(name, &[Save::In(0)], move |c| {
        let x = c.input(0)?;
        let g = c.grad()?;
        let mut args = vec![Value::Tensor(x.clone())];
        args.extend((1..=5).map(|i| c.value(i).clone()));
        args.push(Value::Bool(true));
        let pooled = crate::autograd::ops::call_value(
            &format!("max_pool{spatial}d_with_indices"),
            args,
            vec![],
        )?;
        let indices = indices_of(pooled)?;
        let d = scatter_back(&x, &g, &indices, spatial)?;
        c.set(0, d);
        Ok(())
    })
}

/// The indices of a pooling's `(values, indices)`.
fn indices_of(pooled: Value) -> Result<Tensor> {
    match pooled {
        Value::Tuple(items) | Value::ReturnType(_, items) => match items.into_iter().nth(1) {
            Some(Value::Tensor(i)) => Ok(i),
            _ => Err(TensorError::runtime(
                "backward",
                "max pooling gave no indices",
            )),
        },
        _ => Err(TensorError::runtime(
            "backward",
            "max pooling gave no indices",
        )),
    }
}

/// `g` added into zeros shaped like `x` at `indices` (flat positions per
/// plane, as max pooling returns them).
fn scatter_back(x: &Tensor, g: &Tensor, indices: &Tensor, spatial: usize) -> Result<Tensor> {
    // Recording no graph of the backward: the one-pass row.
    if !fxvm_tensor::autograd::is_grad_enabled() {
        return o::call(
            "max_pool_backward",
            vec![
                o::value(g),
                o::value(x),
                o::value(indices),
                Value::Int(spatial as i64),
            ],
            vec![],
        );
    }
    let lead = x.ndim() - spatial;
    let plane: usize = x.shape()[lead..].iter().product();
    let mut flat = x.shape()[..lead].to_vec();
    flat.push(plane);
    let mut gflat = g.shape()[..lead].to_vec();
    gflat.push(g.shape()[lead..].iter().product());
    let zeros = o::zeros(&flat, g.dtype())?;
    let d = o::call(
        "scatter_add",
        vec![
            Value::Tensor(zeros),
            Value::Int(lead as i64),
            Value::Tensor(o::reshape(indices, &gflat)?),
            Value::Tensor(o::reshape(g, &gflat)?),
        ],
        vec![],
    )?;
    o::reshape(&d, x.shape())
}

/// `adaptive_avg_pool{n}d(input, output_size)` where each output size
/// divides the input's (global pooling among them): each input takes its
/// window's gradient over the window's size.
pub(crate) fn adaptive_avg_pool(spatial: usize) -> Derivative {
    // PyTorch pools to all-ones sizes as a mean.
    fn global(values: &[Value]) -> bool {
        matches!(&values[1], Value::OptInts(s) if s.iter().all(|&n| n == Some(1)))
    }
    let name: fn(&[Value]) -> &'static str = match spatial {
        1 => |v| {
            if global(v) {
                "MeanBackward1"
            } else {
                "AdaptiveAvgPool1DBackward0"
            }
        },
        2 => |v| {
            if global(v) {
                "MeanBackward1"
            } else {
                "AdaptiveAvgPool2DBackward0"
            }
        },
        _ => |v| {
            if global(v) {
                "MeanBackward1"
            } else {
                "AdaptiveAvgPool3DBackward0"
            }
        },
    };
    derivative(Name::Pick(name), &[], move |c| {
        let shape = c.shape(0).to_vec();
        let g = c.grad()?;
        let lead = shape.len() - spatial;
        let mut d = g.clone();
        let mut window = 1usize;
        for i in 0..spatial {
            let (n, m) = (shape[lead + i], g.shape()[lead + i]);
            if m == 0 || n % m != 0 {
                return Err(TensorError::not_implemented(
                    "the derivative of adaptive average pooling to sizes that do not divide the input's is not implemented.",
                ));
            }
            let k = n / m;
            window *= k;
            // Repeat each output position k times along this dim.
            let dim = (lead + i) as i64;
            d = o::call(
                "repeat_interleave",
                vec![Value::Tensor(d), Value::Int(k as i64), Value::Int(dim)],
                vec![],
            )?;
        }
        let d = o::mul_s(&d, 1.0 / window as f64)?;
        c.set(0, d);
        Ok(())
    })
}

/// `conv_transpose{n}d(input, weight, bias, stride, padding,
/// output_padding, groups, dilation)`: the input's gradient is the
/// convolution of the output's gradient with the same weight; the
/// weight's is a convolution's weight gradient with input and gradient
/// in swapped roles.
pub(crate) fn conv_transpose(spatial: usize) -> Derivative {
    derivative(
        "ConvolutionBackward0",
        &[Save::In(0), Save::In(1)],
        move |c| {
            let (x, w, g) = (c.input(0)?, c.input(1)?, c.grad()?);
            let kernel = w.shape()[2..].to_vec();
            let stride = per_dim(c.ints(3), spatial);
            let pad = per_dim(c.ints(4), spatial);
            let groups = c.int(6).max(1) as usize;
            let dilation = per_dim(c.ints(7), spatial);
            if c.needs(2) {
                c.set(2, bias_grad(&g)?);
            }
            if c.needs(0) {
                let d = o::call(
                    &format!("conv{spatial}d"),
                    vec![
                        Value::Tensor(g.clone()),
                        Value::Tensor(w.clone()),
                        Value::None,
                        ints(&stride),
                        ints(&pad),
                        ints(&dilation),
                        Value::Int(groups as i64),
                    ],
                    vec![],
                )?;
                c.set(0, d);
            }
            if c.needs(1) {
                // The transposed convolution is the convolution's input
                // gradient: its weight gradient has input and gradient swapped.
                let window = Window {
                    kernel: &kernel,
                    stride: &stride,
                    pad: &pad,
                    dilation: &dilation,
                    groups,
                };
                c.set(1, any_weight_grad(&g, &x, &window)?);
            }
            Ok(())
        },
    )
}

/// `adaptive_max_pool{n}d[_with_indices](input, output_size, …)`: the
/// gradient scattered to the positions that won.
pub(crate) fn adaptive_max_pool(spatial: usize) -> Derivative {
    let name = match spatial {
        1 => "AdaptiveMaxPool2DBackward0",
        2 => "AdaptiveMaxPool2DBackward0",
        _ => "AdaptiveMaxPool3DBackward0",
    };
    derivative(name, &[Save::In(0)], move |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        // `torch.adaptive_max_pool1d` takes plain sizes.
        let size = match c.value(1) {
            Value::Ints(v) => Value::OptInts(v.iter().map(|&n| Some(n)).collect()),
            v => v.clone(),
        };
        let pooled = o::call_value(
            &format!("adaptive_max_pool{spatial}d_with_indices"),
            vec![Value::Tensor(x.clone()), size, Value::Bool(true)],
            vec![],
        )?;
        let indices = indices_of(pooled)?;
        let d = scatter_back(&x, &g, &indices, spatial)?;
        c.set(0, d);
        Ok(())
    })
}

/// `avg_pool{n}d(input, kernel_size, stride, padding, ceil_mode,
/// count_include_pad, divisor_override)`: each output's gradient, over its
/// window's divisor, spread over the window (a transposed convolution
/// with a kernel of ones, one channel at a time); when the divisor varies
/// by window, through the pooling's per-dim matrices.
pub(crate) fn avg_pool(spatial: usize) -> Derivative {
    let name = match spatial {
        1 => "AvgPool2DBackward0",
        2 => "AvgPool2DBackward0",
        _ => "AvgPool3DBackward0",
    };
    derivative(name, &[], move |c| {
        let g = c.grad()?;
        let shape = c.shape(0).to_vec();
        let lead = shape.len() - spatial;
        let kernel = per_dim(c.ints(1), spatial);
        let stride = match c.value(2) {
            Value::Ints(s) if !s.is_empty() => per_dim(s.clone(), spatial),
            _ => kernel.clone(),
        };
        let pad = per_dim(c.ints(3), spatial);
        let (ceil_mode, include_pad) = (c.bool(4), c.bool(5));
        let divisor_override = if spatial == 1 { None } else { c.opt_int(6) };
        let dtype = g.dtype();
        // Windows of varying size (ceil mode's last, or padding not
        // counted): each dim mapped back through the pooling's own matrix.
        let divisor = match divisor_override {
            Some(d) => d as f64,
            None if include_pad && !ceil_mode => kernel.iter().product::<i64>() as f64,
            None => {
                let mut d = g;
                for k in 0..spatial {
                    let dim = lead + k;
                    let one = |v: i64, rest: i64| -> Value {
                        let mut all = vec![rest; spatial];
                        all[k] = v;
                        Value::Ints(all)
                    };
                    let mut args = vec![
                        Value::Tensor(super::resample::identity(
                            shape[dim],
                            shape.len(),
                            dim,
                            dtype,
                        )?),
                        one(kernel[k], 1),
                        one(stride[k], 1),
                        one(pad[k], 0),
                        Value::Bool(ceil_mode),
                        Value::Bool(include_pad),
                    ];
                    if spatial > 1 {
                        args.push(Value::None);
                    }
                    let probe = {
                        let _off = fxvm_tensor::autograd::GradMode::set(false);
                        o::call(&format!("avg_pool{spatial}d"), args, vec![])?
                    };
                    let probe = super::resample::as_matrix(&probe, shape[dim])?;
                    d = super::resample::map_back(&d, dim as i64, &probe)?;
                }
                c.set(0, d);
                return Ok(());
            }
        };
        let share = o::mul_s(&g, 1.0 / divisor)?;
        // One channel per group: [N, C, …] as C groups of one.
        let channels: usize = shape[..lead].iter().product();
        let mut planes = vec![1, channels];
        planes.extend_from_slice(&g.shape()[lead..]);
        let share = o::reshape(&share, &planes)?;
        let mut wshape = vec![channels, 1];
        wshape.extend(kernel.iter().map(|&k| k as usize));
        let ones = o::add_s(&o::zeros(&wshape, dtype)?, 1.0)?;
        let out_pad: Vec<i64> = (0..spatial)
            .map(|i| {
                let made = (g.shape()[lead + i] as i64 - 1) * stride[i] - 2 * pad[i] + kernel[i];
                // A ceil-mode window past the end is cut off below.
                (shape[lead + i] as i64 - made).max(0)
            })
            .collect();
        let d = o::call(
            &format!("conv_transpose{spatial}d"),
            vec![
                Value::Tensor(share),
                Value::Tensor(ones),
                Value::None,
                ints(&stride),
                ints(&pad),
                ints(&out_pad),
                Value::Int(channels as i64),
            ],
            vec![],
        )?;
        let mut d = o::reshape(&d, &{
            let mut s = shape[..lead].to_vec();
            s.extend_from_slice(&d.shape()[2..]);
            s
        })?;
        for i in 0..spatial {
            if d.shape()[lead + i] > shape[lead + i] {
                d = o::narrow(&d, (lead + i) as i64, 0, shape[lead + i])?;
            }
        }
        c.set(0, d);
        Ok(())
    })
}

/// `F.unfold(input, kernel_size, dilation, padding, stride)` (im2col): the
/// patches' gradients added back where they were taken, by `F.fold`.
pub(crate) fn im2col() -> Derivative {
    derivative("Im2ColBackward0", &[], |c| {
        let shape = c.shape(0).to_vec();
        let size: Vec<i64> = shape[shape.len() - 2..].iter().map(|&s| s as i64).collect();
        let mut args = vec![Value::Tensor(c.grad()?), Value::Ints(size)];
        args.extend((1..=4).map(|i| c.value(i).clone()));
        let d = o::call_functional("fold", args)?;
        c.set(0, d);
        Ok(())
    })
}

/// `F.fold(input, output_size, kernel_size, dilation, padding, stride)`
/// (col2im): each patch's gradient read back by `F.unfold`.
pub(crate) fn col2im() -> Derivative {
    derivative("Col2ImBackward0", &[], |c| {
        let mut args = vec![Value::Tensor(c.grad()?)];
        args.extend((2..=5).map(|i| c.value(i).clone()));
        let d = o::call_functional("unfold", args)?;
        c.set(0, d);
        Ok(())
    })
}

/// `conv_tbc(input [T, B, C], weight [K, C, O], bias, pad)`: the input's
/// gradient is a `conv_tbc` of the output's with the weight flipped in
/// time and its channels swapped (padding `K - 1 - pad`); the weight's a
/// `conv1d` correlating input and output gradient over time, batch as
/// channels; the bias's the output's summed.
pub(crate) fn conv_tbc() -> Derivative {
    derivative("ConvTbcBackward0", &[Save::In(0), Save::In(1)], |c| {
        let (x, w, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let pad = c.int(3);
        let k = w.shape()[0] as i64;
        if c.needs(0) {
            let flipped = o::call("flip", vec![o::value(&w), Value::Ints(vec![0])], vec![])?;
            let w_back = o::transpose(&flipped, 1, 2)?;
            let no_bias = o::zeros(&[x.shape()[2]], x.dtype())?;
            let d = o::call(
                "conv_tbc",
                vec![
                    o::value(&g),
                    o::value(&w_back),
                    o::value(&no_bias),
                    Value::Int(k - 1 - pad),
                ],
                vec![],
            )?;
            c.set(0, d);
        }
        if c.needs(1) {
            let d = o::call(
                "conv1d",
                vec![
                    o::value(&o::permute(&x, &[2, 1, 0])?),
                    o::value(&o::permute(&g, &[2, 1, 0])?),
                    Value::None,
                    Value::Ints(vec![1]),
                    Value::Ints(vec![pad]),
                ],
                vec![],
            )?;
            c.set(1, o::permute(&d, &[2, 0, 1])?);
        }
        if c.needs(2) {
            c.set(2, o::sum(&g, &[0, 1], false)?);
        }
        Ok(())
    })
}

/// `fractional_max_pool{2,3}d`: each output's gradient goes to the input
/// position its index (output 1) names.
pub(crate) fn fractional_max_pool(spatial: usize) -> Derivative {
    let name = match spatial {
        2 => "FractionalMaxPool2DBackward0",
        _ => "FractionalMaxPool3DBackward0",
    };
    derivative(name, &[Save::In(0), Save::Out(1)], move |c| {
        let (x, indices, g) = (c.input(0)?, c.output(1)?, c.grad()?);
        let d = scatter_back(&x, &g, &indices, spatial)?;
        c.set(0, d);
        Ok(())
    })
}

/// `max_unpool{n}d(input, indices, …)`: each input takes the gradient at
/// the output position its index names (PyTorch runs 1-d as 2-d).
pub(crate) fn max_unpool(spatial: usize) -> Derivative {
    let name = match spatial {
        3 => "MaxUnpool3DBackward0",
        _ => "MaxUnpool2DBackward0",
    };
    derivative(name, &[Save::In(1)], move |c| {
        let (indices, g) = (c.input(1)?, c.grad()?);
        let lead = indices.ndim().saturating_sub(spatial);
        let flat = |t: &Tensor| {
            let mut shape = t.shape()[..lead].to_vec();
            shape.push(t.shape()[lead..].iter().product());
            o::reshape(t, &shape)
        };
        let d = o::call(
            "gather",
            vec![
                Value::Tensor(flat(&g)?),
                Value::Int(lead as i64),
                Value::Tensor(flat(&indices)?),
            ],
            vec![],
        )?;
        c.set(0, o::reshape(&d, indices.shape())?);
        Ok(())
    })
}
