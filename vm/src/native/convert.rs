//! Conversions between Python objects and the tensor core: numbers, nested
//! lists, dtypes, and tensor errors as Python exceptions.

use rustpython_vm::builtins::{PyBaseExceptionRef, PyFloat, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::tensor::dtype::Category;
use crate::tensor::{DType, ErrorKind, Scalar, Tensor, TensorError};

use super::tensor::PyTensor;

/// A tensor error as the Python exception PyTorch raises for it.
pub(crate) fn to_py_err(e: TensorError, vm: &VirtualMachine) -> PyBaseExceptionRef {
    if let TensorError::Anomaly { node, trace, error } = e {
        super::anomaly::warn_anomaly(&node, trace.as_deref(), vm);
        return to_py_err(*error, vm);
    }
    if e == TensorError::Callback
        && let Some(raised) = super::autograd::take_raised()
    {
        return raised;
    }
    let msg = e.to_string();
    match e.kind() {
        ErrorKind::Runtime => vm.new_runtime_error(msg),
        ErrorKind::Index => vm.new_index_error(msg),
        ErrorKind::Value => vm.new_value_error(msg),
        ErrorKind::NotImplemented => vm.new_not_implemented_error(msg),
        ErrorKind::Type => vm.new_type_error(msg),
        ErrorKind::LinAlg => linalg_error(msg, vm),
        ErrorKind::Memory => vm.new_memory_error(msg),
    }
}

/// A `torch.linalg.LinAlgError` (the RuntimeError subclass PyTorch raises
/// for singular input), or a plain RuntimeError before `torch` is set up.
fn linalg_error(msg: String, vm: &VirtualMachine) -> PyBaseExceptionRef {
    super::classes::attr("torch._C", "_LinAlgError", vm)
        .and_then(|class| class.call((msg.clone(),), vm))
        .ok()
        .and_then(|e| {
            e.downcast::<rustpython_vm::builtins::PyBaseException>()
                .ok()
        })
        .unwrap_or_else(|| vm.new_runtime_error(msg))
}

/// Lifts a core result into a Python result.
pub(crate) trait IntoPy<T> {
    fn py(self, vm: &VirtualMachine) -> PyResult<T>;
}

impl<T> IntoPy<T> for Result<T, TensorError> {
    fn py(self, vm: &VirtualMachine) -> PyResult<T> {
        self.map_err(|e| to_py_err(e, vm))
    }
}

/// A Python bool, int or float as a scalar; `None` for anything else.
pub(crate) fn scalar(obj: &PyObjectRef, vm: &VirtualMachine) -> Option<Scalar> {
    if obj.class().is(vm.ctx.types.bool_type) {
        return Some(Scalar::Bool(obj.is(&vm.ctx.true_value)));
    }
    if let Some(i) = obj.downcast_ref::<PyInt>() {
        return i.try_to_primitive::<i64>(vm).ok().map(Scalar::Int);
    }
    if let Some(f) = obj.downcast_ref::<PyFloat>() {
        return Some(Scalar::Float(f.to_f64()));
    }
    super::numpy::scalar_of(obj, vm)
}

pub(crate) fn scalar_to_py(s: Scalar, vm: &VirtualMachine) -> PyObjectRef {
    match s {
        Scalar::Bool(b) => vm.ctx.new_bool(b).into(),
        Scalar::Int(i) => vm.ctx.new_int(i).into(),
        Scalar::Float(x) => vm.ctx.new_float(x).into(),
    }
}

/// Builds a tensor from a Python number, (nested) sequence of numbers or tensors.
pub(crate) fn tensor_from_data(
    data: &PyObjectRef,
    dtype: Option<DType>,
    vm: &VirtualMachine,
) -> PyResult<Tensor> {
    let data = match data.downcast_ref::<PyTensor>() {
        Some(t) => fxvm_ops::Data::Tensor(t.tensor()),
        None if let Some(t) = super::numpy::array_tensor(data, vm) => fxvm_ops::Data::Tensor(t?),
        None => flatten_data(data, vm)?,
    };
    data.into_tensor(dtype).py(vm)
}

/// The numbers of a (nested) sequence, row-major, and the shape of its
/// nesting: `torch.tensor`'s data. Ints past int64 are held as their float
/// values, their positions listed (`Data::Values::wide`); an element that
/// is neither a number nor a sequence ends it (`Data::Uninferable`).
pub(crate) fn flatten_data(data: &PyObjectRef, vm: &VirtualMachine) -> PyResult<fxvm_ops::Data> {
    let mut flat = Flat::default();
    flatten(data, 0, &mut flat, vm)?;
    if let Some(type_name) = flat.uninferable {
        return Ok(fxvm_ops::Data::Uninferable { type_name });
    }
    Ok(fxvm_ops::Data::Values {
        values: flat.values,
        shape: flat.shape,
        wide: flat.wide,
    })
}

#[derive(Default)]
struct Flat {
    values: Vec<Scalar>,
    shape: Vec<usize>,
    wide: Vec<usize>,
    /// The type of the first element that is neither a number nor a
    /// sequence, where flattening stopped.
    uninferable: Option<String>,
}

/// PyTorch's limit on the nesting of data given to `torch.tensor`.
const MAX_DIMS: usize = 128;

fn flatten(obj: &PyObjectRef, depth: usize, flat: &mut Flat, vm: &VirtualMachine) -> PyResult<()> {
    let Flat {
        values: out,
        shape,
        wide,
        uninferable,
    } = flat;
    let value = scalar(obj, vm);
    let value = match (value, obj.downcast_ref::<PyInt>()) {
        (None, Some(_)) => {
            // Past int64: a float if the dtype is one (Python's float()
            // conversion and its OverflowError), refused otherwise.
            wide.push(out.len());
            Some(Scalar::Float(obj.try_float(vm)?.to_f64()))
        }
        (value, _) => value,
    };
    if let Some(s) = value {
        if depth < shape.len() {
            // A number where the first row had a sequence.
            return Err(vm.new_type_error("not a sequence"));
        }
        out.push(s);
        return Ok(());
    }
    if let Some(t) = obj.downcast_ref::<PyTensor>() {
        let t = t.tensor();
        if t.ndim() == 0 {
            out.push(t.item().py(vm)?);
            return Ok(());
        }
        if t.numel() != 1 {
            return Err(
                vm.new_value_error("only one element tensors can be converted to Python scalars")
            );
        }
        out.push(t.item().py(vm)?);
        return Ok(());
    }
    if let Some(t) = super::numpy::array_tensor(obj, vm) {
        // Arrays inside a list are sequences of their values, as PyTorch reads them.
        let nested = to_list(&t?, vm);
        return flatten(&nested, depth, flat, vm);
    }
    let is_str = obj.downcast_ref::<PyStr>().is_some();
    let items: Vec<PyObjectRef> = if let Some(l) = obj.downcast_ref::<PyList>() {
        l.borrow_vec().to_vec()
    } else if let Some(t) = obj.downcast_ref::<PyTuple>() {
        t.as_slice().to_vec()
    } else if is_str && depth == 0 {
        return Err(vm.new_type_error("new(): invalid data type 'str'"));
    } else if is_str && out.is_empty() && depth == shape.len() {
        // PyTorch sizes the data by its first elements, and a string is a
        // sequence of strings.
        return Err(vm.new_value_error("too many dimensions 'str'"));
    } else {
        *uninferable = Some(obj.class().name().to_string());
        return Ok(());
    };
    if depth == MAX_DIMS {
        return Err(vm.new_value_error(format!("too many dimensions '{}'", obj.class().name())));
    }
    if depth == shape.len() {
        if !out.is_empty() {
            return Err(
                vm.new_value_error(format!("expected sequence of length ... at dim {depth}"))
            );
        }
        shape.push(items.len());
    } else if shape[depth] != items.len() {
        return Err(vm.new_value_error(format!(
            "expected sequence of length {} at dim {depth} (got {})",
            shape[depth],
            items.len()
        )));
    }
    for item in &items {
        flatten(item, depth + 1, flat, vm)?;
        if flat.uninferable.is_some() {
            break;
        }
    }
    Ok(())
}

/// `tolist()`: nested Python lists of Python numbers, built bottom-up (no
/// recursion, so a tensor of any number of dimensions converts).
pub(crate) fn to_list(t: &Tensor, vm: &VirtualMachine) -> PyObjectRef {
    let scalars: Vec<Scalar> = match t.dtype().category() {
        Category::Bool => t.to_vec::<bool>().into_iter().map(Scalar::Bool).collect(),
        Category::Int => t.to_vec::<i64>().into_iter().map(Scalar::Int).collect(),
        Category::Float => t.to_vec::<f64>().into_iter().map(Scalar::Float).collect(),
    };
    let mut level: Vec<PyObjectRef> = scalars.into_iter().map(|s| scalar_to_py(s, vm)).collect();
    // Group the innermost dimension into lists, then the next, and so on; the
    // number of groups at each step is the product of the outer sizes.
    for (k, &n) in t.shape().iter().enumerate().rev() {
        let groups: usize = t.shape()[..k].iter().product();
        let mut items = level.into_iter();
        level = (0..groups)
            .map(|_| vm.ctx.new_list(items.by_ref().take(n).collect()).into())
            .collect();
    }
    level
        .pop()
        .expect("a 0-dim tensor has one value; lists group into one")
}
