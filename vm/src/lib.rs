//! The fxvm interpreter: an embedded RustPython VM with a frozen `torch`
//! package whose tensor operations are native Rust.
//!
//! [`Config`] + [`build`] make the one interpreter that the CLI, the tests and
//! embedders share; [`script`] runs user code in it the way `python` would.
//!
//! A layer is frozen Python under `vm/py/torch/nn/modules/` calling
//! `torch.nn.functional`, whose ops come from `fxvm-ops` rows (no binding
//! code per op); a native module is a file under `native/` added to the
//! builder in `interp.rs`.

pub mod binding;
pub mod collector;
mod compiler;
mod interp;
pub mod location;
mod native;
pub mod nesting;
pub mod policy;
pub mod script;
pub mod text;

pub use fxvm_tensor as tensor;
pub use interp::{Config, build, build_from, builder};
pub use native::module_methods::ANSWERS_REGISTERED;
pub use native::module_state;
pub use rustpython_vm as py;
