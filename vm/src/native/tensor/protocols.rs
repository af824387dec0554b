//! `torch.Tensor`'s Python protocols: numbers (operators, in place ones
//! through the registry's `op_` rows, `~`, `int()`, `index()`), comparison,
//! hashing, `repr`, iteration and subscripts.

use rustpython_vm::function::{FuncArgs, PyComparisonValue};
use rustpython_vm::protocol::{PyMappingMethods, PyNumber, PyNumberMethods};
use rustpython_vm::types::{
    AsMapping, AsNumber, Comparable, Hashable, Iterable, PyComparisonOp, Representable,
};
use rustpython_vm::{
    AsObject, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, atomic_func,
};

use crate::tensor::ops::elementwise::{Arg, Binary, Unary, binary};
use crate::tensor::ops::shape;
use crate::tensor::{Scalar, Tensor, format};
use fxvm_ops::Value;

use crate::native::bind::to_arg;
use crate::native::convert::IntoPy;

use super::{PyTensor, wrap};

/// An operator's operand: a tensor, a number, or (as PyTorch's operators
/// take them) a numpy array.
fn operand(o: &PyObject, vm: &VirtualMachine) -> PyResult<Option<Arg>> {
    let o = o.to_owned();
    if let Some(arg) = to_arg(&o, vm) {
        return Ok(Some(arg));
    }
    crate::native::numpy::array_tensor(&o, vm)
        .transpose()
        .map(|t| t.map(Arg::Tensor))
}

fn binop(a: &PyObject, b: &PyObject, op: Binary, vm: &VirtualMachine) -> PyResult {
    let method = || match op {
        Binary::FloorDivide => "__floordiv__",
        Binary::BitwiseAnd => "__and__",
        Binary::BitwiseOr => "__or__",
        Binary::BitwiseXor => "__xor__",
        Binary::LeftShift => "__lshift__",
        Binary::RightShift => "__rshift__",
        op => op.name(),
    };
    if crate::native::ops::modes_active() {
        return method_dispatch(a, b, method(), vm);
    }
    let (Some(x), Some(y)) = (operand(a, vm)?, operand(b, vm)?) else {
        return method_dispatch(a, b, method(), vm);
    };
    crate::native::guard::guard(op.name(), vm, || {
        let out = match (&x, &y) {
            (Arg::Tensor(_), _) => row(op.name(), vec![x.into(), y.into()]),
            // A number first, as PyTorch's reflected operators: `2 - x` is
            // `x.rsub(2)`, `2 / x` is `x.reciprocal() * 2`.
            (Arg::Scalar(_), Arg::Tensor(t)) => match op {
                Binary::Add
                | Binary::Mul
                | Binary::BitwiseAnd
                | Binary::BitwiseOr
                | Binary::BitwiseXor => row(op.name(), vec![y.into(), x.into()]),
                Binary::Sub => row("rsub", vec![y.into(), x.into()]),
                Binary::Div => row("reciprocal", vec![Value::Tensor(t.clone())])
                    .and_then(|r| row("mul", vec![Value::Tensor(r), x.into()])),
                Binary::Pow | Binary::Remainder | Binary::LeftShift | Binary::RightShift => {
                    row(op.name(), vec![x.into(), y.into()])
                }
                _ => binary(op, &x, &y),
            },
            _ => binary(op, &x, &y),
        };
        out.py(vm).map(|t| wrap(t, vm))
    })
}

/// Runs the row `torch.<name>` (or `Tensor.<name>`) on positional values:
/// operators are ops like any other (history, narrow dtypes).
pub(super) fn row(name: &str, values: Vec<Value>) -> crate::tensor::Result<Tensor> {
    fxvm_ops::autograd::ops::call(name, values, vec![])
}

/// `tensor op other` with an `other` that overrides `__torch_function__` (a
/// tracer's Proxy): dispatched as PyTorch does, as the Tensor method
/// (`G + x` reaches the override as `Tensor.add(G, x)`).
fn method_dispatch(
    a: &PyObject,
    b: &PyObject,
    method: &'static str,
    vm: &VirtualMachine,
) -> PyResult {
    if a.downcast_ref::<PyTensor>().is_none() {
        return Ok(vm.ctx.not_implemented());
    }
    let Some(func) = PyTensor::class(&vm.ctx).get_attr(vm.ctx.intern_str(method)) else {
        return Ok(vm.ctx.not_implemented());
    };
    let args = FuncArgs::from(vec![a.to_owned(), b.to_owned()]);
    Ok(
        crate::native::ops::torch_function(&func, &format!("Tensor.{method}"), &args, vm)?
            .unwrap_or_else(|| vm.ctx.not_implemented()),
    )
}

/// In-place `a op= b`: computes, then writes back through `a`'s view.
fn inplace(a: &PyObject, b: &PyObject, op: Binary, vm: &VirtualMachine) -> PyResult {
    let (Some(zelf), Some(y)) = (a.downcast_ref::<PyTensor>(), to_arg(&b.to_owned(), vm)) else {
        return Ok(vm.ctx.not_implemented());
    };
    crate::native::guard::guard(op.name(), vm, || {
        let args = vec![Value::Tensor(zelf.tensor()), y.into()];
        fxvm_ops::autograd::ops::call_value(&format!("{}_", op.name()), args, vec![]).py(vm)?;
        Ok(a.to_owned())
    })
}

fn unop(num: PyNumber<'_>, op: Unary, vm: &VirtualMachine) -> PyResult {
    let t = PyTensor::number_downcast(num).tensor();
    crate::native::guard::guard(op.name(), vm, || {
        row(op.name(), vec![Value::Tensor(t)])
            .py(vm)
            .map(|t| wrap(t, vm))
    })
}

impl AsNumber for PyTensor {
    fn as_number() -> &'static PyNumberMethods {
        static AS_NUMBER: PyNumberMethods = PyNumberMethods {
            add: Some(|a, b, vm| binop(a, b, Binary::Add, vm)),
            subtract: Some(|a, b, vm| binop(a, b, Binary::Sub, vm)),
            multiply: Some(|a, b, vm| binop(a, b, Binary::Mul, vm)),
            remainder: Some(|a, b, vm| binop(a, b, Binary::Remainder, vm)),
            power: Some(|a, b, _c, vm| binop(a, b, Binary::Pow, vm)),
            negative: Some(|n, vm| unop(n, Unary::Neg, vm)),
            positive: Some(|n, vm| Ok(wrap(PyTensor::number_downcast(n).tensor(), vm))),
            absolute: Some(|n, vm| unop(n, Unary::Abs, vm)),
            boolean: Some(|n, vm| {
                truth(&PyTensor::number_downcast(n).tensor(), "bool(tensor)", vm)
            }),
            invert: Some(|n, vm| {
                let t = PyTensor::number_downcast(n).tensor();
                // The operator's own message for floats; otherwise the row.
                if t.dtype().is_float() {
                    return Err(vm.new_type_error(
                        "~ (operator.invert) is only implemented on integer and Boolean-type tensors",
                    ));
                }
                crate::native::guard::guard("bitwise_not", vm, || {
                    row("bitwise_not", vec![Value::Tensor(t)])
                        .py(vm)
                        .map(|t| wrap(t, vm))
                })
            }),
            lshift: Some(|a, b, vm| binop(a, b, Binary::LeftShift, vm)),
            rshift: Some(|a, b, vm| binop(a, b, Binary::RightShift, vm)),
            and: Some(|a, b, vm| binop(a, b, Binary::BitwiseAnd, vm)),
            xor: Some(|a, b, vm| binop(a, b, Binary::BitwiseXor, vm)),
            or: Some(|a, b, vm| binop(a, b, Binary::BitwiseOr, vm)),
            int: Some(|n, vm| {
                let s = python_number(&PyTensor::number_downcast(n).tensor(), vm)?;
                Ok(vm.ctx.new_int(s.to_i64()).into())
            }),
            float: Some(|n, vm| {
                let s = python_number(&PyTensor::number_downcast(n).tensor(), vm)?;
                Ok(vm.ctx.new_float(s.to_f64()).into())
            }),
            inplace_add: Some(|a, b, vm| inplace(a, b, Binary::Add, vm)),
            inplace_subtract: Some(|a, b, vm| inplace(a, b, Binary::Sub, vm)),
            inplace_multiply: Some(|a, b, vm| inplace(a, b, Binary::Mul, vm)),
            inplace_remainder: Some(|a, b, vm| inplace(a, b, Binary::Remainder, vm)),
            inplace_power: Some(|a, b, _c, vm| inplace(a, b, Binary::Pow, vm)),
            inplace_lshift: Some(|a, b, vm| inplace(a, b, Binary::LeftShift, vm)),
            inplace_rshift: Some(|a, b, vm| inplace(a, b, Binary::RightShift, vm)),
            inplace_and: Some(|a, b, vm| inplace(a, b, Binary::BitwiseAnd, vm)),
            inplace_xor: Some(|a, b, vm| inplace(a, b, Binary::BitwiseXor, vm)),
            inplace_or: Some(|a, b, vm| inplace(a, b, Binary::BitwiseOr, vm)),
            floor_divide: Some(|a, b, vm| binop(a, b, Binary::FloorDivide, vm)),
            true_divide: Some(|a, b, vm| binop(a, b, Binary::Div, vm)),
            inplace_floor_divide: Some(|a, b, vm| inplace(a, b, Binary::FloorDivide, vm)),
            inplace_true_divide: Some(|a, b, vm| inplace(a, b, Binary::Div, vm)),
            index: Some(|n, vm| {
                let t = PyTensor::number_downcast(n).tensor();
                if t.numel() != 1 || t.dtype().is_float() {
                    return Err(vm.new_type_error(
                        "only integer tensors of a single element can be converted to an index",
                    ));
                }
                value_read("a tensor as an index", vm);
                Ok(vm.ctx.new_int(t.item().py(vm)?.to_i64()).into())
            }),
            matrix_multiply: Some(|a, b, vm| {
                let (Some(x), Some(y)) =
                    (a.downcast_ref::<PyTensor>(), b.downcast_ref::<PyTensor>())
                else {
                    return method_dispatch(a, b, "matmul", vm);
                };
                crate::native::guard::guard("matmul", vm, || {
                    let args = vec![Value::Tensor(x.tensor()), Value::Tensor(y.tensor())];
                    row("matmul", args).py(vm).map(|t| wrap(t, vm))
                })
            }),
            inplace_matrix_multiply: None,
            divmod: None,
        };
        &AS_NUMBER
    }
}

/// Python reads a tensor's value (`what`): a step being recorded could not
/// replay what the Python does with it.
pub(crate) fn value_read(what: &str, vm: &VirtualMachine) {
    if fxvm_ops::tape::active() {
        let at = crate::location::user_location(vm).map_or(String::new(), |l| format!(" at {l}"));
        fxvm_ops::tape::value_read(&format!("{what}{at}"));
    }
}

/// The truth of a one-element tensor (`bool(t)`, `t.is_nonzero()`, read
/// as `what`); PyTorch's error for other sizes.
pub(super) fn truth(t: &Tensor, what: &str, vm: &VirtualMachine) -> PyResult<bool> {
    match t.numel() {
        1 => {
            value_read(what, vm);
            Ok(t.item().py(vm)?.to_bool())
        }
        n => Err(vm.new_runtime_error(format!(
            "Boolean value of Tensor with {} is ambiguous",
            if n == 0 {
                "no values"
            } else {
                "more than one value"
            }
        ))),
    }
}

/// `int(t)`, `float(t)`: the value of a one-element tensor (PyTorch's
/// ValueError for others, where `t.item()` raises a RuntimeError).
fn python_number(t: &Tensor, vm: &VirtualMachine) -> PyResult<Scalar> {
    if t.numel() != 1 {
        return Err(
            vm.new_value_error("only one element tensors can be converted to Python scalars")
        );
    }
    item(t, vm)
}

pub(super) fn item(t: &Tensor, vm: &VirtualMachine) -> PyResult<Scalar> {
    value_read("Tensor.item", vm);
    t.item().py(vm)
}

impl Comparable for PyTensor {
    fn slot_richcompare(
        zelf: &PyObject,
        other: &PyObject,
        op: PyComparisonOp,
        vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::function::Either<PyObjectRef, PyComparisonValue>> {
        use rustpython_vm::function::Either;
        let op = match op {
            PyComparisonOp::Eq => Binary::Eq,
            PyComparisonOp::Ne => Binary::Ne,
            PyComparisonOp::Lt => Binary::Lt,
            PyComparisonOp::Le => Binary::Le,
            PyComparisonOp::Gt => Binary::Gt,
            _ => Binary::Ge,
        };
        let result = binop(zelf, other, op, vm)?;
        if result.is(&vm.ctx.not_implemented) {
            return Ok(Either::B(PyComparisonValue::NotImplemented));
        }
        Ok(Either::A(result))
    }

    fn cmp(
        _: &Py<Self>,
        _: &PyObject,
        _: PyComparisonOp,
        _: &VirtualMachine,
    ) -> PyResult<PyComparisonValue> {
        unreachable!("slot_richcompare is overridden")
    }
}

impl Hashable for PyTensor {
    fn hash(
        zelf: &Py<Self>,
        _vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::common::hash::PyHash> {
        // Tensors hash by identity, as in PyTorch.
        Ok(zelf.get_id() as rustpython_vm::common::hash::PyHash)
    }
}

impl Representable for PyTensor {
    fn repr_str(zelf: &Py<Self>, vm: &VirtualMachine) -> PyResult<String> {
        let t = zelf.tensor();
        let extra = match t.grad_fn() {
            Some(node) => vec![format!("grad_fn=<{}>", node.name())],
            None if t.requires_grad() => vec!["requires_grad=True".to_owned()],
            None => vec![],
        };
        // PyTorch formats in Python, two frames per dimension; fxvm's
        // formatter recurses natively, so it keeps to the same budget.
        let left = vm
            .recursion_limit
            .get()
            .saturating_sub(vm.current_recursion_depth());
        if 2 * t.ndim() > left {
            return Err(vm.new_recursion_error(
                "maximum recursion depth exceeded while calling a Python object",
            ));
        }
        value_read("printing a tensor", vm);
        crate::native::guard::guard("Tensor.__repr__", vm, || Ok(format::repr(&t, &extra)))
    }
}

impl Iterable for PyTensor {
    fn iter(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        let t = zelf.tensor();
        if t.ndim() == 0 {
            return Err(vm.new_type_error("iteration over a 0-d tensor"));
        }
        let rows = shape::unbind(&t, 0).py(vm)?;
        let list = vm
            .ctx
            .new_list(rows.into_iter().map(|r| wrap(r, vm)).collect());
        list.as_object().get_iter(vm).map(Into::into)
    }
}

impl AsMapping for PyTensor {
    fn as_mapping() -> &'static PyMappingMethods {
        static AS_MAPPING: PyMappingMethods = PyMappingMethods {
            length: atomic_func!(|m, vm| {
                let t = PyTensor::mapping_downcast(m).tensor();
                t.shape()
                    .first()
                    .copied()
                    .ok_or_else(|| vm.new_type_error("len() of a 0-d tensor"))
            }),
            subscript: atomic_func!(|m, needle, vm| {
                if let Some(r) = crate::native::index::dispatch_get(&m.obj.to_owned(), needle, vm)?
                {
                    return Ok(r);
                }
                let t = PyTensor::mapping_downcast(m).tensor();
                crate::native::guard::guard("Tensor.__getitem__", vm, || {
                    crate::native::index::get(&t, needle, vm).map(|t| wrap(t, vm))
                })
            }),
            ass_subscript: atomic_func!(|m, needle, value, vm| {
                let Some(value) = value else {
                    return Err(vm.new_type_error("'Tensor' object does not support item deletion"));
                };
                if crate::native::ops::modes_active() {
                    let func = PyTensor::class(&vm.ctx)
                        .as_object()
                        .get_attr("__setitem__", vm)?;
                    let args = FuncArgs::from(vec![m.obj.to_owned(), needle.to_owned(), value]);
                    return crate::native::ops::mode_dispatch(&func, Vec::new(), &args, vm)
                        .map(drop);
                }
                let t = PyTensor::mapping_downcast(m).tensor();
                crate::native::guard::guard("Tensor.__setitem__", vm, || {
                    crate::native::index::set(&t, needle, &value, vm)
                })
            }),
        };
        &AS_MAPPING
    }
}
