//! Reductions that pick elements (max/min, sorts, order statistics,
//! norms and products): the gradient goes to the picked elements, or is
//! shared among ties as PyTorch shares it.

use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use super::reduce::spread;
use crate::autograd::ops as o;
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

use super::wrap;

/// `g` at the positions `indices` picked along `dim` (of a forward input
/// of `shape`), zero elsewhere; `keepdim` as the forward's.
fn at_indices(
    g: &Tensor,
    indices: &Tensor,
    shape: &[usize],
    dim: i64,
    keepdim: bool,
) -> Result<Tensor> {
    let dim = wrap(dim, shape.len());
    let (g, i) = if keepdim || shape.is_empty() {
        (g.clone(), indices.clone())
    } else {
        (o::unsqueeze(g, dim)?, o::unsqueeze(indices, dim)?)
    };
    o::call(
        "scatter",
        vec![
            o::value(&o::zeros(shape, g.dtype())?),
            Value::Int(dim),
            o::value(&i),
            o::value(&g),
        ],
        vec![],
    )
}

/// `g` shared evenly among the elements of `x` equal to the result `y`
/// (spread back over `dims`; all when `None`).
fn evenly(
    g: &Tensor,
    x: &Tensor,
    y: &Tensor,
    dims: Option<Vec<i64>>,
    keepdim: bool,
) -> Result<Tensor> {
    let shape = x.shape().to_vec();
    let y = spread(y, &shape, dims.clone(), keepdim)?;
    let hit = o::to_dtype(
        &o::call("eq", vec![o::value(x), o::value(&y)], vec![])?,
        g.dtype(),
    )?;
    let count = match &dims {
        Some(d) => o::sum(&hit, d, true)?,
        None => o::sum(&hit, &[], false)?,
    };
    let g = spread(g, &shape, dims, keepdim)?;
    o::mul(&hit, &o::div(&g, &count)?)
}

/// `max`/`min(input)` (`Max/MinBackward1`), `(input, dim, keepdim)`
/// (values and indices, `Backward0`) and `(input, other)` (`maximum`).
pub(crate) fn max_min(max: bool) -> Derivative {
    fn name_max(values: &[Value]) -> &'static str {
        match values[1] {
            Value::None => "MaxBackward1",
            Value::Tensor(_) => "MaximumBackward0",
            _ => "MaxBackward0",
        }
    }
    fn name_min(values: &[Value]) -> &'static str {
        match values[1] {
            Value::None => "MinBackward1",
            Value::Tensor(_) => "MinimumBackward0",
            _ => "MinBackward0",
        }
    }
    let pick: fn(&[Value]) -> &'static str = if max { name_max } else { name_min };
    derivative(
        Name::Pick(pick),
        &[Save::In(0), Save::In(1), Save::Out(0), Save::Out(1)],
        move |c| {
            let g = c.grad()?;
            let x = c.input(0)?;
            match c.value(1).clone() {
                Value::None if !c.is_tensor(1) => {
                    let d = evenly(&g, &x, &c.output(0)?, None, false)?;
                    c.set(0, d);
                }
                Value::Int(dim) => {
                    let d = at_indices(&g, &c.output(1)?, x.shape(), dim, c.bool(2))?;
                    c.set(0, d);
                }
                _ => {
                    // maximum/minimum: the winning side, ties split.
                    let y = c.input(1)?;
                    let wins = if max { "gt" } else { "lt" };
                    let tie = o::call("eq", vec![o::value(&x), o::value(&y)], vec![])?;
                    let half = o::mul_s(&g, 0.5)?;
                    for (i, (a, b)) in [(0, (&x, &y)), (1, (&y, &x))] {
                        if c.needs(i) {
                            let win = o::call(wins, vec![o::value(a), o::value(b)], vec![])?;
                            let d = o::select_where(&tie, &half, &o::mask(&win, &g)?)?;
                            c.set(i, d);
                        }
                    }
                }
            }
            Ok(())
        },
    )
}

/// `amax`/`amin(input, dim, keepdim)`: shared among the extreme elements.
pub(crate) fn amax_amin(name: &'static str) -> Derivative {
    derivative(name, &[Save::In(0), Save::Out(0)], |c| {
        let dims = c.ints(1);
        let dims = (!dims.is_empty()).then_some(dims);
        let d = evenly(&c.grad()?, &c.input(0)?, &c.output(0)?, dims, c.bool(2))?;
        c.set(0, d);
        Ok(())
    })
}

/// `aminmax(input, *, dim, keepdim)` → `(min, max)`.
pub(crate) fn aminmax() -> Derivative {
    derivative(
        "AminmaxBackward0",
        &[Save::In(0), Save::Out(0), Save::Out(1)],
        |c| {
            let x = c.input(0)?;
            let dims = c.opt_int(1).map(|d| vec![d]);
            for n in 0..2 {
                if let Some(g) = c.grad_n(n) {
                    let d = evenly(&g, &x, &c.output(n)?, dims.clone(), c.bool(2))?;
                    c.add(0, d)?;
                }
            }
            Ok(())
        },
    )
}

/// Rows returning `(values, indices)` picked along a dim: `sort`, `topk`
/// (values keep the dim), `kthvalue`, `median`/`nanmedian` with a dim
/// (parameter `dim`, `keepdim` at `keep`). `median()` over everything
/// shares its gradient among equal elements.
pub(crate) fn picked(name: Name, dim: usize, keep: Option<usize>) -> Derivative {
    derivative(name, &[Save::In(0), Save::Out(0), Save::Out(1)], move |c| {
        let g = c.grad()?;
        let shape = c.shape(0).to_vec();
        let d = match (c.opt_int(dim), keep) {
            (None, _) => evenly(&g, &c.input(0)?, &c.output(0)?, None, false)?,
            (Some(d), Some(k)) => at_indices(&g, &c.output(1)?, &shape, d, c.bool(k))?,
            (Some(d), None) => at_indices(&g, &c.output(1)?, &shape, d, true)?,
        };
        c.set(0, d);
        Ok(())
    })
}

/// `median`/`nanmedian`: `Backward0` over everything, `Backward1` along a dim.
pub(crate) fn median(base: &'static str) -> Derivative {
    fn median_name(values: &[Value]) -> &'static str {
        match values[1] {
            Value::None => "MedianBackward0",
            _ => "MedianBackward1",
        }
    }
    fn nanmedian_name(values: &[Value]) -> &'static str {
        match values[1] {
            Value::None => "NanmedianBackward0",
            _ => "NanmedianBackward1",
        }
    }
    let name: fn(&[Value]) -> &'static str = if base == "median" {
        median_name
    } else {
        nanmedian_name
    };
    picked(Name::Pick(name), 1, Some(2))
}

/// `cummax`/`cummin(input, dim)`: each output's gradient added at the
/// index it came from.
pub(crate) fn cumulative_extreme(name: &'static str) -> Derivative {
    derivative(name, &[Save::Out(1)], |c| {
        let g = c.grad()?;
        let d = o::call(
            "scatter_add",
            vec![
                o::value(&o::zeros(c.shape(0), g.dtype())?),
                Value::Int(c.int(1)),
                o::value(&c.output(1)?),
                o::value(&g),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// The product of the elements before each one along `dim` (1 first).
fn exclusive_cumprod(x: &Tensor, dim: i64) -> Result<Tensor> {
    let n = x.shape()[dim as usize];
    let mut one_shape = x.shape().to_vec();
    one_shape[dim as usize] = 1;
    let one = o::add_s(&o::zeros(&one_shape, x.dtype())?, 1.0)?;
    let head = o::narrow(x, dim, 0, n - 1)?;
    let shifted = o::cat(&[one, head], dim)?;
    o::call("cumprod", vec![o::value(&shifted), Value::Int(dim)], vec![])
}

fn flip(x: &Tensor, dim: i64) -> Result<Tensor> {
    o::call("flip", vec![o::value(x), Value::Ints(vec![dim])], vec![])
}

/// `∂ prod(x) / ∂ x_i` along `dim`: the product of all the others, exact
/// with zeros (the products before and after each element).
fn others_product(x: &Tensor, dim: i64) -> Result<Tensor> {
    let before = exclusive_cumprod(x, dim)?;
    let after = flip(&exclusive_cumprod(&flip(x, dim)?, dim)?, dim)?;
    o::mul(&before, &after)
}

/// `prod(input)` (`ProdBackward0`) and `prod(input, dim, keepdim)`.
pub(crate) fn prod() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match values[1] {
            Value::None => "ProdBackward0",
            _ => "ProdBackward1",
        }
    }
    derivative(Name::Pick(name), &[Save::In(0)], |c| {
        let x = c.input(0)?;
        let shape = x.shape().to_vec();
        let g = c.grad()?;
        let d = match c.opt_int(1) {
            _ if shape.is_empty() => g,
            None => {
                let flat = o::reshape(&x, &[x.numel()])?;
                let others = o::reshape(&others_product(&flat, 0)?, &shape)?;
                o::mul(&spread(&g, &shape, None, false)?, &others)?
            }
            Some(dim) => {
                let dim = wrap(dim, shape.len());
                let g = spread(&g, &shape, Some(vec![dim]), c.bool(2))?;
                o::mul(&g, &others_product(&x, dim)?)?
            }
        };
        c.set(0, d);
        Ok(())
    })
}

/// `cumprod(input, dim)`: `Σ_{j≥i} g_j y_j / x_i` when no element is
/// zero; with zeros, each position's products with it left out.
pub(crate) fn cumprod() -> Derivative {
    derivative("CumprodBackward0", &[Save::In(0), Save::Out(0)], |c| {
        let (x, g) = (c.input(0)?, c.grad()?);
        if x.ndim() == 0 {
            c.set(0, g);
            return Ok(());
        }
        let dim = wrap(c.int(1), x.ndim());
        let reverse_cumsum = |t: &Tensor| -> Result<Tensor> {
            flip(
                &o::call(
                    "cumsum",
                    vec![o::value(&flip(t, dim)?), Value::Int(dim)],
                    vec![],
                )?,
                dim,
            )
        };
        let zeros = {
            let _off = fxvm_tensor::autograd::GradMode::set(false);
            o::cmp_s("eq", &x, 0.0)?
                .to_vec::<bool>()
                .into_iter()
                .any(|z| z)
        };
        let d = if !zeros {
            o::div(&reverse_cumsum(&o::mul(&g, &c.output(0)?)?)?, &x)?
        } else {
            // Position i: Σ_j g_j Π_{k≤j, k≠i} x_k, from x with x_i set to 1.
            let n = x.shape()[dim as usize];
            let mut parts = Vec::with_capacity(n);
            for i in 0..n {
                let index = o::value(&Tensor::from_vec(vec![i as i64], &[1]));
                let without = o::call(
                    "index_fill",
                    vec![
                        o::value(&x),
                        Value::Int(dim),
                        index,
                        Value::Scalar(Scalar::Int(1)),
                    ],
                    vec![],
                )?;
                let products =
                    o::call("cumprod", vec![o::value(&without), Value::Int(dim)], vec![])?;
                let later = o::narrow(&o::mul(&g, &products)?, dim, i, n - i)?;
                parts.push(o::sum(&later, &[dim], true)?);
            }
            o::cat(&parts, dim)?
        };
        c.set(0, d);
        Ok(())
    })
}

/// `logsumexp(input, dim, keepdim)`: `g · exp(x - y)`.
pub(crate) fn logsumexp() -> Derivative {
    derivative("LogsumexpBackward0", &[Save::In(0), Save::Out(0)], |c| {
        let x = c.input(0)?;
        let shape = x.shape().to_vec();
        let dims = c.ints(1);
        let dims = (!dims.is_empty()).then_some(dims);
        let y = spread(&c.output(0)?, &shape, dims.clone(), c.bool(2))?;
        let g = spread(&c.grad()?, &shape, dims, c.bool(2))?;
        let d = o::mul(&g, &o::unary("exp", &o::sub(&x, &y)?)?)?;
        c.set(0, d);
        Ok(())
    })
}

/// `nansum`: the gradient where the input is a number.
pub(crate) fn nansum() -> Derivative {
    derivative("NansumBackward0", &[Save::In(0)], |c| {
        let x = c.input(0)?;
        let dims = match c.value(1) {
            Value::Ints(d) if !d.is_empty() => Some(d.clone()),
            _ => None,
        };
        let g = spread(&c.grad()?, x.shape(), dims, c.bool(2))?;
        let nan = o::unary("isnan", &x)?;
        let d = o::call(
            "masked_fill",
            vec![o::value(&g), o::value(&nan), Value::Scalar(Scalar::Int(0))],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// The order `p` of `norm`/`linalg_vector_norm` (2 for `None`/`'fro'`).
fn order(value: &Value) -> Result<f64> {
    match value {
        Value::None => Ok(2.0),
        Value::Str(s) if s == "fro" => Ok(2.0),
        Value::Str(s) => Err(TensorError::not_implemented(format!(
            "the derivative of the '{s}' norm is not implemented."
        ))),
        Value::Scalar(s) => Ok(s.to_f64()),
        Value::Int(n) => Ok(*n as f64),
        Value::Float(f) => Ok(*f),
        _ => Ok(2.0),
    }
}

/// `norm(input, p, dim, keepdim)` and `linalg_vector_norm(x, ord, dim,
/// keepdim)`: `g · x |x|^(p-2) / ‖x‖^(p-1)` (0 where the norm is 0),
/// `g · sign(x)` for p = 1, shared among the largest for p = ∞.
pub(crate) fn vector_norm() -> Derivative {
    derivative(
        "LinalgVectorNormBackward0",
        &[Save::In(0), Save::Out(0)],
        |c| {
            let x = c.input(0)?;
            let shape = x.shape().to_vec();
            let p = order(c.value(1))?;
            let dims = match c.value(2) {
                Value::Ints(d) if !d.is_empty() => Some(d.clone()),
                _ => None,
            };
            let keepdim = c.bool(3);
            let (g, y) = (c.grad()?, c.output(0)?);
            let d = if p == 0.0 {
                o::mul_s(&spread(&g, &shape, dims, keepdim)?, 0.0)?
            } else if p == 1.0 {
                o::mul(&spread(&g, &shape, dims, keepdim)?, &o::unary("sign", &x)?)?
            } else if p.is_infinite() {
                let a = o::unary("abs", &x)?;
                o::mul(&evenly(&g, &a, &y, dims, keepdim)?, &o::unary("sign", &x)?)?
            } else {
                let g = spread(&g, &shape, dims.clone(), keepdim)?;
                let y = spread(&y, &shape, dims, keepdim)?;
                let scaled = if p == 2.0 {
                    o::div(&o::mul(&g, &x)?, &y)?
                } else {
                    let a = o::unary("abs", &x)?;
                    let num = o::mul(&o::mul(&x, &o::pow_s(&a, p - 2.0)?)?, &g)?;
                    o::div(&num, &o::pow_s(&y, p - 1.0)?)?
                };
                o::mask(&o::cmp_s("ne", &y, 0.0)?, &scaled)?
            };
            c.set(0, d);
            Ok(())
        },
    )
}

/// The gradient of a p-norm distance `d` along its difference `diff`
/// (`dd` is `d` with a trailing unit dim): `diff / d` for p = 2,
/// `sign(diff)` for 1, the largest coordinates' signs for ∞,
/// `sign(diff) |diff|^(p-1) / d^(p-1)` else; 0 where the distance is 0.
fn distance_slope(diff: &Tensor, dd: &Tensor, p: f64) -> Result<Tensor> {
    let sign = o::unary("sign", diff)?;
    let slope = if p == 0.0 {
        o::mul_s(diff, 0.0)?
    } else if p == 1.0 {
        sign
    } else if p.is_infinite() {
        let top = o::call(
            "eq",
            vec![o::value(&o::unary("abs", diff)?), o::value(dd)],
            vec![],
        )?;
        o::mask(&top, &sign)?
    } else if p == 2.0 {
        o::div(diff, dd)?
    } else {
        let a = o::unary("abs", diff)?;
        o::div(
            &o::mul(&sign, &o::pow_s(&a, p - 1.0)?)?,
            &o::pow_s(dd, p - 1.0)?,
        )?
    };
    o::mask(&o::cmp_s("ne", dd, 0.0)?, &slope)
}

/// `cdist(x1, x2, p)`: each distance's gradient along its difference
/// `x1_i - x2_j`, summed over the other side's rows.
pub(crate) fn cdist() -> Derivative {
    derivative(
        "CdistBackward0",
        &[Save::In(0), Save::In(1), Save::Out(0)],
        |c| {
            let (x1, x2, d, g) = (c.input(0)?, c.input(1)?, c.output(0)?, c.grad()?);
            let diff = o::sub(&o::unsqueeze(&x1, -2)?, &o::unsqueeze(&x2, -3)?)?;
            let slope = distance_slope(&diff, &o::unsqueeze(&d, -1)?, c.float(2))?;
            let weighted = o::mul(&o::unsqueeze(&g, -1)?, &slope)?;
            if c.needs(0) {
                c.set(0, o::sum(&weighted, &[-2], false)?);
            }
            if c.needs(1) {
                // 0 - s rather than -s: a zero stays +0, as PyTorch's (it
                // runs the same formula with the sides swapped).
                let s = o::sum(&weighted, &[-3], false)?;
                c.set(1, o::sub(&o::zeros(s.shape(), s.dtype())?, &s)?);
            }
            Ok(())
        },
    )
}

/// `pdist(x, p)`: the distance of rows i < j (in `triu_indices` order)
/// moves row i along its difference and row j against it.
pub(crate) fn pdist() -> Derivative {
    derivative("PdistBackward0", &[Save::In(0), Save::Out(0)], |c| {
        let (x, d, g) = (c.input(0)?, c.output(0)?, c.grad()?);
        let n = x.shape()[0] as i64;
        let pairs = o::call(
            "triu_indices",
            vec![Value::Int(n), Value::Int(n), Value::Int(1)],
            vec![],
        )?;
        let side = |k: i64| {
            o::call(
                "select",
                vec![o::value(&pairs), Value::Int(0), Value::Int(k)],
                vec![],
            )
        };
        let (i, j) = (side(0)?, side(1)?);
        let rows = |idx: &Tensor| {
            o::call(
                "index_select",
                vec![o::value(&x), Value::Int(0), o::value(idx)],
                vec![],
            )
        };
        let diff = o::sub(&rows(&i)?, &rows(&j)?)?;
        let slope = distance_slope(&diff, &o::unsqueeze(&d, -1)?, c.float(1))?;
        let weighted = o::mul(&o::unsqueeze(&g, -1)?, &slope)?;
        let add = |base: Tensor, idx: &Tensor, alpha: i64| {
            o::call(
                "index_add",
                vec![
                    o::value(&base),
                    Value::Int(0),
                    o::value(idx),
                    o::value(&weighted),
                ],
                vec![("alpha", Value::Scalar(fxvm_tensor::Scalar::Int(alpha)))],
            )
        };
        let dx = add(o::zeros(x.shape(), x.dtype())?, &i, 1)?;
        c.set(0, add(dx, &j, -1)?);
        Ok(())
    })
}
