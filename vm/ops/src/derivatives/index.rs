//! Indexing ops: gradients put back where the values came from.

use fxvm_tensor::ops::subscript::Index;
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use crate::autograd::ops as o;
use crate::autograd::{Back, Derivative, Name, Save, derivative};
use crate::value::Value;

/// `masked_fill(input, mask, value)`: nothing flows where the mask filled.
pub(crate) fn masked_fill() -> Derivative {
    derivative("MaskedFillBackward0", &[Save::In(1)], |c| {
        let d = o::call(
            "masked_fill",
            vec![
                Value::Tensor(c.grad()?),
                Value::Tensor(c.input(1)?),
                Value::Scalar(Scalar::Int(0)),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `gather(input, dim, index)` (`scatter_add` puts the gradient back at
/// the gathered positions) and `index_select(input, dim, index)`
/// (`index_add` adds each slice's gradient back into its slice).
pub(crate) fn put_back(name: &'static str, adder: &'static str) -> Derivative {
    derivative(name, &[Save::In(2)], move |c| {
        let g = c.grad()?;
        let d = o::call(
            adder,
            vec![
                Value::Tensor(o::zeros(c.shape(0), g.dtype())?),
                Value::Int(c.int(1)),
                Value::Tensor(c.input(2)?),
                Value::Tensor(g),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `cumsum(input, dim)`: the reversed cumulative sum of the gradient.
pub(crate) fn cumsum() -> Derivative {
    derivative("CumsumBackward0", &[], |c| {
        let dim = c.int(1);
        let flip = |t| {
            o::call(
                "flip",
                vec![Value::Tensor(t), Value::Ints(vec![dim])],
                vec![],
            )
        };
        let summed = o::call(
            "cumsum",
            vec![Value::Tensor(flip(c.grad()?)?), Value::Int(dim)],
            vec![],
        )?;
        c.set(0, flip(summed)?);
        Ok(())
    })
}

/// `repeat_interleave(input, repeats, dim)` with a number of repeats: the
/// gradients of each element's copies summed (a tensor of repeats, or no
/// `dim`, raises).
pub(crate) fn repeat_interleave() -> Derivative {
    derivative("IndexSelectBackward0", &[], |c| {
        let (Value::Int(r), Some(dim)) = (c.value(1).clone(), c.opt_int(2)) else {
            return Err(TensorError::not_implemented(
                "the derivative for 'repeat_interleave' with a tensor of repeats or without dim is not implemented.",
            ));
        };
        let shape = c.shape(0).to_vec();
        let d = if dim < 0 {
            dim + shape.len() as i64
        } else {
            dim
        } as usize;
        let mut split = shape.clone();
        split.insert(d + 1, r as usize);
        let g = o::reshape(&c.grad()?, &split)?;
        let summed = o::sum(&g, &[d as i64 + 1], false)?;
        c.set(0, summed);
        Ok(())
    })
}

/// `index_select(g, dim, index)` shaped as the source it is the gradient of.
fn selected(c: &Back<'_>, g: &Tensor, dim: usize, index: usize, source: usize) -> Result<Tensor> {
    let picked = o::call(
        "index_select",
        vec![
            o::value(g),
            Value::Int(c.int(dim)),
            o::value(&c.input(index)?),
        ],
        vec![],
    )?;
    o::reshape(&picked, c.shape(source))
}

/// `g` with `dim`'s `index` slices filled with 0 (what an op overwrote).
fn unfilled(c: &Back<'_>, g: &Tensor) -> Result<Tensor> {
    o::call(
        "index_fill",
        vec![
            o::value(g),
            Value::Int(c.int(1)),
            o::value(&c.input(2)?),
            Value::Scalar(Scalar::Int(0)),
        ],
        vec![],
    )
}

/// `index_add(input, dim, index, source, alpha)`.
pub(crate) fn index_add() -> Derivative {
    derivative("IndexAddBackward0", &[Save::In(2)], |c| {
        let g = c.grad()?;
        if c.needs(3) {
            let d = o::mul_scalar(&selected(c, &g, 1, 2, 3)?, c.scalar(4))?;
            c.set(3, d);
        }
        c.set(0, g);
        Ok(())
    })
}

/// `index_copy(input, dim, index, source)`.
pub(crate) fn index_copy() -> Derivative {
    derivative("IndexCopyBackward0", &[Save::In(2)], |c| {
        let g = c.grad()?;
        if c.needs(3) {
            let d = selected(c, &g, 1, 2, 3)?;
            c.set(3, d);
        }
        if c.needs(0) {
            let d = unfilled(c, &g)?;
            c.set(0, d);
        }
        Ok(())
    })
}

/// `index_fill(input, dim, index, value)`: a 0-d tensor value gets the
/// sum of the filled slices' gradients.
pub(crate) fn index_fill() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match values[3] {
            Value::Tensor(_) => "IndexFillBackward1",
            _ => "IndexFillBackward0",
        }
    }
    derivative(Name::Pick(name), &[Save::In(2)], |c| {
        let g = c.grad()?;
        if c.is_tensor(3) && c.needs(3) {
            let picked = o::call(
                "index_select",
                vec![o::value(&g), Value::Int(c.int(1)), o::value(&c.input(2)?)],
                vec![],
            )?;
            c.set(3, o::sum(&picked, &[], false)?);
        }
        if c.needs(0) {
            let d = unfilled(c, &g)?;
            c.set(0, d);
        }
        Ok(())
    })
}

/// `index_put(input, indices, values, accumulate)`.
pub(crate) fn index_put() -> Derivative {
    derivative("IndexPutBackward0", &[Save::In(1)], |c| {
        let g = c.grad()?;
        let items: Vec<Index> = c.list(1)?.into_iter().map(Index::Tensor).collect();
        if c.needs(2) {
            let d = crate::autograd::index::get(&g, &items)?;
            c.set(2, d);
        }
        if c.needs(0) {
            let d = if c.bool(3) {
                g
            } else {
                let rest = o::call("clone", vec![o::value(&g)], vec![])?;
                crate::autograd::index::set(&rest, &items, &o::zeros(&[], rest.dtype())?)?;
                rest
            };
            c.set(0, d);
        }
        Ok(())
    })
}

/// `g.gather(dim, index)`: the gradient of what was scattered from `src`.
fn gathered(c: &Back<'_>, g: &Tensor) -> Result<Tensor> {
    o::call(
        "gather",
        vec![o::value(g), Value::Int(c.int(1)), o::value(&c.input(2)?)],
        vec![],
    )
}

/// `g.scatter(dim, index, value)`.
fn scattered(c: &Back<'_>, g: &Tensor, value: Value) -> Result<Tensor> {
    o::call(
        "scatter",
        vec![
            o::value(g),
            Value::Int(c.int(1)),
            o::value(&c.input(2)?),
            value,
        ],
        vec![],
    )
}

/// `scatter(input, dim, index, src)`: overwritten positions give no
/// gradient to the input; `src` gets the gradient of where it went.
pub(crate) fn scatter() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match values[3] {
            Value::Tensor(_) => "ScatterBackward0",
            _ => "ScatterBackward1",
        }
    }
    derivative(Name::Pick(name), &[Save::In(2)], |c| {
        if !matches!(c.value(4), Value::None) {
            return Err(TensorError::not_implemented(
                "the derivative for 'scatter' with reduce= is not implemented (scatter_reduce has one).",
            ));
        }
        let g = c.grad()?;
        if c.is_tensor(3) && c.needs(3) {
            let d = gathered(c, &g)?;
            c.set(3, d);
        }
        if c.needs(0) {
            let d = scattered(c, &g, Value::Scalar(Scalar::Int(0)))?;
            c.set(0, d);
        }
        Ok(())
    })
}

/// `scatter_add(input, dim, index, src)`.
pub(crate) fn scatter_add() -> Derivative {
    derivative("ScatterAddBackward0", &[Save::In(2)], |c| {
        let g = c.grad()?;
        if c.needs(3) {
            let d = gathered(c, &g)?;
            c.set(3, d);
        }
        c.set(0, g);
        Ok(())
    })
}

/// `scatter_reduce(input, dim, index, src, reduce, include_self)` for the
/// `sum`, `mean`, `amax` and `amin` reductions (ties share the gradient
/// of a maximum equally, as PyTorch's).
pub(crate) fn scatter_reduce() -> Derivative {
    derivative(
        "ScatterReduceBackward0",
        &[Save::In(0), Save::In(2), Save::In(3), Save::Out(0)],
        |c| {
            let Value::Str(reduce) = c.value(4).clone() else {
                unreachable!("scatter_reduce's reduce is a str")
            };
            let include_self = c.bool(5);
            let g = c.grad()?;
            let (x, src) = (c.input(0)?, c.input(3)?);
            let ones = |t: &Tensor| o::add_s(&o::mul_s(t, 0.0)?, 1.0);
            // How many values (the input's own when included) met at each position.
            let count = || -> Result<Tensor> {
                let start = if include_self {
                    ones(&x)?
                } else {
                    o::mul_s(&x, 0.0)?
                };
                o::call(
                    "scatter_add",
                    vec![
                        o::value(&start),
                        Value::Int(c.int(1)),
                        o::value(&c.input(2)?),
                        o::value(&ones(&src)?),
                    ],
                    vec![],
                )
            };
            // Positions that received a value (the input's share is 0 there without include_self).
            let received = |g: Tensor| -> Result<Tensor> {
                if include_self {
                    return Ok(g);
                }
                scattered(c, &g, Value::Scalar(Scalar::Int(0)))
            };
            let (self_grad, src_grad) = match reduce.as_str() {
                "sum" => (received(g.clone())?, gathered(c, &g)?),
                "mean" => {
                    let n = count()?;
                    let shared = o::div(
                        &g,
                        &o::call(
                            "clamp_min",
                            vec![o::value(&n), Value::Scalar(Scalar::Int(1))],
                            vec![],
                        )?,
                    )?;
                    (received(shared.clone())?, gathered(c, &shared)?)
                }
                "amax" | "amin" => {
                    let y = c.output(0)?;
                    let eq = |a: &Tensor, b: &Tensor| {
                        o::call("eq", vec![o::value(a), o::value(b)], vec![])
                    };
                    let self_hit = o::to_dtype(&eq(&x, &y)?, g.dtype())?;
                    let counted = if include_self {
                        self_hit.clone()
                    } else {
                        scattered(c, &self_hit, Value::Scalar(Scalar::Int(0)))?
                    };
                    let src_hit = o::to_dtype(&eq(&src, &gathered(c, &y)?)?, g.dtype())?;
                    let ties = o::call(
                        "scatter_add",
                        vec![
                            o::value(&counted),
                            Value::Int(c.int(1)),
                            o::value(&c.input(2)?),
                            o::value(&src_hit),
                        ],
                        vec![],
                    )?;
                    let shared = o::div(&g, &ties)?;
                    (
                        received(o::mul(&self_hit, &shared)?)?,
                        o::mul(&src_hit, &gathered(c, &shared)?)?,
                    )
                }
                other => {
                    return Err(TensorError::not_implemented(format!(
                        "the derivative for 'scatter_reduce' with reduce='{other}' is not implemented."
                    )));
                }
            };
            c.set(3, src_grad);
            c.set(0, self_grad);
            Ok(())
        },
    )
}

/// `take(input, index)`: the gradient put back at the flat positions.
pub(crate) fn take() -> Derivative {
    derivative("TakeBackward0", &[Save::In(1)], |c| {
        let g = c.grad()?;
        let d = o::call(
            "put",
            vec![
                o::value(&o::zeros(c.shape(0), g.dtype())?),
                o::value(&c.input(1)?),
                o::value(&g),
                Value::Bool(true),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `put(input, index, source, accumulate)`.
pub(crate) fn put() -> Derivative {
    derivative("PutBackward0", &[Save::In(1)], |c| {
        let g = c.grad()?;
        if c.needs(2) {
            let d = o::call("take", vec![o::value(&g), o::value(&c.input(1)?)], vec![])?;
            c.set(2, o::reshape(&d, c.shape(2))?);
        }
        if c.needs(0) {
            let d = if c.bool(3) {
                g
            } else {
                let zeros = o::value(&o::zeros(c.shape(2), g.dtype())?);
                o::call(
                    "put",
                    vec![
                        o::value(&g),
                        o::value(&c.input(1)?),
                        zeros,
                        Value::Bool(false),
                    ],
                    vec![],
                )?
            };
            c.set(0, d);
        }
        Ok(())
    })
}

/// `masked_select(input, mask)`: the gradient scattered back into the
/// broadcast shape (the engine sums it down to the input's).
pub(crate) fn masked_select() -> Derivative {
    derivative("MaskedSelectBackward0", &[Save::In(1)], |c| {
        let (g, mask) = (c.grad()?, c.input(1)?);
        let shape = fxvm_tensor::layout::broadcast_shapes(c.shape(0), mask.shape())
            .unwrap_or_else(|| c.shape(0).to_vec());
        let d = o::call(
            "masked_scatter",
            vec![
                o::value(&o::zeros(&shape, g.dtype())?),
                o::value(&mask),
                o::value(&g),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `masked_scatter(input, mask, source)`: the source's first elements
/// went to the masked positions, the rest get zero.
pub(crate) fn masked_scatter() -> Derivative {
    derivative("MaskedScatterBackward0", &[Save::In(1)], |c| {
        let (g, mask) = (c.grad()?, c.input(1)?);
        if c.needs(2) {
            let used = o::call("masked_select", vec![o::value(&g), o::value(&mask)], vec![])?;
            let total: usize = c.shape(2).iter().product();
            let rest = o::zeros(&[total - used.numel()], g.dtype())?;
            let d = o::reshape(&o::cat(&[used, rest], 0)?, c.shape(2))?;
            c.set(2, d);
        }
        if c.needs(0) {
            let d = o::call(
                "masked_fill",
                vec![o::value(&g), o::value(&mask), Value::Scalar(Scalar::Int(0))],
                vec![],
            )?;
            c.set(0, d);
        }
        Ok(())
    })
}

/// Ops that overwrite their input entirely (`copy_`, `fill_`, `zero_`):
/// no gradient to what was there; `copy_`'s source gets the gradient
/// (summed back to its shape and cast to its dtype by the engine).
pub(crate) fn overwrite(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = c.grad()?;
        if c.params.len() > 1 && c.is_tensor(1) {
            c.set(1, g.clone());
        }
        c.set(0, o::zeros(c.shape(0), g.dtype())?);
        Ok(())
    })
}

/// `tril`/`triu(input, diagonal)`: the gradient's same triangle.
pub(crate) fn triangle(name: &'static str, row: &'static str) -> Derivative {
    derivative(name, &[], move |c| {
        let d = o::call(
            row,
            vec![o::value(&c.grad()?), Value::Int(c.int(1))],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `logcumsumexp(input, dim)`: `Σ_{j≥i} g_j exp(x_i - y_j)`, from every
/// pair of positions along `dim` (exact and overflow-free: `y_j ≥ x_i`).
pub(crate) fn logcumsumexp() -> Derivative {
    derivative("LogcumsumexpBackward0", &[Save::In(0), Save::Out(0)], |c| {
        let (x, y, g) = (c.input(0)?, c.output(0)?, c.grad()?);
        if x.ndim() == 0 {
            c.set(0, g);
            return Ok(());
        }
        let dim = c.int(1);
        let last = |t: &Tensor| {
            o::call(
                "movedim",
                vec![o::value(t), Value::Int(dim), Value::Int(-1)],
                vec![],
            )
        };
        let (xl, yl, gl) = (last(&x)?, last(&y)?, last(&g)?);
        // pairs[..., i, j] = g_j exp(x_i - y_j), kept where j ≥ i.
        let pairs = o::mul(
            &o::unary(
                "exp",
                &o::sub(&o::unsqueeze(&xl, -1)?, &o::unsqueeze(&yl, -2)?)?,
            )?,
            &o::unsqueeze(&gl, -2)?,
        )?;
        let upper = o::call("triu", vec![o::value(&pairs)], vec![])?;
        let d = o::sum(&upper, &[-1], false)?;
        let d = o::call(
            "movedim",
            vec![o::value(&d), Value::Int(-1), Value::Int(dim)],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}
