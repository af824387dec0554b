//! What a host call can fail with: a Python exception (its type, message
//! and traceback text), the time budget running out, or a bad value.

use std::fmt;

/// The class of a Python exception a script raised, as data: its name and
/// the classes it derives from, so a host can match a family of errors
/// (`KeyError` and `IndexError` are both a `LookupError`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExceptionClass {
    /// The class's name (`KeyError`, `TraceError`).
    pub name: String,
    /// The class and its bases in method resolution order, each by its
    /// qualified name — builtins by name alone (`KeyError`, `LookupError`,
    /// `Exception`, `BaseException`, `object`), others with their module
    /// (`torch.fx.proxy.TraceError`).
    pub mro: Vec<String>,
}

impl ExceptionClass {
    /// Whether the class is, or derives from, the class named `name` (as
    /// in `mro`: `"LookupError"`, `"torch.fx.proxy.TraceError"`).
    pub fn is_a(&self, name: &str) -> bool {
        self.mro.iter().any(|c| c == name)
    }
}

/// The kind of a host error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// The script raised an exception of this class.
    Python(ExceptionClass),
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

    /// The Python exception's class name, when the script raised.
    pub fn exception_type(&self) -> Option<&str> {
        self.exception_class().map(|c| c.name.as_str())
    }

    /// The Python exception's class, when the script raised.
    pub fn exception_class(&self) -> Option<&ExceptionClass> {
        match &self.kind {
            ErrorKind::Python(class) => Some(class),
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ErrorKind::Python(class) if self.message.is_empty() => write!(f, "{}", class.name),
            ErrorKind::Python(class) => write!(f, "{}: {}", class.name, self.message),
            ErrorKind::TimeLimit => write!(f, "time limit exceeded: {}", self.message),
            ErrorKind::Conversion | ErrorKind::Io => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
