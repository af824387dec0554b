//! Values crossing between Rust and Python: numbers, strings, tensors
//! (sharing storage, never copied), lists and tuples of them, and opaque
//! handles to any other Python object.

use fxvm_tensor::Tensor;
use rustpython_vm::builtins::{PyFloat, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::error::Error;

/// A value passed to or returned from Python.
#[derive(Debug, Clone)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A `torch.Tensor`: the same storage on both sides.
    Tensor(Tensor),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    /// Any other Python object (a module, a model, a function …), usable
    /// through [`crate::Host::object`].
    Object(Handle),
}

/// An opaque reference to a Python object of one host.
#[derive(Clone)]
pub struct Handle(pub(crate) PyObjectRef);

impl std::fmt::Debug for Handle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} object>", self.0.class().name())
    }
}

impl Value {
    /// The tensor, if this is one.
    pub fn as_tensor(&self) -> Option<&Tensor> {
        match self {
            Value::Tensor(t) => Some(t),
            _ => None,
        }
    }

    pub(crate) fn to_py(&self, vm: &VirtualMachine) -> PyObjectRef {
        match self {
            Value::None => vm.ctx.none(),
            Value::Bool(b) => vm.ctx.new_bool(*b).into(),
            Value::Int(i) => vm.ctx.new_int(*i).into(),
            Value::Float(x) => vm.ctx.new_float(*x).into(),
            Value::Str(s) => vm.ctx.new_str(s.as_str()).into(),
            Value::Tensor(t) => fxvm_vm::binding::wrap_tensor(t.clone(), vm),
            Value::List(items) => vm
                .ctx
                .new_list(items.iter().map(|v| v.to_py(vm)).collect())
                .into(),
            Value::Tuple(items) => vm
                .ctx
                .new_tuple(items.iter().map(|v| v.to_py(vm)).collect())
                .into(),
            Value::Object(h) => h.0.clone(),
        }
    }

    pub(crate) fn from_py(obj: &PyObjectRef, vm: &VirtualMachine) -> Result<Value, Error> {
        if vm.is_none(obj) {
            return Ok(Value::None);
        }
        if obj.class().is(vm.ctx.types.bool_type) {
            return Ok(Value::Bool(
                obj.clone()
                    .try_to_bool(vm)
                    .map_err(|_| Error::conversion("bad bool"))?,
            ));
        }
        if let Some(t) = fxvm_vm::binding::tensor_of(obj) {
            return Ok(Value::Tensor(t));
        }
        if obj.class().is(vm.ctx.types.int_type) {
            let int = obj.downcast_ref::<PyInt>().expect("an int");
            return i64::try_from(int.as_bigint()).map(Value::Int).map_err(|_| {
                Error::conversion(format!("the int {} does not fit an i64", int.as_bigint()))
            });
        }
        if let Some(f) = obj.downcast_ref::<PyFloat>()
            && obj.class().is(vm.ctx.types.float_type)
        {
            return Ok(Value::Float(f.to_f64()));
        }
        if let Some(s) = obj.downcast_ref::<PyStr>()
            && obj.class().is(vm.ctx.types.str_type)
        {
            return Ok(Value::Str(s.to_string_lossy().into_owned()));
        }
        if let Some(l) = obj.downcast_ref::<PyList>()
            && obj.class().is(vm.ctx.types.list_type)
        {
            let items = l.borrow_vec().to_vec();
            return items
                .iter()
                .map(|o| Value::from_py(o, vm))
                .collect::<Result<_, _>>()
                .map(Value::List);
        }
        if let Some(t) = obj.downcast_ref::<PyTuple>()
            && obj.class().is(vm.ctx.types.tuple_type)
        {
            return t
                .iter()
                .map(|o| Value::from_py(o, vm))
                .collect::<Result<_, _>>()
                .map(Value::Tuple);
        }
        Ok(Value::Object(Handle(obj.clone())))
    }
}

/// Arguments of a Python call of a registered Rust function, as values.
pub(crate) fn values_of(args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Vec<Value>> {
    args.iter()
        .map(|a| Value::from_py(a, vm).map_err(|e| vm.new_type_error(e.message)))
        .collect()
}
