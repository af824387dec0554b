//! Indexing ops: gradients put back where the values came from.

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Save, derivative};
use crate::value::Value;

/// `masked_fill(input, mask, value)`: nothing flows where the mask filled.
pub(crate) fn masked_fill() -> Derivative {
    derivative("MaskedFillBackward0", &[Save::In(1)], |c| {
        let d = o::call(
            "masked_fill",
            vec![
                Value::Tensor(c.grad()?),
                Value::Tensor(c.input(1)?),
                Value::Scalar(fxvm_tensor::Scalar::Int(0)),
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
                Value::Tensor(o::zeros(c.shape(0), g.dtype())),
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
            return Err(fxvm_tensor::TensorError::not_implemented(
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
