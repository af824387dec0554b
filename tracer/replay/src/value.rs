//! What a replayed graph's slots hold, and the conversions at its edges:
//! Python objects in and out, and typed op arguments from slots.

use fxvm_ops::{Ty, Value};
use fxvm_tensor::{Scalar, Tensor};
use fxvm_vm::binding;
use rustpython_vm::builtins::{PyFloat, PyInt, PyList, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, VirtualMachine};

/// One value of the graph at run time.
#[derive(Clone, Debug)]
pub(crate) enum V {
    /// Not computed yet, or freed after its last use.
    Empty,
    Tensor(Tensor),
    Int(i64),
    Float(f64),
    Bool(bool),
    None,
    /// `x.size()`.
    Size(Vec<i64>),
    /// A tuple result (`split`, `max(dim)`), or a list.
    Seq(Vec<V>),
    /// Anything else, kept as the Python object.
    Py(PyObjectRef),
}

impl V {
    /// A Python object as a slot value.
    pub(crate) fn from_py(o: &PyObjectRef, vm: &VirtualMachine) -> V {
        let cls = o.class();
        if let Some(t) = binding::tensor_of(o) {
            return V::Tensor(t);
        }
        if cls.is(vm.ctx.types.bool_type) {
            return V::Bool(o.clone().try_to_bool(vm).unwrap_or(false));
        }
        if vm.is_none(o) {
            return V::None;
        }
        if let Some(i) = o.downcast_ref::<PyInt>()
            && let Ok(i) = i.try_to_primitive::<i64>(vm)
        {
            return V::Int(i);
        }
        if let Some(f) = o.downcast_ref::<PyFloat>() {
            return V::Float(f.to_f64());
        }
        if cls.is(vm.ctx.types.tuple_type) || cls.is(vm.ctx.types.list_type) {
            let items: Vec<PyObjectRef> = match o.downcast_ref::<PyTuple>() {
                Some(t) => t.as_slice().to_vec(),
                None => o
                    .downcast_ref::<PyList>()
                    .expect("a list")
                    .borrow_vec()
                    .to_vec(),
            };
            return V::Seq(items.iter().map(|x| V::from_py(x, vm)).collect());
        }
        V::Py(o.clone())
    }

    /// The slot value as a Python object.
    pub(crate) fn to_py(&self, vm: &VirtualMachine) -> PyObjectRef {
        match self {
            V::Empty | V::None => vm.ctx.none(),
            V::Tensor(t) => binding::wrap_tensor(t.clone(), vm),
            V::Int(i) => vm.ctx.new_int(*i).into(),
            V::Float(f) => vm.ctx.new_float(*f).into(),
            V::Bool(b) => vm.ctx.new_bool(*b).into(),
            V::Size(s) => {
                let items = s.iter().map(|&i| vm.ctx.new_int(i).into()).collect();
                let size = vm
                    .import("torch", 0)
                    .and_then(|t| t.get_attr("Size", vm))
                    .and_then(|cls| cls.call((vm.ctx.new_tuple(items),), vm));
                size.unwrap_or_else(|_| vm.ctx.none())
            }
            V::Seq(items) => vm
                .ctx
                .new_tuple(items.iter().map(|x| x.to_py(vm)).collect())
                .into(),
            V::Py(o) => o.clone(),
        }
    }

    /// A typed op result as a slot value (`Input(i)` is `input(i)`, the op's
    /// `i`-th argument).
    pub(crate) fn from_value(v: Value, input: &dyn Fn(usize) -> V, vm: &VirtualMachine) -> V {
        match v {
            Value::Tensor(t) => V::Tensor(t),
            Value::Input(i) => input(i),
            Value::Int(i) => V::Int(i),
            Value::Float(f) => V::Float(f),
            Value::Bool(b) => V::Bool(b),
            Value::Scalar(Scalar::Int(i)) => V::Int(i),
            Value::Scalar(Scalar::Float(f)) => V::Float(f),
            Value::Scalar(Scalar::Bool(b)) => V::Bool(b),
            Value::None => V::None,
            Value::Ints(v) => V::Size(v),
            Value::Tensors(ts) => V::Seq(ts.into_iter().map(V::Tensor).collect()),
            Value::Tuple(items) | Value::ReturnType(_, items) => V::Seq(
                items
                    .into_iter()
                    .map(|x| V::from_value(x, input, vm))
                    .collect(),
            ),
            other => binding::value_to_py(other, &[], vm).map_or(V::None, V::Py),
        }
    }

    /// The typed value a parameter of type `ty` takes from this slot, if
    /// it fits.
    pub(crate) fn to_value(&self, ty: &Ty) -> Option<Value> {
        match (ty, self) {
            (Ty::Union(alts), v) => alts.iter().find_map(|t| v.to_value(t)),
            (Ty::Tensor, V::Tensor(t)) => Some(Value::Tensor(t.clone())),
            (Ty::Int, V::Int(i)) => Some(Value::Int(*i)),
            (Ty::Int, V::Bool(b)) => Some(Value::Int(*b as i64)),
            (Ty::Float, V::Float(f)) => Some(Value::Float(*f)),
            (Ty::Float, V::Int(i)) => Some(Value::Float(*i as f64)),
            (Ty::Scalar, V::Int(i)) => Some(Value::Scalar(Scalar::Int(*i))),
            (Ty::Scalar, V::Float(f)) => Some(Value::Scalar(Scalar::Float(*f))),
            (Ty::Scalar, V::Bool(b)) => Some(Value::Scalar(Scalar::Bool(*b))),
            (Ty::Bool, V::Bool(b)) => Some(Value::Bool(*b)),
            (Ty::IntList, V::Size(s)) => Some(Value::Ints(s.clone())),
            (Ty::IntList, V::Int(i)) => Some(Value::Ints(vec![*i])),
            (Ty::IntList, V::Seq(items)) => items
                .iter()
                .map(|x| match x {
                    V::Int(i) => Some(*i),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(Value::Ints),
            (Ty::TensorList, V::Seq(items)) => items
                .iter()
                .map(|x| match x {
                    V::Tensor(t) => Some(t.clone()),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .map(Value::Tensors),
            _ => None,
        }
    }
}
