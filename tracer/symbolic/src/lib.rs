//! Symbolic size expressions, the engine under `torch.SymInt`,
//! `torch.SymFloat` and `torch.SymBool`: expressions are built through
//! constructors that keep them canonical (like terms merged, constants
//! folded, PyTorch's `FloorDiv`/`Mod`/`TrueDiv` rules applied), evaluated
//! under bindings of their symbols with Python's semantics, and printed as
//! PyTorch prints them (`2*s0 + 1`, `(s0//2)`, `Mod(s0, 3)`).

mod error;
mod eval;
mod expr;
mod logic;
mod monomial;
mod number;
mod print;
mod range;

pub use error::{Result, SymbolicError};
pub use eval::Value;
pub use expr::{Expr, Node, Rounding};
pub use logic::Relation;
pub use number::Number;
pub use range::Range;
