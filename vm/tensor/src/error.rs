//! The one error type of the tensor core. Messages follow PyTorch's wording;
//! [`TensorError::kind`] says which Python exception carries it.

use std::fmt;

use super::dtype::DType;

/// The Python exception class an error surfaces as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Runtime,
    Index,
    Value,
    NotImplemented,
    Type,
    /// `torch.linalg.LinAlgError` (a RuntimeError): singular or
    /// non-positive-definite input.
    LinAlg,
    /// `MemoryError`: an embedding host's tensor-memory cap.
    Memory,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TensorError {
    /// Two shapes that do not broadcast, at the first clashing dimension.
    Broadcast {
        lhs: Vec<usize>,
        rhs: Vec<usize>,
        dim: usize,
    },
    /// A `dim` argument outside `[-ndim, ndim - 1]`.
    DimOutOfRange { dim: i64, ndim: usize },
    /// A dimension of a 0-dim tensor, which has none.
    NoDims { dim: i64 },
    /// An index outside a dimension.
    IndexOutOfRange { index: i64, dim: usize, size: usize },
    /// Matrix operands whose inner sizes differ.
    MatmulShape { lhs: Vec<usize>, rhs: Vec<usize> },
    /// A target shape whose size differs from the input's.
    InvalidShape { shape: Vec<i64>, numel: usize },
    /// `view` of strides that cannot be reinterpreted.
    ViewStride,
    /// An operand's dtype that the op does not take.
    DType {
        op: &'static str,
        dtype: DType,
        expected: &'static str,
    },
    /// An allocation the system refused (or that no machine could satisfy).
    OutOfMemory { bytes: usize },
    /// An allocation that would pass an embedding host's tensor-memory cap.
    MemoryCap {
        bytes: usize,
        live: usize,
        limit: usize,
    },
    /// A new tensor's sizes whose element count overflows int64.
    SizeOverflow { sizes: Vec<usize> },
    /// A view whose element count overflows int64.
    NumelOverflow,
    /// A value outside the range of the element type it is stored as
    /// (`type_name` as PyTorch spells it there: `int32` or C++'s `int`).
    ValueOverflow { type_name: &'static str },
    /// A kernel without an implementation for `dtype` (PyTorch's
    /// `"abs_cpu" not implemented for 'Bool'`, a NotImplementedError).
    NotImplementedFor { kernel: String, dtype: DType },
    /// Any other misuse PyTorch reports as a RuntimeError.
    Runtime { op: &'static str, message: String },
    /// Bad arguments PyTorch reports as a ValueError.
    Value { op: &'static str, message: String },
    /// Misuse PyTorch reports as an IndexError or NotImplementedError.
    Other { kind: ErrorKind, message: String },
    /// An in-place op whose result would need a wider dtype than its input's.
    InplaceCast { from: DType, to: DType },
    /// A write into a tensor whose elements share memory (an expanded view).
    InternalOverlap,
    /// An in-place op whose result is broadcast past its input's shape.
    InplaceShape {
        output: Vec<usize>,
        broadcast: Vec<usize>,
    },
    /// A loss whose target's size differs from its input's (a ValueError).
    TargetSize {
        op: &'static str,
        target: Vec<usize>,
        input: Vec<usize>,
    },
    /// An argument that does not fit the op's declaration (a TypeError).
    Argument { op: &'static str, message: String },
    /// An optimizer's gradient or state tensor (`what`) whose shape or
    /// dtype differs from its parameter's (a state dict of another model).
    OptimizerState {
        op: &'static str,
        index: usize,
        what: &'static str,
        param: (Vec<usize>, DType),
        found: (Vec<usize>, DType),
    },
    /// A tensor saved for backward and modified in place since: which one
    /// (`origin`: the node and output it came from), at which version.
    SavedModified {
        dtype: DType,
        shape: Vec<usize>,
        origin: Option<(String, usize)>,
        version: u64,
        expected: u64,
    },
    /// A second backward through a graph whose saved tensors were freed.
    SavedFreed,
    /// An in-place op on a leaf that requires grad.
    LeafInPlace,
    /// An in-place op on a view of a leaf that requires grad.
    LeafViewInPlace,
    /// An error raised by a callback of the embedding program (a Python
    /// hook or `autograd.Function`); the program keeps the error itself.
    Callback,
    /// A backward node failed with anomaly detection on: the node's name
    /// and the forward call that made it (when recorded), around the error.
    Anomaly {
        node: String,
        trace: Option<String>,
        error: Box<TensorError>,
    },
}

pub type Result<T, E = TensorError> = std::result::Result<T, E>;

impl TensorError {
    pub fn kind(&self) -> ErrorKind {
        match self {
            TensorError::DimOutOfRange { .. }
            | TensorError::IndexOutOfRange { .. }
            | TensorError::NoDims { .. } => ErrorKind::Index,
            TensorError::Value { .. } | TensorError::TargetSize { .. } => ErrorKind::Value,
            TensorError::NotImplementedFor { .. } => ErrorKind::NotImplemented,
            TensorError::Other { kind, .. } => *kind,
            TensorError::Argument { .. } => ErrorKind::Type,
            TensorError::MemoryCap { .. } => ErrorKind::Memory,
            TensorError::Anomaly { error, .. } => error.kind(),
            _ => ErrorKind::Runtime,
        }
    }

    pub fn runtime(op: &'static str, message: impl Into<String>) -> Self {
        TensorError::Runtime {
            op,
            message: message.into(),
        }
    }

    pub fn value(op: &'static str, message: impl Into<String>) -> Self {
        TensorError::Value {
            op,
            message: message.into(),
        }
    }

    pub fn not_implemented(message: impl Into<String>) -> Self {
        TensorError::Other {
            kind: ErrorKind::NotImplemented,
            message: message.into(),
        }
    }

    pub fn not_implemented_for(kernel: impl Into<String>, dtype: DType) -> Self {
        TensorError::NotImplementedFor {
            kernel: kernel.into(),
            dtype,
        }
    }

    pub fn linalg(message: impl Into<String>) -> Self {
        TensorError::Other {
            kind: ErrorKind::LinAlg,
            message: message.into(),
        }
    }

    pub fn index_error(message: impl Into<String>) -> Self {
        TensorError::Other {
            kind: ErrorKind::Index,
            message: message.into(),
        }
    }

    /// The broadcast error for `lhs` against `rhs`, naming the first dimension that clashes.
    pub fn broadcast(lhs: &[usize], rhs: &[usize]) -> Self {
        let n = lhs.len().max(rhs.len());
        let at = |s: &[usize], i: usize| {
            if i < n - s.len() {
                1
            } else {
                s[i - (n - s.len())]
            }
        };
        let dim = (0..n)
            .rev()
            .find(|&i| at(lhs, i) != at(rhs, i) && at(lhs, i) != 1 && at(rhs, i) != 1)
            .unwrap_or(0);
        TensorError::Broadcast {
            lhs: lhs.to_vec(),
            rhs: rhs.to_vec(),
            dim,
        }
    }
}

/// A shape as Python prints a `torch.Size`.
pub fn torch_size(shape: &[usize]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("torch.Size([{}])", dims.join(", "))
}

fn size_list(shape: &[usize]) -> String {
    shape
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

impl fmt::Display for TensorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TensorError::Broadcast { lhs, rhs, dim } => {
                let n = lhs.len().max(rhs.len());
                let a = lhs[*dim - (n - lhs.len())];
                let b = rhs[*dim - (n - rhs.len())];
                write!(
                    f,
                    "The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {dim}"
                )
            }
            TensorError::DimOutOfRange { dim, ndim } => {
                let n = (*ndim).max(1) as i64;
                write!(
                    f,
                    "Dimension out of range (expected to be in range of [{}, {}], but got {dim})",
                    -n,
                    n - 1
                )
            }
            TensorError::NoDims { dim } => write!(
                f,
                "Dimension specified as {dim} but tensor has no dimensions"
            ),
            TensorError::IndexOutOfRange { index, dim, size } => {
                write!(
                    f,
                    "index {index} is out of bounds for dimension {dim} with size {size}"
                )
            }
            TensorError::MatmulShape { lhs, rhs } => {
                write!(
                    f,
                    "mm: mat1 and mat2 shapes cannot be multiplied ({} and {})",
                    size_list(lhs),
                    size_list(rhs)
                )
            }
            TensorError::InvalidShape { shape, numel } => {
                let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
                write!(
                    f,
                    "shape '[{}]' is invalid for input of size {numel}",
                    dims.join(", ")
                )
            }
            TensorError::ViewStride => write!(
                f,
                "view size is not compatible with input tensor's size and stride (at least one dimension spans \
                 across two contiguous subspaces). Use .reshape(...) instead."
            ),
            TensorError::DType {
                op,
                dtype,
                expected,
            } => {
                write!(
                    f,
                    "{op}(): expected {expected} but got {}",
                    legacy_name(*dtype)
                )
            }
            TensorError::OutOfMemory { bytes } => write!(
                f,
                "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {bytes} bytes. Error code 12 (Cannot allocate memory)"
            ),
            TensorError::MemoryCap { bytes, live, limit } => write!(
                f,
                "tensor memory cap: allocating {bytes} bytes with {live} in use would pass the host's limit of {limit} bytes"
            ),
            TensorError::SizeOverflow { sizes } => write!(
                f,
                "Storage size calculation overflowed with sizes={sizes:?}"
            ),
            TensorError::NumelOverflow => f.write_str("numel: integer multiplication overflow"),
            TensorError::ValueOverflow { type_name } => {
                write!(
                    f,
                    "value cannot be converted to type {type_name} without overflow"
                )
            }
            TensorError::NotImplementedFor { kernel, dtype } => write!(
                f,
                "\"{kernel}\" not implemented for '{}'",
                legacy_name(*dtype)
            ),
            TensorError::Runtime { message, .. } | TensorError::Value { message, .. } => {
                f.write_str(message)
            }
            TensorError::Other { message, .. } => f.write_str(message),
            TensorError::InternalOverlap => f.write_str(
                "unsupported operation: more than one element of the written-to tensor refers to a \
                 single memory location. Please clone() the tensor before performing the operation.",
            ),
            TensorError::InplaceCast { from, to } => write!(
                f,
                "result type {} can't be cast to the desired output type {}",
                legacy_name(*from),
                legacy_name(*to)
            ),
            TensorError::InplaceShape { output, broadcast } => write!(
                f,
                "output with shape {output:?} doesn't match the broadcast shape {broadcast:?}"
            ),
            TensorError::TargetSize { op, target, input } => {
                let (target, input) = (torch_size(target), torch_size(input));
                if *op == "binary_cross_entropy" {
                    write!(
                        f,
                        "Using a target size ({target}) that is different to the input size ({input}) is deprecated. Please ensure they have the same size."
                    )
                } else {
                    write!(
                        f,
                        "Target size ({target}) must be the same as input size ({input})"
                    )
                }
            }
            TensorError::Argument { op, message } => write!(f, "{op}(): {message}"),
            TensorError::OptimizerState {
                op,
                index,
                what,
                param,
                found,
            } => write!(
                f,
                "{op}: the {what} of parameter {index} is a {} tensor of size {}, but the parameter is a {} tensor of size {}",
                found.1.name(),
                torch_size(&found.0),
                param.1.name(),
                torch_size(&param.0)
            ),
            TensorError::SavedModified {
                dtype,
                shape,
                origin,
                version,
                expected,
            } => {
                // PyTorch names the node without its `Backward0` suffix.
                let which = match origin {
                    Some((node, n)) => {
                        let op = node
                            .rfind("Backward")
                            .map_or(node.as_str(), |i| &node[..i]);
                        format!(", which is output {n} of {op},")
                    }
                    None => String::new(),
                };
                write!(
                    f,
                    "one of the variables needed for gradient computation has been modified by an inplace operation: [torch.{}Tensor {shape:?}]{which} is at version {version}; expected version {expected} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).",
                    legacy_name(*dtype)
                )
            }
            TensorError::SavedFreed => f.write_str(
                "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
            ),
            TensorError::LeafInPlace => f.write_str(
                "a leaf Variable that requires grad is being used in an in-place operation.",
            ),
            TensorError::LeafViewInPlace => f.write_str(
                "a view of a leaf Variable that requires grad is being used in an in-place operation.",
            ),
            TensorError::Callback => f.write_str("an error raised by a callback"),
            TensorError::Anomaly { error, .. } => error.fmt(f),
        }
    }
}

impl std::error::Error for TensorError {}

/// PyTorch's scalar-type names in error messages (`Float`, `Long`, …).
pub fn legacy_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "Bool",
        DType::U8 => "Byte",
        DType::I8 => "Char",
        DType::I16 => "Short",
        DType::F16 => "Half",
        DType::BF16 => "BFloat16",
        DType::I32 => "Int",
        DType::I64 => "Long",
        DType::F32 => "Float",
        DType::F64 => "Double",
    }
}
