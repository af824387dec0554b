//! torch.fx in Rust: the graph IR, the tracer, and the `fxvm` command.

pub mod cli;
pub mod diff;
mod fx;
pub mod lint;
mod meta;
mod picture;
mod replay;
mod structure;
mod sym;

use rustpython_vm::Interpreter;

/// The fxvm interpreter: `torch` (from `fxvm-vm`) plus `torch.fx`.
pub fn interpreter(config: &fxvm_vm::Config) -> Interpreter {
    fxvm_vm::build_from(builder(config))
}

/// The interpreter of [`interpreter`] before it is built, for embedders
/// that add init hooks (finish with `fxvm_vm::build_from`).
pub fn builder(config: &fxvm_vm::Config) -> rustpython_vm::InterpreterBuilder {
    let builder = fxvm_vm::builder(config);
    let fx = fx::module_def(&builder.ctx);
    let patches = fxvm_patches::module_def(&builder.ctx);
    let symbolic = sym::module::module_def(&builder.ctx);
    builder
        .add_native_module(fx)
        .add_native_module(patches)
        .add_native_module(symbolic)
        .add_frozen_modules(rustpython_vm::py_freeze!(dir = "../py"))
}
