//! The fxvm interpreter as the `fxvm` command and embedders get it — the
//! `torch` VM (`fxvm-vm`) with torch.fx (`fxvm-fx`), replay (`fxvm-replay`),
//! symbolic shapes (`fxvm-shapes`), the module patches and the frozen Python
//! of `tracer/py/` — and the command itself (`cli`: run, trace, check, lint).
//!
//! Extending: a new native module is added to `builder` here; a new
//! subcommand is a `cli` module and a `Command` variant.

pub mod cli;
pub mod diff;
mod structure;

use rustpython_vm::Interpreter;

/// The fxvm interpreter: `torch` (from `fxvm-vm`) plus `torch.fx`.
pub fn interpreter(config: &fxvm_vm::Config) -> Interpreter {
    fxvm_vm::build_from(builder(config))
}

/// The interpreter of [`interpreter`] before it is built, for embedders
/// that add init hooks (finish with `fxvm_vm::build_from`).
pub fn builder(config: &fxvm_vm::Config) -> rustpython_vm::InterpreterBuilder {
    let builder = fxvm_vm::builder(config);
    let fx = fxvm_fx::module_def(&builder.ctx);
    let replay = fxvm_replay::module_def(&builder.ctx);
    let patches = fxvm_patches::module_def(&builder.ctx);
    let symbolic = fxvm_shapes::module_def(&builder.ctx);
    builder
        .add_native_module(fx)
        .add_native_module(replay)
        .add_native_module(patches)
        .add_native_module(symbolic)
        .add_frozen_modules(rustpython_vm::py_freeze!(dir = "../py"))
}
