//! Elementwise unary and binary ops with broadcasting and type promotion.
//!
//! `unary.rs` and `binary.rs` hold the op tables (adding an elementwise op
//! is one line there) and their kernels; `special.rs` the scalar functions
//! they are made of; `build.rs` the output buffers every kernel writes.

mod binary;
mod build;
mod special;
#[cfg(test)]
mod tests;
mod unary;

pub use binary::{Arg, Binary, binary, binary_, clamp, where_, zip_map};
pub use build::{build, build_rows, convert, copied, map};
pub use special::FloatExt;
pub(crate) use special::sigmoid;
pub use unary::{Unary, round_decimals, unary, unary_};
