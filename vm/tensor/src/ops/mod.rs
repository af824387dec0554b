//! Tensor operations, grouped by kind. Each op is declared once, as a row of
//! its group's table, and every binding is generated from those rows.

pub mod activation_grad;
pub mod attention;
pub mod bag;
pub mod bn_fold;
pub mod conv;
pub mod create;
pub mod ctc;
pub mod dense;
pub mod distance;
pub mod einsum;
pub mod elementwise;
pub mod extremum;
mod fastmath;
pub mod fractional_pool;
pub mod gamma;
pub mod grid;
pub mod index;
pub mod index_dim;
pub(crate) mod lanes;
pub mod linalg;
pub mod margin;
pub mod nn;
pub mod norm;
mod norm_rows;
pub mod pool;
pub mod pool_backward;
mod pool_windows;
pub mod products;
pub mod qr;
pub mod rearrange;
pub mod reduce;
pub mod resample;
pub mod rnn;
pub mod scan;
pub mod search;
pub mod shape;
mod skinny;
pub mod sort;
pub(crate) mod strided;
pub mod subscript;
pub mod unique;

/// Below this many elements a kernel runs on one thread: a hand-off to
/// the pool costs more than the work.
pub(crate) const PARALLEL_MIN: usize = 1 << 15;

/// Rows of `len` elements a task of a row-wise kernel takes: enough to be
/// worth a thread (at least one).
pub(crate) fn rows_per_task(len: usize) -> usize {
    PARALLEL_MIN.div_ceil(len.max(1)).max(1)
}
