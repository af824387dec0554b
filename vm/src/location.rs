//! Where in the user's code the interpreter is.

use rustpython_vm::VirtualMachine;

/// `file:line` of the innermost frame of user code (frozen `torch` modules
/// skipped): where the operation running now was written.
pub fn user_location(vm: &VirtualMachine) -> Option<String> {
    let mut frame = vm.current_frame();
    while let Some(f) = frame {
        let path = f.code.source_path().as_str();
        if !(path.starts_with("torch.") || path.starts_with("<frozen") || path == "torch") {
            return Some(format!("{path}:{}", f.f_lineno()));
        }
        frame = f.f_back(vm);
    }
    None
}
