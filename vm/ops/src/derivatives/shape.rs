//! Views, joins and copies: gradients reshaped, permuted, summed or
//! placed back.

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Name, derivative};
use crate::value::Value;
use fxvm_tensor::{Result, Tensor};

/// The gradient reshaped to the input's shape (view, reshape, flatten,
/// squeeze, unsqueeze…).
pub(crate) fn reshape(name: impl Into<Name>) -> Derivative {
    derivative(name, &[], |c| {
        let g = o::reshape(&c.grad()?, c.shape(0))?;
        c.set(0, g);
        Ok(())
    })
}

/// The gradient as it is (clone, contiguous, `to` without a change).
pub(crate) fn identity(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = c.grad()?;
        c.set(0, g);
        Ok(())
    })
}

/// `transpose`'s gradient; `name` is the out-of-place op's node or the
/// in-place one's (`TransposeBackward1`).
pub(crate) fn transpose(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = o::transpose(&c.grad()?, c.int(1), c.int(2))?;
        c.set(0, g);
        Ok(())
    })
}

pub(crate) fn t(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let g = c.grad()?;
        let g = if g.ndim() < 2 {
            g
        } else {
            o::transpose(&g, 0, 1)?
        };
        c.set(0, g);
        Ok(())
    })
}

/// `squeeze`'s node by the overload that ran — all dims, one, or a list —
/// out of place (`SqueezeBackward0..2`) or in place (`..3..5`).
pub(crate) fn squeeze(in_place: bool) -> Derivative {
    fn overload(values: &[Value]) -> usize {
        match values.get(1) {
            None | Some(Value::None) => 0,
            Some(Value::Int(_)) => 1,
            Some(_) => 2,
        }
    }
    const NAMES: [&str; 6] = [
        "SqueezeBackward0",
        "SqueezeBackward1",
        "SqueezeBackward2",
        "SqueezeBackward3",
        "SqueezeBackward4",
        "SqueezeBackward5",
    ];
    reshape(if in_place {
        Name::Pick(|v| NAMES[3 + overload(v)])
    } else {
        Name::Pick(|v| NAMES[overload(v)])
    })
}

pub(crate) fn permute() -> Derivative {
    derivative("PermuteBackward0", &[], |c| {
        let n = c.shape(0).len() as i64;
        let dims = c.ints(1);
        let mut inverse = vec![0i64; dims.len()];
        for (i, &d) in dims.iter().enumerate() {
            inverse[(if d < 0 { d + n } else { d }) as usize] = i as i64;
        }
        let g = o::permute(&c.grad()?, &inverse)?;
        c.set(0, g);
        Ok(())
    })
}

/// `expand`: the gradient summed back over the broadcast dims.
pub(crate) fn expand() -> Derivative {
    derivative("ExpandBackward0", &[], |c| {
        let g = o::sum_to(&c.grad()?, c.shape(0))?;
        c.set(0, g);
        Ok(())
    })
}

/// `g` placed at `start..start+len` of dim `dim` of zeros shaped `shape`.
fn place(g: &Tensor, shape: &[usize], dim: usize, start: usize) -> Result<Tensor> {
    let len = g.shape()[dim];
    let mut parts = Vec::new();
    let zeros = |n: usize| {
        let mut s = shape.to_vec();
        s[dim] = n;
        o::zeros(&s, g.dtype())
    };
    if start > 0 {
        parts.push(zeros(start)?);
    }
    parts.push(g.clone());
    if start + len < shape[dim] {
        parts.push(zeros(shape[dim] - start - len)?);
    }
    if parts.len() == 1 {
        return Ok(g.clone());
    }
    o::cat(&parts, dim as i64)
}

fn wrap(d: i64, n: usize) -> usize {
    (if d < 0 { d + n as i64 } else { d }) as usize
}

/// `narrow(input, dim, start, length)`.
pub(crate) fn narrow() -> Derivative {
    derivative("SliceBackward0", &[], |c| {
        let shape = c.shape(0).to_vec();
        let dim = wrap(c.int(1), shape.len());
        let start = c.int(2);
        let start = (if start < 0 {
            start + shape[dim] as i64
        } else {
            start
        }) as usize;
        let g = place(&c.grad()?, &shape, dim, start)?;
        c.set(0, g);
        Ok(())
    })
}

/// `select(input, dim, index)`.
pub(crate) fn select() -> Derivative {
    derivative("SelectBackward0", &[], |c| {
        let shape = c.shape(0).to_vec();
        let dim = wrap(c.int(1), shape.len());
        let i = c.int(2);
        let i = (if i < 0 { i + shape[dim] as i64 } else { i }) as usize;
        let g = o::unsqueeze(&c.grad()?, dim as i64)?;
        let g = place(&g, &shape, dim, i)?;
        c.set(0, g);
        Ok(())
    })
}

/// `cat(tensors, dim)`: each input its slice of the gradient.
pub(crate) fn cat() -> Derivative {
    derivative("CatBackward0", &[], |c| {
        let g = c.grad()?;
        let shapes = c.shapes(0);
        let Some(first) = shapes.iter().find(|s| !(s.len() == 1 && s[0] == 0)) else {
            return Ok(());
        };
        let dim = wrap(c.int(1), first.len());
        let mut start = 0;
        let mut out = Vec::new();
        for s in &shapes {
            if s.len() == 1 && s[0] == 0 && first.len() != 1 {
                out.push(Some(o::zeros(s, g.dtype())?));
                continue;
            }
            out.push(Some(o::narrow(&g, dim as i64, start, s[dim])?));
            start += s[dim];
        }
        c.set_list(0, out);
        Ok(())
    })
}

/// `stack(tensors, dim)`: each input its slice, without the new dim.
pub(crate) fn stack() -> Derivative {
    derivative("StackBackward0", &[], |c| {
        let g = c.grad()?;
        let shapes = c.shapes(0);
        let dim = wrap(c.int(1), shapes.first().map_or(0, Vec::len) + 1);
        let out = (0..shapes.len())
            .map(|i| {
                o::call(
                    "select",
                    vec![
                        crate::value::Value::Tensor(g.clone()),
                        crate::value::Value::Int(dim as i64),
                        crate::value::Value::Int(i as i64),
                    ],
                    vec![],
                )
                .map(Some)
            })
            .collect::<Result<Vec<_>>>()?;
        c.set_list(0, out);
        Ok(())
    })
}

/// Ops returning several pieces along `dim` (`split`, `chunk`, `unbind`):
/// the pieces' gradients (zeros where none came) joined back.
pub(crate) fn pieces(name: &'static str, unbind: bool) -> Derivative {
    derivative(name, &[], move |c| {
        let shape = c.shape(0).to_vec();
        let dim = wrap(c.int(if unbind { 1 } else { 2 }), shape.len());
        let grads: Vec<Tensor> = (0..c.grads.len())
            .map(|n| c.grad_or_zeros(n))
            .collect::<Result<_>>()?;
        let g = if unbind {
            o::call(
                "stack",
                vec![
                    crate::value::Value::Tensors(grads),
                    crate::value::Value::Int(dim as i64),
                ],
                vec![],
            )?
        } else {
            o::cat(&grads, dim as i64)?
        };
        c.set(0, g);
        Ok(())
    })
}
