//! Building the interpreter: stdlib, the frozen `torch` package, native modules.

use rustpython::InterpreterBuilderExt;
use rustpython_vm::{Interpreter, InterpreterBuilder, Settings};

/// How the interpreter is set up for one run.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `sys.argv`; by convention `argv[0]` names the script.
    pub argv: Vec<String>,
    /// Entries placed first on `sys.path`, in order.
    pub path: Vec<String>,
    /// Leave SIGINT to the host instead of raising `KeyboardInterrupt`.
    pub no_signal_handlers: bool,
    /// Cache compiled modules in `__pycache__` beside their sources, as
    /// CPython does (unless `PYTHONDONTWRITEBYTECODE` is set); caches are
    /// read either way.
    pub write_bytecode: bool,
}

/// Allocations of tracked objects between young collections (see
/// [`build_from`]).
const YOUNG_COLLECTION_THRESHOLD: u32 = 10_000;

/// Collections of generation 1 between full collections (CPython's
/// `threshold2`; RustPython leaves it 0), see [`crate::collector`].
const FULL_COLLECTION_AFTER: u32 = 10;

/// Builds an interpreter with the standard library and the `torch` package.
pub fn build(config: &Config) -> Interpreter {
    build_from(builder(config))
}

/// Builds the interpreter of a [`builder`] (with whatever the caller added)
/// and puts fxvm's guards on the builtins that compile source text and on
/// those that size a buffer from an argument.
pub fn build_from(builder: InterpreterBuilder) -> Interpreter {
    let interp = builder.build();
    // Each young collection of RustPython's collector hashes every young
    // object and clears the method cache: a fixed cost that its default
    // threshold (2,000 allocations) paid several times per model trace. At
    // 10,000, the mean trace of a mobilenet_v2 took 7.9 → 6.7 ms and of an
    // EfficientNet-b0 15 → 10.4 ms; cycles are still collected unprompted.
    rustpython_vm::gc_state::gc_state().set_threshold(
        YOUNG_COLLECTION_THRESHOLD,
        None,
        Some(FULL_COLLECTION_AFTER),
    );
    interp.enter(crate::native::type_names::intern);
    interp.enter(crate::native::alloc_guard::install);
    interp
        .enter(crate::policy::guard_shared)
        .expect("_io.FileIO and type.__subclasses__ exist");
    interp
        .enter(crate::native::compile_guard::install)
        .expect("the builtins module has compile, exec and eval");
    interp
        .enter(|vm| {
            let tag = vm.ctx.new_str(crate::compiler::cache_tag());
            vm.sys_module
                .get_attr("implementation", vm)?
                .set_attr("cache_tag", tag, vm)
        })
        .expect("sys.implementation is a namespace");
    interp
        .enter(|vm| vm.import("_fxvm_import", 0).map(drop))
        .expect("the frozen _fxvm_import module installs its finder");
    interp
        .enter(|vm| vm.import("_fxvm_stdlib", 0).map(drop))
        .expect("the frozen _fxvm_stdlib module loads");
    interp
}

/// The interpreter of [`build`], before it is built, so that other crates can
/// add their native modules and frozen packages (the tracer adds `torch.fx`).
pub fn builder(config: &Config) -> InterpreterBuilder {
    let mut settings = Settings::default();
    settings.argv = config.argv.clone();
    settings.path_list = config.path.clone();
    settings.install_signal_handlers = !config.no_signal_handlers;
    // fxvm has no site-packages; skipping `site` saves start-up time.
    settings.import_site = false;
    settings.user_site_directory = false;
    // Compiling a large package (pytest, transformers) costs more on every
    // import than reading its cached code objects.
    settings.write_bytecode = config.write_bytecode
        && std::env::var_os("PYTHONDONTWRITEBYTECODE").is_none_or(|v| v.is_empty());
    // Text files are UTF-8 unless told otherwise, as CPython in a UTF-8 or C
    // locale (PEP 538/540) and by default from 3.15 (PEP 686). RustPython's
    // "unset" (-1) reports UTF-8 mode in `sys.flags` yet decodes `open()` as
    // ASCII, so it is set outright.
    settings.utf8_mode = 1;

    crate::native::guard::install_hook();
    let builder = Interpreter::builder(settings).init_stdlib();
    let torch_c = crate::native::torch_c::module_def(&builder.ctx);
    let autograd = crate::native::autograd::module_def(&builder.ctx);
    let numpy = crate::native::numpy::module_def(&builder.ctx);
    let regex = crate::native::regex::module_def(&builder.ctx);
    let tokenizers = crate::native::tokenizers::module_def(&builder.ctx);
    builder
        .add_native_module(torch_c)
        .add_native_module(autograd)
        .add_native_module(numpy)
        .add_native_module(regex)
        .add_native_module(tokenizers)
        .add_frozen_modules(rustpython_vm::py_freeze!(dir = "../py"))
}
