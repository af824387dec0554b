//! Native modules registered with the interpreter, and the binding of the
//! tensor core to Python objects.

pub(crate) mod alloc_guard;
pub(crate) mod anomaly;
pub(crate) mod autograd;
pub(crate) mod bind;
pub(crate) mod classes;
pub(crate) mod compile_guard;
pub(crate) mod convert;
pub(crate) mod dtype;
pub(crate) mod generator;
pub(crate) mod guard;
pub(crate) mod index;
pub(crate) mod legacy_new;
pub(crate) mod load;
pub mod module_methods;
pub mod module_state;
pub(crate) mod numpy;
mod numpy_pcg64;
pub(crate) mod ops;
pub(crate) mod regex;
pub(crate) mod tensor;
pub(crate) mod tokenizers;
pub(crate) mod torch_c;
pub(crate) mod type_names;
