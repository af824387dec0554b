//! `tensor[...]` and `tensor[...] = value`: the subscript's Python objects
//! read into the tensor core's [`Index`] items, which do the indexing.

use rustpython_vm::builtins::{PyEllipsis, PyList, PySlice, PyTuple};
use rustpython_vm::{AsObject, PyObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use crate::tensor::Tensor;
use crate::tensor::dtype::{DType, Scalar};
use crate::tensor::ops::subscript::Index;

use super::bind::seq;
use super::convert::{IntoPy, scalar, tensor_from_data};
use super::tensor::PyTensor;

fn opt_int(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<i64>> {
    if vm.is_none(o) {
        return Ok(None);
    }
    match scalar(o, vm) {
        Some(Scalar::Int(i)) => Ok(Some(i)),
        _ => o
            .try_index(vm)
            .and_then(|i| i.try_to_primitive::<i64>(vm))
            .map(Some),
    }
}

/// The subscript's items. A list shorter than 32 that holds a sequence,
/// slice, `...`, `None` or tensor stands for a tuple of items (NumPy's
/// legacy rule, which PyTorch keeps: `x[[[0, 1], [1, 2]]]` is `x[[0, 1], [1, 2]]`).
fn items(needle: &PyObject, vm: &VirtualMachine) -> PyResult<Vec<PyObjectRef>> {
    if let Some(t) = needle.downcast_ref::<PyTuple>() {
        return Ok(t.as_slice().to_vec());
    }
    if let Some(list) = needle.downcast_ref::<PyList>() {
        let items = list.borrow_vec().to_vec();
        let is_item = |p: &PyObjectRef| {
            vm.is_none(p)
                || p.downcast_ref::<PyEllipsis>().is_some()
                || p.downcast_ref::<PySlice>().is_some()
                || p.downcast_ref::<PyTensor>().is_some()
                || seq(p).is_some()
        };
        if items.len() < 32 && items.iter().any(is_item) {
            return Ok(items);
        }
    }
    Ok(vec![needle.to_owned()])
}

/// A tensor made from Python values: a constant to a recorded step.
fn constant(t: Tensor) -> Tensor {
    fxvm_ops::tape::constant(&t);
    t
}

fn parse(needle: &PyObject, vm: &VirtualMachine) -> PyResult<Vec<Index>> {
    items(needle, vm)?
        .iter()
        .map(|p| {
            if vm.is_none(p) {
                Ok(Index::NewAxis)
            } else if p.downcast_ref::<PyEllipsis>().is_some() {
                Ok(Index::Ellipsis)
            } else if let Some(s) = p.downcast_ref::<PySlice>() {
                let start = s.start.as_ref().map(|x| opt_int(x, vm)).transpose()?.flatten();
                let stop = opt_int(&s.stop, vm)?;
                let step = s.step.as_ref().map(|x| opt_int(x, vm)).transpose()?.flatten().unwrap_or(1);
                if step == 0 {
                    return Err(vm.new_value_error("slice step cannot be zero"));
                }
                Ok(Index::Slice { start, stop, step })
            } else if let Some(t) = p.downcast_ref::<PyTensor>() {
                let t = t.tensor();
                if t.ndim() == 0 && t.dtype() != DType::Bool && !t.dtype().is_float() {
                    super::tensor::value_read("a 0-d tensor as an index", vm);
                    Ok(Index::Int(t.item().py(vm)?.to_i64()))
                } else {
                    Ok(Index::Tensor(t))
                }
            } else if matches!(scalar(p, vm), Some(Scalar::Bool(_))) || seq(p).is_some() {
                let t = tensor_from_data(p, None, vm)?;
                // `x[[]]` picks nothing: its empty list is an int64 index.
                let t = if t.numel() == 0 { t.to_dtype(DType::I64) } else { t };
                Ok(Index::Tensor(constant(t)))
            } else if let Some(Scalar::Int(i)) = scalar(p, vm) {
                Ok(Index::Int(i))
            } else if let Some(t) = super::numpy::array_tensor(p, vm) {
                // A numpy index array, as PyTorch takes it (a copy).
                Ok(Index::Tensor(constant(t?.copy())))
            } else {
                super::bind::unpack_overflow(p, vm)?;
                Err(vm.new_index_error(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices",
                ))
            }
        })
        .collect()
}

pub(crate) fn get(t: &Tensor, needle: &PyObject, vm: &VirtualMachine) -> PyResult<Tensor> {
    fxvm_ops::autograd::index::get(t, &parse(needle, vm)?).py(vm)
}

pub(crate) fn set(
    t: &Tensor,
    needle: &PyObject,
    value: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let items = parse(needle, vm)?;
    let src = match value.downcast_ref::<PyTensor>() {
        // A value's leading size-1 dims are dropped first (`x[0] = row[None]`).
        Some(v) => {
            let v = v.tensor();
            let ones = v.shape().iter().take_while(|&&n| n == 1).count();
            if ones == 0 {
                v
            } else {
                fxvm_ops::autograd::ops::reshape(&v, &v.shape()[ones..]).py(vm)?
            }
        }
        None => match scalar(value, vm) {
            // A number is a fill value of the tensor's dtype, range-checked.
            Some(s) => constant(Tensor::scalar(
                Tensor::fill_value(s, t.dtype()).py(vm)?,
                t.dtype(),
            )),
            None => {
                super::bind::unpack_overflow(value, vm)?;
                return Err(vm.new_type_error(format!(
                    "can't assign a {} to a torch.{}Tensor",
                    value.class().name(),
                    crate::tensor::error::legacy_name(t.dtype())
                )));
            }
        },
    };
    fxvm_ops::autograd::index::set(t, &items, &src).py(vm)
}

/// The class of the first object in a subscript — an item, or a slice's
/// bound — that overrides `__torch_function__` (a traced `Proxy`): then
/// `tensor[...]` is that class's to handle, as PyTorch hands it tensor-like
/// indices.
fn overriding_class(needle: &PyObject, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let overrides = |o: &PyObjectRef| {
        let cls = o.class();
        (o.downcast_ref::<PyTensor>().is_none()
            && !vm.is_none(o)
            && scalar(o, vm).is_none()
            && cls
                .get_attr(vm.ctx.intern_str("__torch_function__"))
                .is_some())
        .then(|| cls.to_owned().into())
    };
    let items = match needle.downcast_ref::<PyTuple>() {
        Some(t) => t.as_slice().to_vec(),
        None => vec![needle.to_owned()],
    };
    items
        .iter()
        .find_map(|p| match p.downcast_ref::<PySlice>() {
            Some(s) => [s.start.clone(), Some(s.stop.clone()), s.step.clone()]
                .iter()
                .flatten()
                .find_map(overrides),
            None => overrides(p),
        })
}

/// `tensor[needle]` through the active `TorchFunctionMode`, or through
/// `__torch_function__` when the subscript holds an overriding object;
/// `None` otherwise.
pub(crate) fn dispatch_get(
    tensor: &PyObjectRef,
    needle: &PyObject,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let modes = super::ops::modes_active();
    let cls = overriding_class(needle, vm);
    if !modes && cls.is_none() {
        return Ok(None);
    }
    let func = PyTensor::class(&vm.ctx)
        .as_object()
        .get_attr("__getitem__", vm)?;
    let args = rustpython_vm::function::FuncArgs::new(
        vec![tensor.clone(), needle.to_owned()],
        rustpython_vm::function::KwArgs::default(),
    );
    let types: Vec<PyObjectRef> = cls.into_iter().collect();
    if modes {
        return super::ops::mode_dispatch(&func, types, &args, vm).map(Some);
    }
    super::ops::dispatch(&func, "Tensor.__getitem__", types, &args, vm).map(Some)
}
