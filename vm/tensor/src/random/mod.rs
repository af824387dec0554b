//! Random numbers as PyTorch's CPU generator produces them: the engine and
//! its state ([`mt19937`], [`generator`]), the in-place fills built on it ([`fill`]), and
//! sampling from given weights ([`multinomial`]).

pub mod fill;
pub mod generator;
pub mod mt19937;
pub mod multinomial;

pub use generator::Generator;
pub use mt19937::Mt19937;
