//! Rebuild when any frozen Python source changes: `py_freeze!` reads `py/`
//! at compile time, and cargo cannot see inside a proc-macro's inputs.

use std::path::Path;

fn watch(dir: &Path) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            watch(&path);
        } else if path.extension().is_some_and(|ext| ext == "py") {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
}

fn main() {
    watch(Path::new("py"));
}
