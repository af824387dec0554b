//! Compiling what RustPython 0.5's compiler gets wrong, on its own AST and
//! code generator: each fix applies only to the sources (or `ast` trees)
//! that need it, so everything else keeps RustPython's path unchanged.
//!
//! - [`finally`]: scopes in a `finally` body that a jump leaves through;
//! - [`from_ast`]: `compile(tree)` keeping the tree's line numbers.

mod finally;
mod from_ast;

use rustpython_vm::builtins::PyCode;
use rustpython_vm::compiler::core::SourceFileBuilder;
use rustpython_vm::compiler::{Mode, ast, codegen, parser};
use rustpython_vm::{PyObjectRef, PyRef, PyResult, VirtualMachine};

/// The tag of fxvm's cached bytecode (`__pycache__/m.fxvm-0.1.0-…pyc`, apart
/// from CPython's own files): fxvm's version and a digest of the mends that
/// shape compiled code, so a cache written before a mend changed is never
/// read after it. RustPython's magic number covers its code generator.
pub fn cache_tag() -> String {
    const MENDS: [&str; 2] = [include_str!("mod.rs"), include_str!("finally.rs")];
    // FNV-1a: a stable digest with no dependency.
    let digest = MENDS
        .iter()
        .flat_map(|text| text.bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
    format!("fxvm-{}-{:08x}", env!("CARGO_PKG_VERSION"), digest as u32)
}

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
    Some(generate(vm, module, source, filename, optimize))
}

/// The code object for an `ast.Module` with its nodes' positions (RustPython
/// compiles every node at line 1); `None` for a tree the converter does not
/// cover, which RustPython's own `compile` then takes. The tree must have
/// passed RustPython's validation.
pub(crate) fn compile_tree(
    vm: &VirtualMachine,
    tree: &PyObjectRef,
    filename: &str,
    optimize: Option<u8>,
) -> Option<PyResult<PyRef<PyCode>>> {
    let (mut module, text) = from_ast::module(vm, tree).ok()?;
    finally::rewrite_module(&mut module.body);
    Some(generate(vm, module, &text, filename, optimize))
}

fn generate(
    vm: &VirtualMachine,
    module: ast::ModModule,
    source: &str,
    filename: &str,
    optimize: Option<u8>,
) -> PyResult<PyRef<PyCode>> {
    let mut opts = vm.compile_opts();
    if let Some(optimize) = optimize {
        opts.optimize = optimize;
    }
    let source_file = SourceFileBuilder::new(filename, source).finish();
    codegen::compile::compile_top(ast::Mod::Module(module), source_file, Mode::Exec, opts)
        .map(|code| vm.ctx.new_code(code))
        .map_err(|e| vm.new_syntax_error(&e.into(), Some(source)))
}
