//! Ops that move elements without computing (flips, rolls, rotations,
//! repeats, diagonals, windows, pixel shuffles): the gradient moved back.

use fxvm_tensor::{Result, Tensor};

use crate::autograd::ops::{self as o, shape};
use crate::autograd::{Derivative, Name, derivative};
use crate::value::Value;

use super::wrap;

/// `flip(input, dims)` (also `fliplr`/`flipud` through it): flipped back.
pub(crate) fn flip() -> Derivative {
    derivative("FlipBackward0", &[], |c| {
        let d = o::call(
            "flip",
            vec![o::value(&c.grad()?), Value::Ints(c.ints(1))],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `fliplr`/`flipud`: a flip of dim 1 or 0.
pub(crate) fn flip_dim(dim: i64) -> Derivative {
    derivative("FlipBackward0", &[], move |c| {
        let d = o::call(
            "flip",
            vec![o::value(&c.grad()?), Value::Ints(vec![dim])],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `roll(input, shifts, dims)`: rolled back.
pub(crate) fn roll() -> Derivative {
    derivative("RollBackward0", &[], |c| {
        let back: Vec<i64> = c.ints(1).iter().map(|s| -s).collect();
        let d = o::call(
            "roll",
            vec![
                o::value(&c.grad()?),
                Value::Ints(back),
                Value::Ints(c.ints(2)),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `rot90(input, k, dims)`: rotated back.
pub(crate) fn rot90() -> Derivative {
    derivative("Rot90Backward0", &[], |c| {
        let d = o::call(
            "rot90",
            vec![
                o::value(&c.grad()?),
                Value::Int(-c.int(1)),
                Value::Ints(c.ints(2)),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `repeat(input, repeats)`: each copy's gradient summed (the gradient
/// viewed as `[r0, s0, r1, s1, …]` and summed over the repeats).
pub(crate) fn repeat() -> Derivative {
    derivative("RepeatBackward0", &[], |c| {
        let reps = c.ints(1);
        let shape = c.shape(0).to_vec();
        let mut padded = vec![1i64; reps.len() - shape.len()];
        padded.extend(shape.iter().map(|&s| s as i64));
        let split: Vec<i64> = reps
            .iter()
            .zip(&padded)
            .flat_map(|(&r, &s)| [r, s])
            .collect();
        let g = shape::reshape(&c.grad()?, &split)?;
        let summed: Vec<i64> = (0..reps.len() as i64).map(|k| 2 * k).collect();
        let d = o::reshape(&o::sum(&g, &summed, false)?, &shape)?;
        c.set(0, d);
        Ok(())
    })
}

/// The gradient of `diagonal(x, offset, d1, d2)` for an `x` of `shape`:
/// `g` embedded as that diagonal, zeros elsewhere.
fn undiagonal(g: &Tensor, shape: &[usize], offset: i64, d1: i64, d2: i64) -> Result<Tensor> {
    let n = shape.len();
    let (mut d1, mut d2, mut offset) = (wrap(d1, n), wrap(d2, n), offset);
    if d1 > d2 {
        (d1, d2, offset) = (d2, d1, -offset);
    }
    let mut out = o::call(
        "diag_embed",
        vec![
            o::value(g),
            Value::Int(offset),
            Value::Int(d1),
            Value::Int(d2),
        ],
        vec![],
    )?;
    // The embedded square is `len + |offset|` on a side: cut or pad to x.
    for d in [d1, d2] {
        let (have, want) = (out.shape()[d as usize], shape[d as usize]);
        if have > want {
            out = o::narrow(&out, d, 0, want)?;
        } else if have < want {
            let mut pad = out.shape().to_vec();
            pad[d as usize] = want - have;
            out = o::cat(&[out.clone(), o::zeros(&pad, g.dtype())?], d)?;
        }
    }
    Ok(out)
}

/// `diagonal(input, offset, dim1, dim2)`.
pub(crate) fn diagonal() -> Derivative {
    derivative("DiagonalBackward0", &[], |c| {
        let d = undiagonal(&c.grad()?, c.shape(0), c.int(1), c.int(2), c.int(3))?;
        c.set(0, d);
        Ok(())
    })
}

/// `diag_embed(input, offset, dim1, dim2)`: the gradient's diagonal.
pub(crate) fn diag_embed() -> Derivative {
    derivative("DiagEmbedBackward0", &[], |c| {
        let d = o::call(
            "diagonal",
            vec![
                o::value(&c.grad()?),
                Value::Int(c.int(1)),
                Value::Int(c.int(2)),
                Value::Int(c.int(3)),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `diag(input, diagonal)`: a vector's matrix (`DiagEmbedBackward0`) or a
/// matrix's diagonal (`DiagonalBackward0_copy`, as PyTorch names it).
pub(crate) fn diag() -> Derivative {
    fn name(values: &[Value]) -> &'static str {
        match &values[0] {
            Value::Tensor(t) if t.ndim() == 1 => "DiagEmbedBackward0",
            _ => "DiagonalBackward0_copy",
        }
    }
    derivative(Name::Pick(name), &[], |c| {
        let (g, offset) = (c.grad()?, c.int(1));
        let d = if c.shape(0).len() == 1 {
            o::call("diagonal", vec![o::value(&g), Value::Int(offset)], vec![])?
        } else {
            undiagonal(&g, c.shape(0), offset, 0, 1)?
        };
        c.set(0, d);
        Ok(())
    })
}

/// `trace(input)`: the gradient on the main diagonal.
pub(crate) fn trace() -> Derivative {
    derivative("TraceBackward0", &[], |c| {
        let g = c.grad()?;
        let shape = c.shape(0).to_vec();
        let n = shape[0].min(shape[1]);
        let line = o::expand(&o::reshape(&g, &[1])?, &[n])?;
        let d = undiagonal(&line, &shape, 0, 0, 1)?;
        c.set(0, d);
        Ok(())
    })
}

/// `Tensor.unfold(dimension, size, step)`: each window's gradient added
/// back where it came from (`index_add` of the windows laid end to end).
pub(crate) fn unfold() -> Derivative {
    derivative("UnfoldBackward0", &[], |c| {
        let shape = c.shape(0).to_vec();
        let g = c.grad()?;
        if shape.is_empty() {
            c.set(0, o::reshape(&g, &[])?);
            return Ok(());
        }
        let dim = wrap(c.int(1), shape.len());
        let (size, step) = (c.int(2), c.int(3));
        let windows = g.shape()[dim as usize] as i64;
        // [.., windows, .., size] → [.., windows · size, ..]
        let moved = o::call(
            "movedim",
            vec![o::value(&g), Value::Int(-1), Value::Int(dim + 1)],
            vec![],
        )?;
        let mut flat: Vec<i64> = moved.shape().iter().map(|&s| s as i64).collect();
        flat[dim as usize] = windows * size;
        flat.remove(dim as usize + 1);
        let laid = shape::reshape(&moved, &flat)?;
        let positions: Vec<i64> = (0..windows)
            .flat_map(|w| (0..size).map(move |j| w * step + j))
            .collect();
        let n = positions.len();
        let d = o::call(
            "index_add",
            vec![
                o::value(&o::zeros(&shape, g.dtype())?),
                Value::Int(dim),
                o::value(&Tensor::from_vec(positions, &[n])),
                o::value(&laid),
            ],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `pixel_shuffle`/`pixel_unshuffle(input, factor)`: the other one.
pub(crate) fn pixel_shuffle(name: &'static str, inverse: &'static str) -> Derivative {
    derivative(name, &[], move |c| {
        let d = o::call(
            inverse,
            vec![o::value(&c.grad()?), Value::Int(c.int(1))],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `channel_shuffle(input, groups)`: shuffled back (`C / groups` groups).
pub(crate) fn channel_shuffle(name: &'static str) -> Derivative {
    derivative(name, &[], |c| {
        let channels = c.shape(0)[1] as i64;
        let groups = channels / c.int(1).max(1);
        let d = o::call(
            "channel_shuffle",
            vec![o::value(&c.grad()?), Value::Int(groups)],
            vec![],
        )?;
        c.set(0, d);
        Ok(())
    })
}

/// `block_diag(tensors)`: each block's part of the gradient.
pub(crate) fn block_diag() -> Derivative {
    derivative("BlockDiagBackward0", &[], |c| {
        let g = c.grad()?;
        let (mut r, mut col) = (0, 0);
        let mut grads = Vec::new();
        for s in c.shapes(0) {
            let (h, w) = match s.as_slice() {
                [] => (1, 1),
                [n] => (1, *n),
                [h, w] => (*h, *w),
                _ => unreachable!("block_diag takes tensors of at most 2 dims"),
            };
            let part = o::narrow(&o::narrow(&g, 0, r, h)?, 1, col, w)?;
            grads.push(Some(o::reshape(&part, &s)?));
            (r, col) = (r + h, col + w);
        }
        c.set_list(0, grads);
        Ok(())
    })
}
