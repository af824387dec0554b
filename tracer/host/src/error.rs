//! What a host call can fail with: a Python exception (its type, message
//! and traceback text), the time budget running out, or a bad value.

use std::fmt;

/// The kind of a host error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The script raised; the exception's class name (`ValueError`, …).
    Python(String),
    /// The script ran past the host's time budget and was stopped.
    TimeLimit,
    /// A value could not cross between Rust and Python (an int past i64 …).
    Conversion,
    /// A script file could not be read.
    Io,
}

/// A host error. `traceback` holds the Python traceback text (with the
/// script's file and line) when there is one.
#[derive(Debug, Clone)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub traceback: String,
}

impl Error {
    /// An error raised on the Rust side (no traceback).
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            traceback: String::new(),
        }
    }

    pub(crate) fn conversion(message: impl Into<String>) -> Error {
        Error::new(ErrorKind::Conversion, message)
    }

    /// The Python exception class name, when the script raised.
    pub fn exception_type(&self) -> Option<&str> {
        match &self.kind {
            ErrorKind::Python(name) => Some(name),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Python(name) if self.message.is_empty() => write!(f, "{name}"),
            ErrorKind::Python(name) => write!(f, "{name}: {}", self.message),
            ErrorKind::TimeLimit => write!(f, "time limit exceeded: {}", self.message),
            ErrorKind::Conversion | ErrorKind::Io => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
