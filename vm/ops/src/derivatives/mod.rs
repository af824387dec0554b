//! Derivative formulas, by family: each is attached to its row in
//! `table/` (`op(..).grad(..)`), written in registry ops (see
//! `autograd::ops`) so that gradients of gradients come from the same
//! formulas.

pub(crate) mod activation;
pub(crate) mod conv;
pub(crate) mod decompositions;
pub(crate) mod einsum;
pub(crate) mod elementwise;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod linalg;
pub(crate) mod loss;
pub(crate) mod nn;
pub(crate) mod norm;
pub(crate) mod pointwise;
pub(crate) mod reduce;
pub(crate) mod resample;
pub(crate) mod rnn;
pub(crate) mod select;
pub(crate) mod shape;

/// A dim counted from the end made non-negative (a 0-d tensor's dims
/// count as one).
pub(crate) fn wrap(d: i64, n: usize) -> i64 {
    if d < 0 { d + n.max(1) as i64 } else { d }
}
