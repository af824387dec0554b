//! `Patcher`: records patches and reverts them in reverse order.

use std::collections::HashSet;

use rustpython_vm::builtins::{PyStrRef, PyType};
use rustpython_vm::common::lock::PyMutex;
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::types::Constructor;
use rustpython_vm::{
    AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use crate::wrappers::Wrappers;

/// One change, with what undoes it.
enum Patch {
    /// `dict[name]` shadowed a builtin: undone by deleting the entry.
    Delete { dict: PyObjectRef, name: PyStrRef },
    /// `dict[name]` replaced `orig`.
    Item {
        dict: PyObjectRef,
        name: PyStrRef,
        orig: PyObjectRef,
    },
    /// `cls.name` replaced `orig`.
    Attr {
        cls: PyObjectRef,
        name: PyStrRef,
        orig: PyObjectRef,
    },
}

impl Patch {
    fn revert(&self, vm: &VirtualMachine) -> PyResult<()> {
        match self {
            Patch::Delete { dict, name } => dict.del_item(name.as_object(), vm),
            Patch::Item { dict, name, orig } => dict.set_item(name.as_object(), orig.clone(), vm),
            Patch::Attr { cls, name, orig } => cls.set_attr(name, orig.clone(), vm),
        }
    }
}

#[pyclass(module = "torch._C._fx_patches", name = "Patcher")]
#[derive(PyPayload, Default)]
pub(crate) struct Patcher {
    patches: PyMutex<Vec<Patch>>,
    visited: PyMutex<HashSet<usize>>,
}

impl std::fmt::Debug for Patcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Patcher({} patches)", self.patches.lock().len())
    }
}

const MARK: &str = "__fx_already_patched";

/// Whether `obj` is a replacement that asked not to be patched over.
fn already_patched(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    match vm.get_attribute_opt(obj.clone(), MARK)? {
        Some(v) => v.try_to_bool(vm),
        None => Ok(false),
    }
}

/// `(frame_dict or cls, name, new_fn, deduplicate=True)`.
#[derive(rustpython_vm::FromArgs)]
struct PatchArgs {
    #[pyarg(any)]
    target: PyObjectRef,
    #[pyarg(any)]
    name: PyStrRef,
    #[pyarg(any)]
    new_fn: PyObjectRef,
    #[pyarg(any, optional)]
    deduplicate: OptionalArg<bool>,
}

impl Constructor for Patcher {
    type Args = FuncArgs;

    fn py_new(_cls: &Py<PyType>, _args: FuncArgs, _vm: &VirtualMachine) -> PyResult<Self> {
        Ok(Patcher::default())
    }
}

#[pyclass(with(Constructor))]
impl Patcher {
    /// `frame_dict[name] = new_fn` (a module global; a name only found in
    /// builtins is shadowed, and the shadow removed on revert).
    #[pymethod]
    fn patch(&self, a: PatchArgs, vm: &VirtualMachine) -> PyResult<()> {
        let PatchArgs {
            target: frame_dict,
            name,
            new_fn,
            deduplicate,
        } = a;
        new_fn.set_attr(MARK, vm.ctx.new_bool(deduplicate.unwrap_or(true)), vm)?;
        let current = vm.call_method(&frame_dict, "get", (name.clone(),))?;
        let patch = if vm.is_none(&current) && vm.builtins.as_object().get_attr(&*name, vm).is_ok()
        {
            Patch::Delete {
                dict: frame_dict.clone(),
                name: name.clone(),
            }
        } else {
            if already_patched(&current, vm)? {
                return Ok(());
            }
            let orig = frame_dict.get_item(name.as_object(), vm)?;
            Patch::Item {
                dict: frame_dict.clone(),
                name: name.clone(),
                orig,
            }
        };
        frame_dict.set_item(name.as_object(), new_fn, vm)?;
        self.patches.lock().push(patch);
        Ok(())
    }

    /// `setattr(cls, name, new_fn)`.
    #[pymethod]
    fn patch_method(&self, a: PatchArgs, vm: &VirtualMachine) -> PyResult<()> {
        let PatchArgs {
            target: cls,
            name,
            new_fn,
            deduplicate,
        } = a;
        new_fn.set_attr(MARK, vm.ctx.new_bool(deduplicate.unwrap_or(true)), vm)?;
        let orig = cls.get_attr(&*name, vm)?;
        if already_patched(&orig, vm)? {
            return Ok(());
        }
        cls.set_attr(&*name, new_fn, vm)?;
        self.patches.lock().push(Patch::Attr { cls, name, orig });
        Ok(())
    }

    /// torch.fx's autowrap scan, natively (it runs over every global of the
    /// traced script and of `math` on each trace): the first time
    /// `frame_dict` is seen, each public callable global whose `id` is in
    /// `function_ids` is patched with its wrapper from `wrappers`, made by
    /// `make_wrapper(value, frame_dict, name)` the first time.
    #[pymethod]
    fn autowrap(
        &self,
        frame_dict: PyObjectRef,
        function_ids: PyObjectRef,
        make_wrapper: PyObjectRef,
        wrappers: PyRef<Wrappers>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        if !self.visit_once(frame_dict.clone()) {
            return Ok(());
        }
        let Some(dict) = frame_dict.downcast_ref::<rustpython_vm::builtins::PyDict>() else {
            return Err(vm.new_type_error("autowrap scans a dict of globals"));
        };
        let ids: HashSet<usize> = function_ids
            .try_to_value::<Vec<usize>>(vm)?
            .into_iter()
            .collect();
        for (name, value) in dict.items_vec() {
            let Ok(name) = name.downcast::<rustpython_vm::builtins::PyStr>() else {
                continue;
            };
            // A global already patched (a trace inside a trace) holds a
            // wrapper, whose id is not among the functions'.
            if name.as_wtf8().as_bytes().starts_with(b"_")
                || !ids.contains(&value.get_id())
                || !value.is_callable()
            {
                continue;
            }
            let wrapper = wrappers.get_or_make(
                &frame_dict,
                &name,
                &value,
                &make_wrapper,
                (MARK, true),
                vm,
            )?;
            frame_dict.set_item(name.as_object(), wrapper, vm)?;
            self.patches.lock().push(Patch::Item {
                dict: frame_dict.clone(),
                name,
                orig: value,
            });
        }
        Ok(())
    }

    /// True the first time `thing` is seen.
    #[pymethod]
    fn visit_once(&self, thing: PyObjectRef) -> bool {
        self.visited.lock().insert(thing.get_id())
    }

    #[pymethod]
    fn __enter__(zelf: PyObjectRef) -> PyObjectRef {
        zelf
    }

    /// Reverts every patch, newest first, even when tracing raised.
    #[pymethod]
    fn __exit__(&self, _args: FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
        let patches = std::mem::take(&mut *self.patches.lock());
        self.visited.lock().clear();
        let mut first_error = None;
        for patch in patches.iter().rev() {
            if let Err(e) = patch.revert(vm) {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}
