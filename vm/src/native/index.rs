//! `tensor[...]` and `tensor[...] = value`: ints, slices with steps, `None`,
//! `...`, and one boolean-mask or integer-tensor index.

use rustpython_vm::builtins::{PyEllipsis, PySlice, PyTuple};
use rustpython_vm::{PyObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::Tensor;
use crate::tensor::dtype::{DType, Scalar};
use crate::tensor::ops::shape;

use super::bind::seq;
use super::convert::{IntoPy, scalar, tensor_from_data};
use super::tensor::PyTensor;

enum Item {
    Int(i64),
    Slice(Option<i64>, Option<i64>, i64),
    NewAxis,
    Ellipsis,
    Tensor(Tensor),
}

impl Item {
    /// How many dims of the indexed tensor this item uses up.
    fn width(&self) -> usize {
        match self {
            Item::Int(_) | Item::Slice(..) => 1,
            Item::Tensor(m) if m.dtype() == DType::Bool => m.ndim(),
            Item::Tensor(_) => 1,
            Item::NewAxis | Item::Ellipsis => 0,
        }
    }
}

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

fn parse(needle: &PyObject, vm: &VirtualMachine) -> PyResult<Vec<Item>> {
    let parts: Vec<PyObjectRef> = match needle.downcast_ref::<PyTuple>() {
        Some(t) => t.as_slice().to_vec(),
        None => vec![needle.to_owned()],
    };
    parts
        .iter()
        .map(|p| {
            if vm.is_none(p) {
                Ok(Item::NewAxis)
            } else if p.downcast_ref::<PyEllipsis>().is_some() {
                Ok(Item::Ellipsis)
            } else if let Some(s) = p.downcast_ref::<PySlice>() {
                let start = s.start.as_ref().map(|x| opt_int(x, vm)).transpose()?.flatten();
                let stop = opt_int(&s.stop, vm)?;
                let step = s.step.as_ref().map(|x| opt_int(x, vm)).transpose()?.flatten().unwrap_or(1);
                Ok(Item::Slice(start, stop, step))
            } else if let Some(t) = p.downcast_ref::<PyTensor>() {
                let t = t.tensor();
                if t.ndim() == 0 && t.dtype() != DType::Bool {
                    Ok(Item::Int(t.item().py(vm)?.to_i64()))
                } else {
                    Ok(Item::Tensor(t))
                }
            } else if matches!(scalar(p, vm), Some(Scalar::Bool(_))) || seq(p).is_some() {
                Ok(Item::Tensor(tensor_from_data(p, None, vm)?))
            } else if let Some(Scalar::Int(i)) = scalar(p, vm) {
                Ok(Item::Int(i))
            } else {
                Err(vm.new_index_error(
                    "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices",
                ))
            }
        })
        .collect()
}

/// Applies the basic (view) items; returns the view and, for an advanced
/// index, the dim it applies to and the index tensor.
fn apply(
    t: &Tensor,
    items: Vec<Item>,
    vm: &VirtualMachine,
) -> PyResult<(Tensor, Option<(usize, Tensor)>)> {
    let consumed = items.iter().map(Item::width).sum::<usize>();
    if consumed > t.ndim() {
        return Err(vm.new_index_error(format!(
            "too many indices for tensor of dimension {}",
            t.ndim()
        )));
    }
    let mut out = t.clone();
    let mut dim = 0usize;
    let mut advanced = None;
    for item in items {
        // A repeated `...` can push later items past the last dim.
        let width = item.width();
        if width > 0 && dim + width > out.ndim() {
            return Err(vm.new_index_error(match item {
                Item::Int(i) => {
                    format!("index {i} is out of bounds for dimension {dim} with size 0")
                }
                _ => format!("too many indices for tensor of dimension {}", t.ndim()),
            }));
        }
        match item {
            Item::Int(i) => {
                let size = out.shape()[dim] as i64;
                if i < -size || i >= size {
                    return Err(vm.new_index_error(format!(
                        "index {i} is out of bounds for dimension {dim} with size {size}"
                    )));
                }
                out = shape::select(&out, dim as i64, i).py(vm)?;
            }
            Item::Slice(start, stop, step) => {
                out = shape::slice(&out, dim, start, stop, step).py(vm)?;
                dim += 1;
            }
            Item::NewAxis => {
                out = shape::unsqueeze(&out, dim as i64).py(vm)?;
                dim += 1;
            }
            Item::Ellipsis => dim += t.ndim() - consumed,
            Item::Tensor(index) => {
                if advanced.is_some() {
                    return Err(vm.new_index_error(
                        "fxvm supports one tensor index per indexing expression",
                    ));
                }
                advanced = Some((dim, index));
                dim += width;
            }
        }
    }
    Ok((out, advanced))
}

/// Turns a boolean mask over dims `dim..dim+mask.ndim()` into flat int64 indices over those dims merged.
fn mask_to_indices(
    view: &Tensor,
    dim: usize,
    mask: &Tensor,
    vm: &VirtualMachine,
) -> PyResult<(Tensor, Tensor)> {
    let span = &view.shape()[dim..dim + mask.ndim()];
    if span != mask.shape() {
        return Err(vm.new_index_error(format!(
            "The shape of the mask {:?} at index {dim} does not match the shape of the indexed tensor {:?} at index {dim}",
            mask.shape(),
            view.shape()
        )));
    }
    let merged = shape::flatten(
        view,
        dim as i64,
        (dim + mask.ndim()).saturating_sub(1) as i64,
    )
    .py(vm)?;
    let merged = if mask.ndim() == 0 {
        shape::unsqueeze(view, dim as i64).py(vm)?
    } else {
        merged
    };
    let picks: Vec<i64> = mask
        .to_vec::<bool>()
        .iter()
        .enumerate()
        .filter(|(_, b)| **b)
        .map(|(i, _)| i as i64)
        .collect();
    let n = picks.len();
    Ok((merged, Tensor::from_vec(picks, &[n])))
}

fn index_tensor(index: &Tensor, vm: &VirtualMachine) -> PyResult<Tensor> {
    if index.dtype().is_float() {
        return Err(
            vm.new_index_error("tensors used as indices must be long, int, byte or bool tensors")
        );
    }
    Ok(index.to_dtype(DType::I64))
}

pub(crate) fn get(t: &Tensor, needle: &PyObject, vm: &VirtualMachine) -> PyResult<Tensor> {
    let (view, advanced) = apply(t, parse(needle, vm)?, vm)?;
    let Some((dim, index)) = advanced else {
        return Ok(view);
    };
    let (base, index) = if index.dtype() == DType::Bool {
        mask_to_indices(&view, dim, &index, vm)?
    } else {
        (view, index_tensor(&index, vm)?)
    };
    crate::tensor::ops::index::take_along(&base, dim, &index).py(vm)
}

pub(crate) fn set(
    t: &Tensor,
    needle: &PyObject,
    value: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let (view, advanced) = apply(t, parse(needle, vm)?, vm)?;
    let src = match value.downcast_ref::<PyTensor>() {
        Some(v) => v.tensor(),
        None => match scalar(value, vm) {
            Some(s) => Tensor::scalar(s, view.dtype()),
            None => tensor_from_data(value, Some(view.dtype()), vm)?,
        },
    };
    let Some((dim, index)) = advanced else {
        return view.copy_from(&src).py(vm);
    };
    let (base, index) = if index.dtype() == DType::Bool {
        mask_to_indices(&view, dim, &index, vm)?
    } else {
        (view, index_tensor(&index, vm)?)
    };
    crate::tensor::ops::index::put_along(&base, dim, &index, &src).py(vm)
}
