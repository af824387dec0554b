//! Compiling what RustPython 0.5's compiler gets wrong, on its own AST and
//! code generator: each fix is an AST rewrite applied only to sources that
//! need it, so every other source keeps RustPython's path unchanged.

mod finally;

use rustpython_vm::builtins::PyCode;
use rustpython_vm::compiler::core::SourceFileBuilder;
use rustpython_vm::compiler::{Mode, ast, codegen, parser};
use rustpython_vm::{PyRef, PyResult, VirtualMachine};

/// The code object for `source` (a module, `exec` mode) when it needs a fix;
/// `None` sends it down RustPython's own path (which also reports any syntax
/// error).
pub(crate) fn compile_fixed(
    vm: &VirtualMachine,
    source: &str,
    filename: &str,
    optimize: Option<u8>,
) -> Option<PyResult<PyRef<PyCode>>> {
    // Only a `finally` body can need the one rewrite so far; most sources
    // have none and are not parsed twice.
    if !source.contains("finally") {
        return None;
    }
    let mut module = parser::parse_module(source).ok()?.into_syntax();
    if !finally::rewrite_module(&mut module.body) {
        return None;
    }
    let mut opts = vm.compile_opts();
    if let Some(optimize) = optimize {
        opts.optimize = optimize;
    }
    let source_file = SourceFileBuilder::new(filename, source).finish();
    let code =
        codegen::compile::compile_top(ast::Mod::Module(module), source_file, Mode::Exec, opts)
            .map(|code| vm.ctx.new_code(code))
            .map_err(|e| vm.new_syntax_error(&e.into(), Some(source)));
    Some(code)
}
