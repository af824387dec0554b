//! PyTorch's legacy tensor constructor: `torch.Tensor(...)` and the typed
//! classes `torch.FloatTensor(...)`, `torch.LongTensor(...)`, ….

use rustpython_vm::builtins::{PyInt, PyStr, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::{DType, Scalar, Tensor};
use fxvm_ops::Value;

use super::convert::{IntoPy, scalar, tensor_from_data};
use super::tensor::PyTensor;
use crate::text::Utf8;

/// The overloads PyTorch's error lists when no form of `new()` matches.
const OVERLOADS: &str = " * (*, torch.device device = None)\n * (torch.Storage storage)\n * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n * (object data, *, torch.device device = None)\n";

/// The tensor `torch.Tensor(*args)` (`dtype` None: the default float dtype for new data,
/// any tensor aliased) or `torch.<Type>Tensor(*args)` (`dtype` given) makes:
/// no arguments, an empty 1-d tensor; sizes (ints or one `torch.Size`), a
/// new tensor of them (zeroed, where PyTorch leaves memory uninitialised);
/// a tensor, an alias of it (which must be of `dtype`); other data, a copy
/// in `dtype`. The only keyword is a CPU `device`.
pub(crate) fn legacy_new(
    dtype: Option<DType>,
    args: FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Tensor> {
    for (name, value) in &args.kwargs {
        if name != "device" {
            return Err(invalid(&args, vm));
        }
        let device = value.str(vm)?;
        let device = device.text(vm)?;
        if !device.starts_with("cpu") {
            let kind = device.split(':').next().unwrap_or(device);
            return Err(vm.new_runtime_error(format!(
                "legacy constructor expects device type: cpu but device type: {kind} was passed"
            )));
        }
    }
    let new_dtype = dtype.unwrap_or_else(crate::tensor::dtype::default_float);
    match args.args.as_slice() {
        [] => Ok(Tensor::zeros(&[0], new_dtype)),
        [other] if let Some(t) = other.downcast_ref::<PyTensor>() => {
            let t = t.tensor();
            if let Some(d) = dtype
                && d != t.dtype()
            {
                return Err(vm.new_type_error(format!(
                    "expected {} (got {})",
                    options(d),
                    options(t.dtype())
                )));
            }
            fxvm_ops::autograd::ops::call(
                "view_as",
                vec![Value::Tensor(t.clone()), Value::Tensor(t)],
                vec![],
            )
            .py(vm)
        }
        [size]
            if size.class().name().to_string() == "Size"
                && size.downcast_ref::<PyTuple>().is_some() =>
        {
            let size = size.downcast_ref::<PyTuple>().expect("checked above");
            sizes(size.as_slice(), new_dtype, &args, vm)
        }
        [data] if scalar(data, vm).is_none() => {
            if data.downcast_ref::<PyStr>().is_some() {
                return Err(vm.new_type_error("new(): invalid data type 'str'"));
            }
            let is_sequence =
                data.get_attr("__len__", vm).is_ok() || data.get_attr("__array__", vm).is_ok();
            if !is_sequence {
                return Err(vm.new_type_error(format!(
                    "new(): data must be a sequence (got {})",
                    data.class().name()
                )));
            }
            tensor_from_data(data, Some(new_dtype), vm)
        }
        [value] if value.downcast_ref::<PyInt>().is_none() => Err(vm.new_type_error(format!(
            "new(): data must be a sequence (got {})",
            value.class().name()
        ))),
        values => sizes(values, new_dtype, &args, vm),
    }
}

fn sizes(
    values: &[PyObjectRef],
    dtype: DType,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Tensor> {
    let dims = values
        .iter()
        .map(|v| match (v.downcast_ref::<PyInt>(), scalar(v, vm)) {
            (Some(_), Some(Scalar::Int(n))) => Ok(n),
            _ => Err(invalid(args, vm)),
        })
        .collect::<PyResult<Vec<i64>>>()?;
    if let Some(n) = dims.iter().find(|&&n| n < 0) {
        let all = dims
            .iter()
            .map(i64::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(vm.new_runtime_error(format!(
            "Trying to create tensor with negative dimension {n}: [{all}]"
        )));
    }
    let dims: Vec<usize> = dims.into_iter().map(|n| n as usize).collect();
    Ok(Tensor::zeros(&dims, dtype))
}

/// PyTorch's "invalid combination of arguments" error for `new()`.
fn invalid(args: &FuncArgs, vm: &VirtualMachine) -> rustpython_vm::builtins::PyBaseExceptionRef {
    let mut got: Vec<String> = args
        .args
        .iter()
        .map(|a| a.class().name().to_string())
        .collect();
    got.extend(args.kwargs.iter().map(|(k, v)| {
        let class = v.class().name().to_string();
        let class = if class == "dtype" {
            "torch.dtype".to_owned()
        } else {
            class
        };
        format!("{k}={class}")
    }));
    vm.new_type_error(format!(
        "new() received an invalid combination of arguments - got ({}), but expected one of:\n{OVERLOADS}",
        got.join(", ")
    ))
}

/// How PyTorch's C++ core prints the options of a CPU tensor of `dtype`.
fn options(dtype: DType) -> String {
    let name = dtype.type_meta_name();
    format!(
        "TensorOptions(dtype={name}, device=cpu, layout=Strided, requires_grad=false (default), pinned_memory=false (default), memory_format=(nullopt))"
    )
}
