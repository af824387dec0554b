//! `torch._C`: the native half of the frozen `torch` package.

pub(crate) use _c::module_def;

#[rustpython_vm::pymodule(name = "torch._C")]
mod _c {
    /// The fxvm release that built this module, for `torch.version.fxvm`.
    #[pyattr(name = "_fxvm_version")]
    const FXVM_VERSION: &str = env!("CARGO_PKG_VERSION");
}
