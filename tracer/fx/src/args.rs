//! Arguments as torch.fx stores them: tuples stay tuples (named tuples keep
//! their type), lists become `immutable_list`, dicts `immutable_dict`, slices
//! are rebuilt; one walk also finds the nodes an argument uses.

use rustpython_vm::builtins::{PyDict, PyList, PySlice, PyTuple, PyTypeRef};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyResult, VirtualMachine};

use super::node::PyNode;

/// The container classes of `torch.fx.immutable_collections`.
#[derive(Clone)]
pub(crate) struct Containers {
    pub(crate) list: PyTypeRef,
    pub(crate) dict: PyTypeRef,
}

impl Containers {
    pub(crate) fn load(vm: &VirtualMachine) -> PyResult<Containers> {
        let module = fxvm_vm::binding::module("torch.fx.immutable_collections", vm)?;
        let class = |name: &'static str| -> PyResult<PyTypeRef> {
            module
                .get_attr(name, vm)?
                .downcast()
                .map_err(|_| vm.new_type_error(format!("{name} is not a class")))
        };
        Ok(Containers {
            list: class("immutable_list")?,
            dict: class("immutable_dict")?,
        })
    }
}

/// What to do with each value that is not a container.
pub(crate) enum Leaf<'a> {
    /// `map_arg`: `f` is applied to nodes only.
    Nodes(&'a mut dyn FnMut(&PyObjectRef) -> PyResult<PyObjectRef>),
    /// `map_aggregate`: `f` is applied to every non-container value.
    All(&'a mut dyn FnMut(&PyObjectRef) -> PyResult<PyObjectRef>),
}

impl Leaf<'_> {
    fn apply(&mut self, a: &PyObjectRef) -> PyResult<PyObjectRef> {
        match self {
            Leaf::Nodes(f) if a.downcast_ref::<PyNode>().is_some() => f(a),
            Leaf::Nodes(_) => Ok(a.clone()),
            Leaf::All(f) => f(a),
        }
    }
}

fn is_named_tuple(a: &PyObject, vm: &VirtualMachine) -> bool {
    !a.class().is(vm.ctx.types.tuple_type)
        && a.class().get_attr(vm.ctx.intern_str("_fields")).is_some()
}

/// Rebuilds `a` with `leaf` applied, as torch.fx's `map_aggregate` does.
pub(crate) fn map(
    a: &PyObjectRef,
    c: &Containers,
    leaf: &mut Leaf<'_>,
    vm: &VirtualMachine,
) -> PyResult<PyObjectRef> {
    if let Some(t) = a.downcast_ref::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| map(x, c, leaf, vm))
            .collect::<PyResult<Vec<_>>>()?;
        if is_named_tuple(a, vm) {
            return a
                .class()
                .to_owned()
                .as_object()
                .call(rustpython_vm::function::FuncArgs::from(items), vm);
        }
        return Ok(vm.ctx.new_tuple(items).into());
    }
    if let Some(l) = a.downcast_ref::<PyList>() {
        let items = l.borrow_vec().to_vec();
        let items = items
            .iter()
            .map(|x| map(x, c, leaf, vm))
            .collect::<PyResult<Vec<_>>>()?;
        return c.list.as_object().call((vm.ctx.new_list(items),), vm);
    }
    if let Some(d) = a.downcast_ref::<PyDict>() {
        let out = vm.ctx.new_dict();
        for (k, v) in d.items_vec() {
            out.set_item(&*k, map(&v, c, leaf, vm)?, vm)?;
        }
        return c.dict.as_object().call((out,), vm);
    }
    if let Some(s) = a.downcast_ref::<PySlice>() {
        return map_slice(s, |x| map(x, c, leaf, vm), vm);
    }
    leaf.apply(a)
}

/// Calls `f` on every node inside `a`, in order, without rebuilding anything.
pub(crate) fn visit_nodes(a: &PyObject, f: &mut dyn FnMut(&PyObject)) {
    if a.downcast_ref::<PyNode>().is_some() {
        f(a);
    } else if let Some(t) = a.downcast_ref::<PyTuple>() {
        t.iter().for_each(|x| visit_nodes(x, f));
    } else if let Some(l) = a.downcast_ref::<PyList>() {
        l.borrow_vec().iter().for_each(|x| visit_nodes(x, f));
    } else if let Some(d) = a.downcast_ref::<PyDict>() {
        d.items_vec().iter().for_each(|(_, v)| visit_nodes(v, f));
    } else if let Some(s) = a.downcast_ref::<PySlice>() {
        for x in [s.start.as_deref(), Some(&*s.stop), s.step.as_deref()]
            .into_iter()
            .flatten()
        {
            visit_nodes(x, f);
        }
    }
}

/// Whether a tuple holds only nodes and plain values, no containers (so it
/// can be stored as it is, without rebuilding).
pub(crate) fn is_flat_tuple(a: &PyTuple) -> bool {
    a.iter().all(|x| {
        x.downcast_ref::<PyNode>().is_some()
            || !(x.downcast_ref::<PyTuple>().is_some()
                || x.downcast_ref::<PyList>().is_some()
                || x.downcast_ref::<PyDict>().is_some()
                || x.downcast_ref::<PySlice>().is_some())
    })
}

/// A new slice with `f` applied to each bound (`None` for a missing one).
pub fn map_slice(
    s: &PySlice,
    mut f: impl FnMut(&PyObjectRef) -> PyResult,
    vm: &VirtualMachine,
) -> PyResult {
    let none = vm.ctx.none();
    let start = f(s.start.as_ref().unwrap_or(&none))?;
    let stop = f(&s.stop)?;
    let step = f(s.step.as_ref().unwrap_or(&none))?;
    vm.ctx
        .types
        .slice_type
        .as_object()
        .call((start, stop, step), vm)
}
