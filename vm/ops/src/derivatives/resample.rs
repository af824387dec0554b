//! Padding and interpolation: linear in the input and separable per dim,
//! so each dim's map is found by running the op itself on an identity
//! (one body for forward and backward), and the gradient is the
//! transposed maps applied to the output's gradient.

use std::sync::Arc;

use fxvm_tensor::autograd::GradMode;
use fxvm_tensor::{DType, Result, Scalar, Tensor};

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

/// One grid axis of `grid_sampler`: its input size and how its coordinates
/// map to positions (see `fxvm_tensor::ops::grid`).
struct GridAxis {
    size: f64,
    align: bool,
    /// The 2-d kernel's arithmetic, `(x + 1)·s - 0.5` (the 3-d kernel's is
    /// `((x + 1)·size - 1) / 2`).
    fused: bool,
    /// 0 zeros, 1 border, 2 reflection.
    padding: i64,
}

impl GridAxis {
    fn unnormalize(&self, x: &Tensor) -> Result<Tensor> {
        let (size, shifted) = (self.size, o::add_s(x, 1.0)?);
        match (self.fused, self.align) {
            (true, true) => o::mul_s(&shifted, (size - 1.0) / 2.0),
            (true, false) => o::add_s(&o::mul_s(&shifted, size / 2.0)?, -0.5),
            (false, true) => o::mul_s(&o::mul_s(&shifted, 0.5)?, size - 1.0),
            (false, false) => o::mul_s(&o::add_s(&o::mul_s(&shifted, size)?, -1.0)?, 0.5),
        }
    }

    fn clip(&self, x: &Tensor) -> Result<Tensor> {
        let (lo, hi) = (Scalar::Float(0.0), Scalar::Float(self.size - 1.0));
        o::ew::clamp(x, Some(lo), Some(hi))
    }

    /// `x` folded into `[min, min + span]` at both edges.
    fn reflect(&self, x: &Tensor) -> Result<Tensor> {
        let (min, span) = if self.align {
            (0.0, self.size - 1.0)
        } else {
            (-0.5, self.size)
        };
        if span <= 0.0 {
            return o::mul_s(x, 0.0);
        }
        let y = o::unary("abs", &o::add_s(x, -min)?)?;
        let extra = o::call(
            "fmod",
            vec![o::value(&y), Value::Scalar(Scalar::Float(span))],
            vec![],
        )?;
        let flips = o::unary("floor", &o::mul_s(&y, 1.0 / span)?)?;
        let even = o::cmp_s(
            "eq",
            &o::call(
                "fmod",
                vec![o::value(&flips), Value::Scalar(Scalar::Float(2.0))],
                vec![],
            )?,
            0.0,
        )?;
        let up = o::add_s(&extra, min)?;
        let down = o::add_s(&o::neg(&extra)?, span + min)?;
        o::select_where(&even, &up, &down)
    }

    fn pad(&self, x: &Tensor) -> Result<Tensor> {
        match self.padding {
            1 => self.clip(x),
            2 => self.clip(&self.reflect(x)?),
            _ => Ok(x.clone()),
        }
    }

    /// The positions a coordinate reads and their weights: two for
    /// bilinear, one for nearest, four (each padded on its own) for bicubic.
    fn taps(&self, x: &Tensor, mode: i64) -> Result<Vec<(Tensor, Tensor)>> {
        let constant = |t: &Tensor, v: f64| o::add_s(&o::mul_s(t, 0.0)?, v);
        let detached = |t: Tensor| {
            let _off = GradMode::set(false);
            t.detach()
        };
        match mode {
            1 => {
                let ix = self.pad(&self.unnormalize(x)?)?;
                let at = detached(o::unary("round", &ix)?);
                Ok(vec![(at, constant(x, 1.0)?)])
            }
            2 => {
                let ix = self.unnormalize(x)?;
                let x0 = detached(o::unary("floor", &ix)?);
                let t = o::sub(&ix, &x0)?;
                let weights = cubic_weights(&t)?;
                (-1..3)
                    .zip(weights)
                    .map(|(d, w)| {
                        let _off = GradMode::set(false);
                        let at = o::unary("trunc", &self.pad(&o::add_s(&x0, f64::from(d))?)?)?;
                        Ok((at.detach(), w))
                    })
                    .collect()
            }
            _ => {
                let ix = self.pad(&self.unnormalize(x)?)?;
                let x0 = detached(o::unary("floor", &ix)?);
                let w1 = o::sub(&ix, &x0)?;
                let w0 = o::add_s(&o::neg(&w1)?, 1.0)?;
                Ok(vec![(x0.clone(), w0), (detached(o::add_s(&x0, 1.0)?), w1)])
            }
        }
    }
}

/// Keys' cubic convolution weights (A = -0.75) of the four samples around
/// a point `t` past the second.
fn cubic_weights(t: &Tensor) -> Result<[Tensor; 4]> {
    const A: f64 = -0.75;
    // (A + 2)x³ - (A + 3)x² + 1 for |x| ≤ 1; Ax³ - 5Ax² + 8Ax - 4A for 1 < |x| < 2.
    let near = |x: &Tensor| -> Result<Tensor> {
        let inner = o::add_s(&o::mul_s(x, A + 2.0)?, -(A + 3.0))?;
        o::add_s(&o::mul(&o::mul(&inner, x)?, x)?, 1.0)
    };
    let far = |x: &Tensor| -> Result<Tensor> {
        let inner = o::add_s(&o::mul_s(x, A)?, -5.0 * A)?;
        let inner = o::add_s(&o::mul(&inner, x)?, 8.0 * A)?;
        o::add_s(&o::mul(&inner, x)?, -4.0 * A)
    };
    let one_minus = o::add_s(&o::neg(t)?, 1.0)?;
    let two_minus = o::add_s(&o::neg(t)?, 2.0)?;
    Ok([
        far(&o::add_s(t, 1.0)?)?,
        near(t)?,
        near(&one_minus)?,
        far(&two_minus)?,
    ])
}

/// `grid_sampler(input, grid, interpolation_mode, padding_mode,
/// align_corners)` with history: checked and computed by the kernel, then
/// recorded as rows — each output point the weighted sum of the input
/// positions its coordinates read (gathered; outside the input, zero), the
/// weights functions of the grid.
pub(crate) fn grid_sampler() -> Derivative {
    Derivative::Decompose(Arc::new(|op, values: Vec<Value>| {
        let checked = crate::tape::run_plain(op, values.clone())?;
        let (
            Value::Tensor(x),
            Value::Tensor(grid),
            &Value::Int(mode),
            &Value::Int(padding),
            &Value::Bool(align),
        ) = (&values[0], &values[1], &values[2], &values[3], &values[4])
        else {
            return Ok(checked);
        };
        let spatial = &x.shape()[2..];
        let (n, ch, k) = (x.shape()[0], x.shape()[1], spatial.len());
        let points: Vec<usize> = grid.shape()[1..=k].to_vec();
        let count: usize = points.iter().product();
        // Grid axis a (x, y, z) runs along input dim k - 1 - a.
        let mut axes_taps = Vec::with_capacity(k);
        for a in 0..k {
            let axis = GridAxis {
                size: spatial[k - 1 - a] as f64,
                align,
                fused: k == 2,
                padding,
            };
            let coordinate = o::call(
                "select",
                vec![o::value(grid), Value::Int(-1), Value::Int(a as i64)],
                vec![],
            )?;
            axes_taps.push(axis.taps(&o::reshape(&coordinate, &[n, 1, count])?, mode)?);
        }
        let flat = o::reshape(x, &[n, ch, spatial.iter().product()])?;
        let mut out: Option<Tensor> = None;
        let combos: usize = axes_taps.iter().map(Vec::len).product();
        for combo in 0..combos {
            let (mut rest, mut stride) = (combo, 1.0);
            let (mut position, mut valid, mut weight): (
                Option<Tensor>,
                Option<Tensor>,
                Option<Tensor>,
            ) = (None, None, None);
            for (a, taps) in axes_taps.iter().enumerate() {
                let (at, w) = &taps[rest % taps.len()];
                rest /= taps.len();
                let size = spatial[k - 1 - a] as f64;
                {
                    let _off = GradMode::set(false);
                    let inside = o::call(
                        "logical_and",
                        vec![
                            o::value(&o::cmp_s("ge", at, 0.0)?),
                            o::value(&o::cmp_s("lt", at, size)?),
                        ],
                        vec![],
                    )?;
                    let index = o::mul_s(
                        &o::ew::clamp(
                            at,
                            Some(Scalar::Float(0.0)),
                            Some(Scalar::Float(size - 1.0)),
                        )?,
                        stride,
                    )?;
                    position = Some(match position {
                        Some(p) => o::add(&p, &index)?,
                        None => index,
                    });
                    valid = Some(match valid {
                        Some(v) => {
                            o::call("logical_and", vec![o::value(&v), o::value(&inside)], vec![])?
                        }
                        None => inside,
                    });
                }
                weight = Some(match weight {
                    Some(acc) => o::mul(&acc, w)?,
                    None => w.clone(),
                });
                stride *= size;
            }
            let (Some(position), Some(valid), Some(weight)) = (position, valid, weight) else {
                return Ok(checked);
            };
            let index = {
                let _off = GradMode::set(false);
                let index = o::to_dtype(&position, fxvm_tensor::DType::I64)?;
                o::expand(&index, &[n, ch, count])?
            };
            let read = o::call(
                "gather",
                vec![o::value(&flat), Value::Int(2), o::value(&index)],
                vec![],
            )?;
            let term = o::mul(&read, &o::mask(&valid, &weight)?)?;
            out = Some(match out {
                Some(acc) => o::add(&acc, &term)?,
                None => term,
            });
        }
        let Some(out) = out else {
            return Ok(checked);
        };
        let mut shape = vec![n, ch];
        shape.extend(points);
        o::reshape(&out, &shape).map(Value::Tensor)
    }))
}
