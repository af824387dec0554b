//! Symbolic shapes under the VM: `torch._C._symbolic` — `SymExpr`, a Python
//! handle on an `fxvm-symbolic` expression (what `SymInt`/`SymFloat`/
//! `SymBool` and `ShapeEnv` are built on), and shape inference of a
//! registry op on symbolic inputs by the op's own shape rule.
//!
//! Extending: a new op needs no code here — its registry row's shape rule
//! (`fxvm_ops::meta`) is what `infer` runs.

mod meta;
mod sym;

pub use meta::fake_torch_function;

/// The module definition to register with an interpreter builder.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    sym::module::module_def(ctx)
}
