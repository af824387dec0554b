//! The tensor core: storage, layouts, dtypes and kernels. It knows nothing
//! of the Python VM; `fxvm-vm` binds it to `torch.Tensor`.

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
