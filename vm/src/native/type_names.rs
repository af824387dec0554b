//! RustPython 0.5 panics when a script reads `__name__` of a static type
//! whose name was never interned (`async_generator_wrapped_value`, reached by
//! walking `object.__subclasses__()`): interning every static type's name
//! when an interpreter starts makes the read answer instead.

use rustpython_vm::builtins::PyType;
use rustpython_vm::types::PyTypeFlags;
use rustpython_vm::{AsObject, PyRef, VirtualMachine};

/// Interns the names of all static types reachable from `object`.
pub(crate) fn intern(vm: &VirtualMachine) {
    let mut pending: Vec<PyRef<PyType>> = vec![vm.ctx.types.object_type.to_owned()];
    let mut seen = std::collections::HashSet::new();
    while let Some(class) = pending.pop() {
        if !seen.insert(class.get_id()) {
            continue;
        }
        if !class.slots.flags.has_feature(PyTypeFlags::HEAPTYPE) {
            let name = class.name().to_string();
            vm.ctx.intern_str(name);
        }
        let subclasses = class.subclasses.read();
        pending.extend(
            subclasses
                .iter()
                .filter_map(|weak| weak.upgrade())
                .filter_map(|sub| sub.downcast::<PyType>().ok()),
        );
    }
}
