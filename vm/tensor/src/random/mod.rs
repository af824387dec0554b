//! Random numbers as PyTorch's CPU generator produces them: the engine and
//! its state ([`generator`]), and the in-place fills built on it ([`fill`]).

pub mod fill;
pub mod generator;

pub use generator::Generator;
