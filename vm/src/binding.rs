//! What other crates' native modules need of the op bindings: the registry
//! row behind a Python callable, Python arguments matched to its schema,
//! and conversions between Python objects and typed values.

use fxvm_ops::{Op, Place, Schema, Ty, Value, registry};
use rustpython_vm::function::{FuncArgs, IntoPyNativeFn, PyMethodDef, PyMethodFlags};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use crate::native::tensor::PyTensor;
use crate::tensor::{DType, Tensor};

/// The row a registry callable runs: `Tensor.X` methods, `torch.X`,
/// `torch.nn.functional.X` (`torch._C._nn.X`) and `torch.linalg.X`, found
/// by the name and module the callable reports.
pub fn op_of(func: &PyObjectRef, vm: &VirtualMachine) -> Option<&'static Op> {
    let name = func.get_attr("__name__", vm).ok()?.str(vm).ok()?;
    let name = name.to_str()?;
    let qualname = func
        .get_attr("__qualname__", vm)
        .ok()
        .and_then(|q| q.str(vm).ok());
    if qualname.is_some_and(|q| q.to_str().is_some_and(|q| q.starts_with("Tensor."))) {
        return registry()
            .named(name)
            .find(|op| op.places.contains(&Place::Method));
    }
    let module = func.get_attr("__module__", vm).ok()?.str(vm).ok()?;
    match module.to_str()? {
        "torch" | "torch.functional" => registry()
            .named(name)
            .find(|op| op.places.iter().any(|p| p.is_torch())),
        "torch._C._nn" | "torch.nn.functional" => registry().functional(name),
        "torch._C._linalg" => registry().named(&format!("linalg_{name}")).next(),
        _ => None,
    }
}

/// The object given for each of `schema`'s parameters (see the binder).
pub fn bind_objects(
    schema: &Schema,
    args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Vec<Option<PyObjectRef>>> {
    crate::native::bind::bind_objects(schema, args, vm)
}

/// `o` as a value of `ty`; `None` when it is not one.
pub fn convert(ty: &Ty, o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Value>> {
    crate::native::bind::convert_to(ty, o, vm)
}

/// The tensor `o` is, if it is one.
pub fn tensor_of(o: &PyObjectRef) -> Option<Tensor> {
    o.downcast_ref::<PyTensor>().map(|t| t.tensor())
}

/// The tensor `o` is, if its class is exactly `torch.Tensor` (no subclass,
/// so no `__torch_function__` override).
pub fn plain_tensor_of(o: &PyObjectRef, vm: &VirtualMachine) -> Option<Tensor> {
    use rustpython_vm::{AsObject, PyPayload};
    if o.class().is(PyTensor::class(&vm.ctx)) {
        tensor_of(o)
    } else {
        None
    }
}

/// A Python sequence's items (lists and tuples).
pub fn items(o: &PyObjectRef) -> Option<Vec<PyObjectRef>> {
    crate::native::bind::seq(o)
}

/// The module `name` (a dotted name: the submodule itself), from
/// `sys.modules` — imported only the first time.
pub fn module(name: &'static str, vm: &VirtualMachine) -> PyResult {
    crate::native::classes::module(name, vm)
}

pub fn dtype_to_py(dtype: DType, vm: &VirtualMachine) -> PyResult {
    crate::native::dtype::dtype_to_py(dtype, vm)
}

pub fn dtype_from_py(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<DType> {
    crate::native::dtype::dtype_from_py(o, vm)
}

/// A tensor as a Python `torch.Tensor`.
pub fn wrap_tensor(t: Tensor, vm: &VirtualMachine) -> PyObjectRef {
    crate::native::tensor::wrap(t, vm)
}

/// A kernel error as the Python exception PyTorch raises for it.
pub fn error_to_py(
    e: fxvm_tensor::TensorError,
    vm: &VirtualMachine,
) -> rustpython_vm::builtins::PyBaseExceptionRef {
    use crate::native::convert::IntoPy;
    match Err::<(), _>(e).py(vm) {
        Err(exc) => exc,
        Ok(()) => unreachable!("an error converts to an exception"),
    }
}

/// A typed value as the Python object a call returns (`Input(i)` is the
/// `i`-th of `inputs`).
pub fn value_to_py(v: Value, inputs: &[Option<PyObjectRef>], vm: &VirtualMachine) -> PyResult {
    crate::native::bind::to_py(v, inputs, vm)
}

/// A dict of keyword arguments (string keys) as call keywords; anything
/// else as none.
pub fn kwargs(o: &PyObjectRef, vm: &VirtualMachine) -> rustpython_vm::function::KwArgs {
    o.downcast_ref::<rustpython_vm::builtins::PyDict>()
        .map(|d| {
            d.items_vec()
                .into_iter()
                .filter_map(|(k, v)| Some((k.str(vm).ok()?.to_str()?.to_owned(), v)))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether an `nn.Module` instance has no hooks around its calls: its
/// forward hooks and pre-hooks present and empty, its backward ones empty
/// or absent (a module unpickled from an older state has none), so calling
/// it only runs `forward`.
pub fn without_call_hooks(module: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let Some(dict) = module.dict() else {
        return Ok(false);
    };
    let empty = |hooks: &PyObjectRef| {
        hooks
            .downcast_ref::<rustpython_vm::builtins::PyDict>()
            .is_some_and(|d| d.__len__() == 0)
    };
    for name in ["_forward_hooks", "_forward_pre_hooks"] {
        if !dict.get_item_opt(name, vm)?.is_some_and(|h| empty(&h)) {
            return Ok(false);
        }
    }
    for name in ["_backward_hooks", "_backward_pre_hooks"] {
        if dict.get_item_opt(name, vm)?.is_some_and(|h| !empty(&h)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A method descriptor for the native `f`, bound to `object` so that it
/// serves as a method of any Python class it is set on (the instance comes
/// first in the arguments); leaked as every native definition is.
pub fn method_descriptor<F, Kind>(
    name: &'static str,
    doc: &'static str,
    f: F,
    vm: &VirtualMachine,
) -> PyObjectRef
where
    F: IntoPyNativeFn<Kind>,
{
    definition(name, f, PyMethodFlags::METHOD, Some(doc))
        .build_method(&vm.ctx, vm.ctx.types.object_type)
        .into()
}

/// A native function's definition, leaked as every native definition is:
/// it lives as long as the process (a few hundred bytes).
pub fn definition<F, Kind>(
    name: &'static str,
    f: F,
    flags: PyMethodFlags,
    doc: Option<&'static str>,
) -> &'static PyMethodDef
where
    F: IntoPyNativeFn<Kind>,
{
    Box::leak(Box::new(PyMethodDef {
        name,
        func: Box::leak(Box::new(f.into_func())),
        flags,
        doc,
    }))
}
