//! Tensor operations, grouped by kind. Each op is declared once, as a row of
//! its group's table, and every binding is generated from those rows.

pub mod elementwise;
pub mod reduce;
pub mod shape;
pub mod linalg;
pub mod index;
pub mod create;
pub mod conv;
pub mod pool;
pub mod resample;
pub mod nn;
pub mod einsum;
mod fastmath;
