//! Products.

use crate::autograd::ops as o;
use crate::autograd::{Derivative, Name, Save, derivative};
use crate::value::Value;

const BOTH: &[Save] = &[Save::In(0), Save::In(1)];

pub(crate) fn mm(name: &'static str) -> Derivative {
    derivative(name, BOTH, |c| {
        let g = c.grad()?;
        if c.needs(0) {
            let d = o::matmul(&g, &o::mt(&c.input(1)?)?)?;
            c.set(0, d);
        }
        if c.needs(1) {
            let d = o::matmul(&o::mt(&c.input(0)?)?, &g)?;
            c.set(1, d);
        }
        Ok(())
    })
}

/// PyTorch's node for a `matmul` of these ranks.
fn matmul_name(values: &[Value]) -> &'static str {
    let rank = |v: &Value| match v {
        Value::Tensor(t) => t.ndim(),
        _ => 0,
    };
    match (rank(&values[0]), rank(&values[1])) {
        (1, 1) => "DotBackward0",
        (2, 1) => "MvBackward0",
        (2, 2) => "MmBackward0",
        _ => "UnsafeViewBackward0",
    }
}

/// PyTorch's node for `linear`: `addmm` on matrices with a bias, `mm`
/// without, a view of the product for more dims.
fn linear_name(values: &[Value]) -> &'static str {
    match (&values[0], &values[2]) {
        (Value::Tensor(t), _) if t.ndim() > 2 => "UnsafeViewBackward0",
        (_, Value::None) => "MmBackward0",
        _ => "AddmmBackward0",
    }
}

/// `matmul` over any ranks: 1-d operands are made matrices, products of
/// stacks broadcast (the engine sums the gradient back to each shape).
pub(crate) fn matmul() -> Derivative {
    derivative(Name::Pick(matmul_name), BOTH, |c| {
        let (a, b, g) = (c.input(0)?, c.input(1)?, c.grad()?);
        let a2 = if a.ndim() == 1 {
            o::unsqueeze(&a, 0)?
        } else {
            a.clone()
        };
        let b2 = if b.ndim() == 1 {
            o::unsqueeze(&b, 1)?
        } else {
            b.clone()
        };
        // The gradient with the dims 1-d operands lost put back.
        let mut g2 = g.clone();
        if a.ndim() == 1 {
            g2 = o::unsqueeze(&g2, if b.ndim() == 1 { 0 } else { -2 })?;
        }
        if b.ndim() == 1 {
            g2 = o::unsqueeze(&g2, -1)?;
        }
        if c.needs(0) {
            let d = o::matmul(&g2, &o::mt(&b2)?)?;
            let d = if a.ndim() == 1 {
                o::sum_to(&d, &[1, a.shape()[0]])?
            } else {
                d
            };
            c.set(0, o::reshape(&o::sum_to(&d, a2.shape())?, a.shape())?);
        }
        if c.needs(1) {
            let d = o::matmul(&o::mt(&a2)?, &g2)?;
            c.set(1, o::reshape(&o::sum_to(&d, b2.shape())?, b.shape())?);
        }
        Ok(())
    })
}

/// `addmm(input, mat1, mat2, beta, alpha)`.
pub(crate) fn addmm() -> Derivative {
    derivative("AddmmBackward0", &[Save::In(1), Save::In(2)], |c| {
        let g = c.grad()?;
        let (beta, alpha) = (c.scalar(3), c.scalar(4));
        if c.needs(0) {
            let d = o::mul_scalar(&g, beta)?;
            c.set(0, d);
        }
        let ga = o::mul_scalar(&g, alpha)?;
        if c.needs(1) {
            let d = o::mm(&ga, &o::mt(&c.input(2)?)?)?;
            c.set(1, d);
        }
        if c.needs(2) {
            let d = o::mm(&o::mt(&c.input(1)?)?, &ga)?;
            c.set(2, d);
        }
        Ok(())
    })
}

/// `linear(input, weight, bias)`: `input @ weight.T + bias` over any
/// leading dims.
pub(crate) fn linear() -> Derivative {
    derivative(Name::Pick(linear_name), &[Save::In(0), Save::In(1)], |c| {
        let g = c.grad()?;
        let outs = *g.shape().last().unwrap_or(&1);
        if c.needs(0) {
            let d = o::matmul(&g, &c.input(1)?)?;
            c.set(0, d);
        }
        if c.needs(1) || c.needs(2) {
            let rows: Vec<usize> = vec![g.numel() / outs.max(1), outs];
            let g2 = o::reshape(&g, &rows)?;
            if c.needs(1) {
                let x = c.input(0)?;
                let ins = *x.shape().last().unwrap_or(&1);
                let x2 = o::reshape(&x, &[x.numel() / ins.max(1), ins])?;
                let d = o::mm(&o::mt(&g2)?, &x2)?;
                c.set(1, d);
            }
            if c.needs(2) {
                let d = o::sum(&g2, &[0], false)?;
                c.set(2, d);
            }
        }
        Ok(())
    })
}
