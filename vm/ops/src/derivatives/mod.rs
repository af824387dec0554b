//! Derivative formulas, by family: each is attached to its row in
//! `table/` (`op(..).grad(..)`), written in registry ops (see
//! `autograd::ops`) so that gradients of gradients come from the same
//! formulas.

pub(crate) mod activation;
pub(crate) mod conv;
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
