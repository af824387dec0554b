//! The tensor core: storage, layouts, dtypes and kernels. It knows nothing
//! of the Python VM; `fxvm-vm` binds it to `torch.Tensor`.
//!
//! A kernel goes in its family's module under `ops/` with unit tests beside
//! it (against the definition, in f64); an elementwise op is one line of
//! the tables in `ops/elementwise/unary.rs` or `binary.rs`. Failures are
//! `TensorError` variants carrying the op and shapes, turned into
//! PyTorch's exceptions at the binding edge. The op becomes callable once a
//! row of `fxvm-ops` names it.

pub mod alloc;
pub mod autograd;
pub mod buffer;
pub mod bytes;
pub mod cap;
pub mod dtype;
pub mod error;
pub mod format;
pub mod layout;
pub mod ops;
pub mod optim;
pub mod random;
pub mod storage;
#[allow(clippy::module_inception)]
pub mod tensor;
pub mod threads;

pub use dtype::{DType, Scalar};
pub use error::{ErrorKind, Result, TensorError};
pub use tensor::Tensor;
