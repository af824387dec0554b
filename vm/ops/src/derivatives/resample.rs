//! Padding and interpolation: linear in the input and separable per dim,
//! so each dim's map is found by running the op itself on an identity
//! (one body for forward and backward), and the gradient is the
//! transposed maps applied to the output's gradient.

use fxvm_tensor::{DType, Result, Tensor};

use crate::autograd::ops::{self as o, shape};
use crate::autograd::{Back, Derivative, Name, Save, derivative};
use crate::value::Value;

/// `g` with dim `dim` mapped back through `probe`, the op's matrix for
/// that dim transposed (`[input size, output size]`).
pub(crate) fn map_back(g: &Tensor, dim: i64, probe: &Tensor) -> Result<Tensor> {
    let moved = o::call(
        "movedim",
        vec![Value::Tensor(g.clone()), Value::Int(dim), Value::Int(-1)],
        vec![],
    )?;
    let back = o::matmul(&moved, &o::transpose(probe, 0, 1)?)?;
    o::call(
        "movedim",
        vec![Value::Tensor(back), Value::Int(-1), Value::Int(dim)],
        vec![],
    )
}

/// An identity of size `n` laid out for a probe of rank `rank`: the
/// identity's rows along dim 0, its columns along `dim`, 1 elsewhere.
pub(crate) fn identity(n: usize, rank: usize, dim: usize, dtype: DType) -> Result<Tensor> {
    let eye = fxvm_tensor::ops::create::eye(n, n, dtype);
    let mut shape = vec![1i64; rank];
    shape[0] = n as i64;
    shape[dim] = n as i64;
    shape::reshape(&eye, &shape)
}

/// The probe's result `[n, …, m at dim, …]` as the `[n, m]` matrix.
pub(crate) fn as_matrix(probe: &Tensor, n: usize) -> Result<Tensor> {
    let m = probe.numel() / n.max(1);
    o::reshape(probe, &[n, m])
}

/// `pad(input, pad, mode, value)`: constant padding's gradient is the
/// gradient cut back (padding by the negated widths); the other modes
/// map each padded dim back through its probe.
pub(crate) fn pad() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        let dims = match &values[1] {
            Value::Ints(p) => p.len() / 2,
            _ => 0,
        };
        match (&values[2], dims) {
            (Value::Str(m), 1) if m == "reflect" => "ReflectionPad1DBackward0",
            (Value::Str(m), 2) if m == "reflect" => "ReflectionPad2DBackward0",
            (Value::Str(m), _) if m == "reflect" => "ReflectionPad3DBackward0",
            (Value::Str(m), 1) if m == "replicate" => "ReplicationPad1DBackward0",
            (Value::Str(m), 2) if m == "replicate" => "ReplicationPad2DBackward0",
            (Value::Str(m), _) if m == "replicate" => "ReplicationPad3DBackward0",
            (Value::Str(m), _) if m == "circular" => "CircularPadBackward0",
            _ => "ConstantPadNdBackward0",
        }
    }
    derivative(Name::Pick(name), &[], |c| {
        let g = c.grad()?;
        let widths = c.ints(1);
        let mode = match c.value(2) {
            Value::Str(m) => m.clone(),
            _ => "constant".into(),
        };
        let shape = c.shape(0).to_vec();
        let d = if mode == "constant" {
            let back: Vec<i64> = widths.iter().map(|w| -w).collect();
            o::call_functional("pad", vec![Value::Tensor(g), Value::Ints(back)])?
        } else {
            let rank = shape.len();
            let mut d = g;
            for (k, pair) in widths.chunks(2).enumerate() {
                let dim = rank - 1 - k;
                let mut one = vec![0; widths.len()];
                one[2 * k..2 * k + 2].copy_from_slice(pair);
                let eye = identity(shape[dim], rank, dim, d.dtype())?;
                let probe = {
                    let _off = fxvm_tensor::autograd::GradMode::set(false);
                    o::call_functional(
                        "pad",
                        vec![
                            Value::Tensor(eye),
                            Value::Ints(one),
                            Value::Str(mode.clone()),
                        ],
                    )?
                };
                d = map_back(&d, dim as i64, &as_matrix(&probe, shape[dim])?)?;
            }
            d
        };
        c.set(0, d);
        Ok(())
    })
}

/// PyTorch's node for an interpolation mode over `spatial` dims.
fn interpolate_name(values: &[Value]) -> &'static str {
    let spatial = match &values[0] {
        Value::Tensor(t) => t.ndim().saturating_sub(2),
        _ => 2,
    };
    let mode = match &values[3] {
        Value::Str(m) => m.as_str(),
        _ => "nearest",
    };
    match (mode, spatial) {
        ("nearest", 1) => "UpsampleNearest1DBackward0",
        ("nearest", 2) => "UpsampleNearest2DBackward0",
        ("nearest", _) => "UpsampleNearest3DBackward0",
        ("nearest-exact", 1) => "UpsampleNearestExact1DBackward0",
        ("nearest-exact", 2) => "UpsampleNearestExact2DBackward0",
        ("nearest-exact", _) => "UpsampleNearestExact3DBackward0",
        ("linear", _) => "UpsampleLinear1DBackward0",
        ("bilinear", _) => "UpsampleBilinear2DBackward0",
        ("bicubic", _) => "UpsampleBicubic2DBackward0",
        ("trilinear", _) => "UpsampleTrilinear3DBackward0",
        ("area", 1) => "AdaptiveAvgPool1DBackward0",
        ("area", 2) => "AdaptiveAvgPool2DBackward0",
        _ => "AdaptiveAvgPool3DBackward0",
    }
}

/// The interpolation's arguments for a probe of dim `k` of `spatial`: the
/// size or scale of that dim, the others left as they are.
fn probe_target(c: &Back<'_>, k: usize, spatial: usize) -> (Value, Value) {
    let pick = |n: usize| if n == 1 { 0 } else { k };
    match (c.value(1), c.value(2)) {
        (Value::Ints(sizes), _) => {
            let mut one = vec![1i64; spatial];
            one[k] = sizes[pick(sizes.len())];
            (Value::Ints(one), Value::None)
        }
        (_, Value::Floats(scales)) => {
            let mut one = vec![1.0; spatial];
            one[k] = scales[pick(scales.len())];
            (Value::None, Value::Floats(one))
        }
        _ => (Value::None, Value::None),
    }
}

/// `interpolate(input, size, scale_factor, mode, align_corners,
/// recompute_scale_factor, antialias)`.
pub(crate) fn interpolate() -> Derivative {
    derivative(Name::Pick(interpolate_name), &[], |c| {
        let shape = c.shape(0).to_vec();
        let spatial = shape.len() - 2;
        let mut d = c.grad()?;
        for k in 0..spatial {
            let dim = 2 + k;
            let (size, scale) = probe_target(c, k, spatial);
            let eye = identity(shape[dim], shape.len(), dim, d.dtype())?;
            let probe = {
                let _off = fxvm_tensor::autograd::GradMode::set(false);
                o::call_functional(
                    "interpolate",
                    vec![
                        Value::Tensor(eye),
                        size,
                        scale,
                        c.value(3).clone(),
                        c.value(4).clone(),
                        c.value(5).clone(),
                        c.value(6).clone(),
                    ],
                )?
            };
            d = map_back(&d, dim as i64, &as_matrix(&probe, shape[dim])?)?;
        }
        c.set(0, d);
        Ok(())
    })
}

/// `affine_grid_generator(theta, size, align_corners)`: each grid point is
/// `θ · (base point, 1)`, so θ's gradient is the output's against the base
/// points (the grid of the identity map) with a column of ones.
pub(crate) fn affine_grid() -> Derivative {
    derivative("AffineGridGeneratorBackward0", &[Save::In(0)], |c| {
        let (theta, g) = (c.input(0)?, c.grad()?);
        let k = theta.shape()[1];
        let size = c.ints(1);
        let align = c.bool(2);
        // The identity map's grid for one image: the base points.
        let mut identity = vec![0.0; k * (k + 1)];
        for r in 0..k {
            identity[r * (k + 1) + r] = 1.0;
        }
        let identity = o::to_dtype(&Tensor::from_vec(identity, &[1, k, k + 1]), theta.dtype())?;
        let mut one = size.clone();
        one[0] = 1;
        let base = o::call(
            "affine_grid_generator",
            vec![o::value(&identity), Value::Ints(one), Value::Bool(align)],
            vec![],
        )?;
        let points: usize = size[2..].iter().map(|&s| s as usize).product();
        let base = o::reshape(&base, &[points, k])?;
        let ones = o::full(&[points, 1], fxvm_tensor::Scalar::Int(1), theta.dtype())?;
        let homogeneous = o::cat(&[base, ones], 1)?;
        let g = o::reshape(&g, &[theta.shape()[0], points, k])?;
        let d = o::call(
            "einsum",
            vec![
                Value::Str("bpr,pc->brc".into()),
                Value::Tensors(vec![g, homogeneous]),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}
