//! `Wrappers`: the autowrap wrappers made so far, by place and function.
//! Every trace patches the same globals (each public function of `math`, a
//! script's wrapped helpers) with the same wrappers; making or finding one
//! through a Python call, and checking each global for the "already
//! patched" mark by attribute lookup, was a fifth of tracing an empty
//! module. The table keeps, per (globals dict, name, function), the
//! function and its wrapper, so a trace finds them without Python.

use std::collections::HashMap;

use rustpython_vm::builtins::{PyStrRef, PyType};
use rustpython_vm::common::lock::PyMutex;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::types::Constructor;
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

struct Made {
    /// Held so that its id cannot be reused by another function.
    function: PyObjectRef,
    /// Held for the same reason, for the dict's id.
    place: PyObjectRef,
    wrapper: PyObjectRef,
}

/// (place id, name as WTF-8 bytes, function id).
type Key = (usize, Vec<u8>, usize);

#[pyclass(
    module = "torch._C._fx_patches",
    name = "Wrappers",
    traverse = "manual"
)]
#[derive(PyPayload, Default)]
pub(crate) struct Wrappers {
    made: PyMutex<HashMap<Key, Made>>,
}

// SAFETY: `traverse` visits each object the table owns exactly once (each
// entry's function, place and wrapper), and `clear` moves all of them out.
unsafe impl Traverse for Wrappers {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        // Nothing else holds the lock during a collection; if something
        // does, skipping only delays freeing.
        let Some(made) = self.made.try_lock() else {
            return;
        };
        for m in made.values() {
            m.function.traverse(f);
            m.place.traverse(f);
            m.wrapper.traverse(f);
        }
    }

    fn clear(&mut self, out: &mut Vec<PyObjectRef>) {
        for (_, m) in self.made.get_mut().drain() {
            out.extend([m.function, m.place, m.wrapper]);
        }
    }
}

impl std::fmt::Debug for Wrappers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Wrappers({})", self.made.lock().len())
    }
}

impl Constructor for Wrappers {
    type Args = FuncArgs;

    fn py_new(_cls: &Py<PyType>, _args: FuncArgs, _vm: &VirtualMachine) -> PyResult<Self> {
        Ok(Wrappers::default())
    }
}

impl Wrappers {
    /// The wrapper of `function` as global `name` of `place`, made by
    /// `make(function, place, name)` the first time; `mark` is set on a
    /// new wrapper (the patcher's "already patched" flag).
    pub(crate) fn get_or_make(
        &self,
        place: &PyObjectRef,
        name: &PyStrRef,
        function: &PyObjectRef,
        make: &PyObjectRef,
        mark: (&'static str, bool),
        vm: &VirtualMachine,
    ) -> PyResult<PyObjectRef> {
        let key = (
            place.get_id(),
            name.as_wtf8().as_bytes().to_vec(),
            function.get_id(),
        );
        if let Some(m) = self.made.lock().get(&key) {
            return Ok(m.wrapper.clone());
        }
        let wrapper = make.call((function.clone(), place.clone(), name.clone()), vm)?;
        wrapper.set_attr(mark.0, vm.ctx.new_bool(mark.1), vm)?;
        self.made.lock().insert(
            key,
            Made {
                function: function.clone(),
                place: place.clone(),
                wrapper: wrapper.clone(),
            },
        );
        Ok(wrapper)
    }
}

#[pyclass(with(Constructor))]
impl Wrappers {}
