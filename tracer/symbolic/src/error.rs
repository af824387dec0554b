//! What building or evaluating an expression can fail with; the bindings
//! raise Python's exception of the same name with the same message.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolicError {
    /// Division, modulo or a negative power of zero (ZeroDivisionError).
    ZeroDivision(&'static str),
    /// An integer result past 128 bits (OverflowError).
    Overflow,
    /// A symbol the bindings do not give a value (KeyError in PyTorch's
    /// `evaluate_expr`; a NameError-like message here).
    Unbound(String),
    /// An operation on a value of the wrong kind (TypeError).
    Type(String),
}

pub type Result<T, E = SymbolicError> = std::result::Result<T, E>;

impl fmt::Display for SymbolicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SymbolicError::ZeroDivision(message) => f.write_str(message),
            SymbolicError::Overflow => {
                f.write_str("integer overflow in a symbolic size expression")
            }
            SymbolicError::Unbound(name) => write!(f, "no value for symbol {name}"),
            SymbolicError::Type(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for SymbolicError {}
