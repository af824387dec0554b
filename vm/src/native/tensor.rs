//! `torch.Tensor`: the native type over the tensor core, with the number,
//! mapping and comparison protocols and its core attributes. Op methods
//! (`add`, `sum`, `view` …) are generated from the op table in `ops`.

use rustpython_vm::builtins::PyTypeRef;
use rustpython_vm::common::lock::PyRwLock;
use rustpython_vm::function::{FuncArgs, OptionalArg, PyComparisonValue};
use rustpython_vm::protocol::{PyMappingMethods, PyNumber, PyNumberMethods};
use rustpython_vm::types::{
    AsMapping, AsNumber, Comparable, Constructor, Hashable, Iterable, PyComparisonOp, Representable,
};
use rustpython_vm::{
    AsObject, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, atomic_func,
    pyclass,
};

use crate::tensor::layout::MemoryFormat;
use crate::tensor::ops::elementwise::{Arg, Binary, Unary, binary};
use crate::tensor::ops::shape;
use crate::tensor::{DType, Scalar, Tensor, format};
use fxvm_ops::Value;

use super::bind::to_arg;
use super::convert::{IntoPy, scalar_to_py, to_list};
use super::dtype::{PyDType, dtype_to_py};
use crate::text::Utf8;

#[pyclass(module = "torch", name = "Tensor")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyTensor {
    inner: PyRwLock<Tensor>,
}

impl PyTensor {
    pub fn new(t: Tensor) -> PyTensor {
        PyTensor {
            inner: PyRwLock::new(t),
        }
    }

    /// The core handle (a cheap clone; views share storage).
    pub fn tensor(&self) -> Tensor {
        self.inner.read().clone()
    }
}

/// A core tensor as a new `torch.Tensor` object.
pub(crate) fn wrap(t: Tensor, vm: &VirtualMachine) -> PyObjectRef {
    PyTensor::new(t).into_ref(&vm.ctx).into()
}

/// An operator's operand: a tensor, a number, or (as PyTorch's operators
/// take them) a numpy array.
fn operand(o: &PyObject, vm: &VirtualMachine) -> PyResult<Option<Arg>> {
    let o = o.to_owned();
    if let Some(arg) = to_arg(&o, vm) {
        return Ok(Some(arg));
    }
    super::numpy::array_tensor(&o, vm)
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
    if super::ops::modes_active() {
        return method_dispatch(a, b, method(), vm);
    }
    let (Some(x), Some(y)) = (operand(a, vm)?, operand(b, vm)?) else {
        return method_dispatch(a, b, method(), vm);
    };
    super::guard::guard(op.name(), vm, || {
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
fn row(name: &str, values: Vec<Value>) -> crate::tensor::Result<Tensor> {
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
        super::ops::torch_function(&func, &format!("Tensor.{method}"), &args, vm)?
            .unwrap_or_else(|| vm.ctx.not_implemented()),
    )
}

/// In-place `a op= b`: computes, then writes back through `a`'s view.
fn inplace(a: &PyObject, b: &PyObject, op: Binary, vm: &VirtualMachine) -> PyResult {
    let (Some(zelf), Some(y)) = (a.downcast_ref::<PyTensor>(), to_arg(&b.to_owned(), vm)) else {
        return Ok(vm.ctx.not_implemented());
    };
    super::guard::guard(op.name(), vm, || {
        let args = vec![Value::Tensor(zelf.tensor()), y.into()];
        fxvm_ops::autograd::ops::call_value(&format!("{}_", op.name()), args, vec![]).py(vm)?;
        Ok(a.to_owned())
    })
}

fn unop(num: PyNumber<'_>, op: Unary, vm: &VirtualMachine) -> PyResult {
    let t = PyTensor::number_downcast(num).tensor();
    super::guard::guard(op.name(), vm, || {
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
                super::guard::guard("bitwise_not", vm, || {
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
                super::guard::guard("matmul", vm, || {
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
fn truth(t: &Tensor, what: &str, vm: &VirtualMachine) -> PyResult<bool> {
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

fn item(t: &Tensor, vm: &VirtualMachine) -> PyResult<Scalar> {
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

#[derive(rustpython_vm::FromArgs)]
struct ContiguityArgs {
    #[pyarg(any, optional)]
    memory_format: OptionalArg<PyObjectRef>,
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
        super::guard::guard("Tensor.__repr__", vm, || Ok(format::repr(&t, &extra)))
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
                if let Some(r) = super::index::dispatch_get(&m.obj.to_owned(), needle, vm)? {
                    return Ok(r);
                }
                let t = PyTensor::mapping_downcast(m).tensor();
                super::guard::guard("Tensor.__getitem__", vm, || {
                    super::index::get(&t, needle, vm).map(|t| wrap(t, vm))
                })
            }),
            ass_subscript: atomic_func!(|m, needle, value, vm| {
                let Some(value) = value else {
                    return Err(vm.new_type_error("'Tensor' object does not support item deletion"));
                };
                if super::ops::modes_active() {
                    let func = PyTensor::class(&vm.ctx)
                        .as_object()
                        .get_attr("__setitem__", vm)?;
                    let args = FuncArgs::from(vec![m.obj.to_owned(), needle.to_owned(), value]);
                    return super::ops::mode_dispatch(&func, Vec::new(), &args, vm).map(drop);
                }
                let t = PyTensor::mapping_downcast(m).tensor();
                super::guard::guard("Tensor.__setitem__", vm, || {
                    super::index::set(&t, needle, &value, vm)
                })
            }),
        };
        &AS_MAPPING
    }
}

impl Constructor for PyTensor {
    type Args = FuncArgs;

    /// PyTorch's legacy constructor (see [`super::legacy_new`]).
    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        args: FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult<Self> {
        let t = super::legacy_new::legacy_new(None, args, vm)?;
        Ok(PyTensor::new(t))
    }
}

#[pyclass(
    flags(BASETYPE, HAS_DICT),
    with(
        AsNumber,
        AsMapping,
        Comparable,
        Hashable,
        Representable,
        Iterable,
        Constructor
    )
)]
impl PyTensor {
    /// `Tensor._make_subclass(cls, data, require_grad)`: a `cls` instance viewing `data`.
    #[pystaticmethod]
    fn _make_subclass(
        cls: PyTypeRef,
        data: PyRef<PyTensor>,
        require_grad: OptionalArg<bool>,
        vm: &VirtualMachine,
    ) -> PyResult {
        let t = data.tensor().detach();
        t.set_requires_grad(require_grad.unwrap_or(false)).py(vm)?;
        Ok(PyTensor::new(t).into_ref_with_type(vm, cls)?.into())
    }

    /// `Tensor.numpy(force=False)`: a numpy array over this tensor's
    /// elements (writes show on both sides).
    #[pymethod]
    fn numpy(zelf: PyRef<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        let force = match args.kwargs.get("force").or(args.args.first()) {
            Some(f) => f.clone().try_to_bool(vm)?,
            None => false,
        };
        let t = zelf.tensor();
        if t.requires_grad() && !force {
            return Err(vm.new_runtime_error(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.",
            ));
        }
        let t = wrap(t.detach(), vm);
        super::classes::attr("numpy", "_from_torch", vm)?.call((t,), vm)
    }

    /// `tensor.untyped_storage()`: the bytes its elements live in (see `torch.storage`).
    #[pymethod]
    fn untyped_storage(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        super::classes::attr("torch.storage", "_untyped_of", vm)?.call((zelf,), vm)
    }

    /// `tensor.storage()`: its storage in its dtype (deprecated by PyTorch).
    #[pymethod]
    fn storage(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        super::classes::attr("torch.storage", "_typed_of", vm)?.call((zelf,), vm)
    }

    /// `Tensor.as_subclass(cls)`: the same tensor (data and autograd
    /// history) as an instance of the `Tensor` subclass `cls`.
    #[pymethod]
    fn as_subclass(zelf: PyRef<Self>, cls: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let cls: PyTypeRef = cls.downcast().map_err(|o| {
            vm.new_type_error(format!("cls must be a type (got {})", o.class().name()))
        })?;
        if !cls.fast_issubclass(PyTensor::class(&vm.ctx)) {
            return Err(vm.new_type_error("Creating a Tensor subclass from a class that does not inherit from Tensor is not possible. Make sure your class inherits from Tensor."));
        }
        Ok(PyTensor::new(zelf.tensor())
            .into_ref_with_type(vm, cls)?
            .into())
    }

    /// `copy.deepcopy`: same class, copied data, `requires_grad` and a
    /// deep-copied `__dict__` (so `Parameter`s and tagged tensors survive).
    #[pymethod]
    fn __deepcopy__(zelf: PyRef<Self>, memo: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let src = zelf.tensor();
        if !src.is_leaf() {
            return Err(vm.new_runtime_error(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy protocol at the moment.  If you were attempting to deepcopy a module, this may be because of a torch.nn.utils.weight_norm usage, see https://github.com/pytorch/pytorch/pull/103001",
            ));
        }
        // As PyTorch: the whole storage is copied once per deepcopy (views
        // copied together share the copy) and the view keeps its layout.
        let key = vm.new_tuple(("fxvm storage", src.storage_id()));
        let storage = match memo.get_item(key.as_object(), vm) {
            Ok(copied) => copied
                .downcast::<PyTensor>()
                .map_err(|_| vm.new_type_error("deepcopy memo holds a non-tensor storage"))?
                .tensor(),
            Err(_) => {
                let copied = src.whole_storage().copy();
                memo.set_item(key.as_object(), wrap(copied.clone(), vm), vm)?;
                copied
            }
        };
        let layout = src.layout();
        let t = storage
            .as_strided(&layout.shape, &layout.strides, layout.offset)
            .py(vm)?;
        t.set_requires_grad(src.requires_grad()).py(vm)?;
        if let Some(g) = src.grad() {
            t.set_grad(Some(g.copy())).py(vm)?;
        }
        let copy: PyObjectRef = PyTensor::new(t)
            .into_ref_with_type(vm, zelf.class().to_owned())?
            .into();
        if let Some(dict) = zelf.as_object().dict()
            && dict.__len__() > 0
        {
            let deepcopy = vm.import("copy", 0)?.get_attr("deepcopy", vm)?;
            let copied = deepcopy.call((dict, memo), vm)?;
            let target = copy
                .dict()
                .ok_or_else(|| vm.new_type_error("tensor without __dict__"))?;
            for (k, v) in copied
                .downcast::<rustpython_vm::builtins::PyDict>()
                .map_err(|_| vm.new_type_error("__dict__ copy is not a dict"))?
                .into_iter()
            {
                target.set_item(&*k, v, vm)?;
            }
        }
        Ok(copy)
    }

    #[pygetset]
    fn shape(&self, vm: &VirtualMachine) -> PyResult {
        super::classes::size(self.tensor().shape(), vm)
    }

    #[pymethod]
    fn size(&self, dim: OptionalArg<i64>, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        match dim {
            OptionalArg::Present(d) => {
                Ok(vm.ctx.new_int(t.shape()[t.dim_strict(d).py(vm)?]).into())
            }
            OptionalArg::Missing => super::classes::size(t.shape(), vm),
        }
    }

    #[pymethod]
    fn stride(&self, dim: OptionalArg<i64>, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        match dim {
            OptionalArg::Present(d) => {
                Ok(vm.ctx.new_int(t.strides()[t.dim_strict(d).py(vm)?]).into())
            }
            OptionalArg::Missing => Ok(vm
                .ctx
                .new_tuple(
                    t.strides()
                        .iter()
                        .map(|&s| vm.ctx.new_int(s).into())
                        .collect(),
                )
                .into()),
        }
    }

    #[pymethod]
    fn data_ptr(&self) -> usize {
        self.tensor().data_ptr()
    }

    #[pymethod]
    fn storage_offset(&self) -> usize {
        self.tensor().layout().offset
    }

    #[pygetset]
    fn dtype(&self, vm: &VirtualMachine) -> PyResult {
        dtype_to_py(self.tensor().dtype(), vm)
    }

    #[pygetset]
    fn ndim(&self) -> usize {
        self.tensor().ndim()
    }

    #[pymethod]
    fn dim(&self) -> usize {
        self.tensor().ndim()
    }

    #[pymethod]
    fn ndimension(&self) -> usize {
        self.tensor().ndim()
    }

    #[pymethod]
    fn numel(&self) -> usize {
        self.tensor().numel()
    }

    #[pymethod]
    fn nelement(&self) -> usize {
        self.tensor().numel()
    }

    #[pymethod]
    fn element_size(&self) -> usize {
        self.tensor().dtype().itemsize()
    }

    /// `memory_format` is one of `torch.contiguous_format`, `torch.channels_last`
    /// and `torch.channels_last_3d` (objects of the frozen `torch` package).
    #[pymethod]
    fn is_contiguous(&self, args: ContiguityArgs, vm: &VirtualMachine) -> PyResult<bool> {
        let t = self.tensor();
        let format = match args.memory_format.into_option() {
            Some(f) => f.str(vm)?.text(vm)?.to_owned(),
            None => return Ok(t.is_contiguous()),
        };
        match format.strip_prefix("torch.").and_then(MemoryFormat::from_name) {
            Some(MemoryFormat::Preserve) => Err(vm.new_runtime_error(
                "preserve memory format is unsupported by the contiguous operator",
            )),
            Some(format) => Ok(t.is_in_format(format)),
            None => Err(vm.new_type_error(format!(
                "is_contiguous(): argument 'memory_format' must be torch.memory_format, not {format}"
            ))),
        }
    }

    /// `tensor.type()`: the legacy type name; `tensor.type(dtype)`: a cast.
    #[pymethod(name = "type")]
    fn type_(zelf: PyRef<Self>, dtype: OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> PyResult {
        let t = zelf.tensor();
        let Some(dtype) = dtype.into_option().filter(|d| !vm.is_none(d)) else {
            return Ok(vm
                .ctx
                .new_str(format!(
                    "torch.{}Tensor",
                    crate::tensor::error::legacy_name(t.dtype())
                ))
                .into());
        };
        // A dtype, or a legacy tensor type (`torch.LongTensor`) or its name.
        let dtype = match dtype.class().fast_issubclass(vm.ctx.types.type_type) {
            true => dtype.get_attr("dtype", vm).unwrap_or(dtype),
            false => dtype,
        };
        let target = match dtype.downcast_ref::<PyDType>() {
            Some(d) => d.dtype(vm)?,
            None => {
                let name = dtype.str(vm)?;
                let name = name.text(vm)?;
                DType::ALL
                    .into_iter()
                    .find(|d| {
                        format!("torch.{}Tensor", crate::tensor::error::legacy_name(*d)) == name
                    })
                    .ok_or_else(|| vm.new_value_error(format!("invalid type: '{name}'")))?
            }
        };
        if target == t.dtype() {
            return Ok(zelf.into());
        }
        Ok(wrap(t.to_dtype(target), vm))
    }

    /// Quantized tensors do not exist in fxvm.
    #[pygetset]
    fn is_quantized(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_floating_point(&self) -> bool {
        self.tensor().dtype().is_float()
    }

    #[pygetset]
    fn is_cuda(&self) -> bool {
        false
    }

    #[pygetset]
    fn is_cpu(&self) -> bool {
        true
    }

    /// fxvm tensors are dense, real and on the CPU: every other kind or
    /// device flag PyTorch has is false.
    #[pygetset]
    fn is_xpu(&self) -> bool {
        false
    }

    #[pygetset]
    fn is_mps(&self) -> bool {
        false
    }

    #[pygetset]
    fn is_meta(&self) -> bool {
        false
    }

    #[pygetset]
    fn is_sparse(&self) -> bool {
        false
    }

    /// Every fxvm tensor is strided: `torch.strided`.
    #[pygetset]
    fn layout(&self, vm: &VirtualMachine) -> PyResult {
        vm.import("torch", 0)?.get_attr("strided", vm)
    }

    #[pygetset]
    fn is_mkldnn(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_complex(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_conj(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_neg(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_inference(&self) -> bool {
        false
    }

    #[pymethod]
    fn is_signed(&self) -> bool {
        self.tensor().dtype().is_signed()
    }

    #[pymethod]
    fn is_same_size(&self, other: PyRef<PyTensor>) -> bool {
        self.tensor().shape() == other.tensor().shape()
    }

    /// The truth of a one-element tensor, as `bool(t)` reads it.
    #[pymethod]
    fn is_nonzero(&self, vm: &VirtualMachine) -> PyResult<bool> {
        truth(&self.tensor(), "Tensor.is_nonzero", vm)
    }

    #[pygetset]
    fn device(&self, vm: &VirtualMachine) -> PyResult {
        super::classes::attr("torch", "device", vm)?.call(("cpu",), vm)
    }

    #[pygetset]
    fn requires_grad(&self) -> bool {
        self.tensor().requires_grad()
    }

    #[pygetset(setter)]
    fn set_requires_grad(&self, value: bool, vm: &VirtualMachine) -> PyResult<()> {
        self.tensor().set_requires_grad(value).py(vm)
    }

    #[pymethod]
    fn requires_grad_(
        zelf: PyRef<Self>,
        requires_grad: OptionalArg<bool>,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        zelf.set_requires_grad(requires_grad.unwrap_or(true), vm)?;
        Ok(zelf)
    }

    #[pygetset]
    fn is_leaf(&self) -> bool {
        self.tensor().is_leaf()
    }

    #[pygetset]
    fn grad(&self, vm: &VirtualMachine) -> PyObjectRef {
        self.tensor().grad().map_or(vm.ctx.none(), |g| wrap(g, vm))
    }

    #[pygetset(setter)]
    fn set_grad(
        &self,
        value: rustpython_vm::function::PySetterValue<Option<PyRef<PyTensor>>>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let grad = match value {
            rustpython_vm::function::PySetterValue::Assign(g) => g.map(|g| g.tensor()),
            rustpython_vm::function::PySetterValue::Delete => None,
        };
        fxvm_ops::tape::set_grad(&self.tensor(), grad).py(vm)
    }

    #[pygetset]
    fn grad_fn(&self, vm: &VirtualMachine) -> PyResult {
        match self.tensor().grad_fn() {
            Some(node) => super::autograd::node_to_py(node, vm),
            None => Ok(vm.ctx.none()),
        }
    }

    #[pygetset]
    fn output_nr(&self) -> usize {
        self.tensor().output_nr()
    }

    /// The storage's version counter (writes so far).
    #[pygetset]
    fn _version(&self) -> u64 {
        self.tensor().version()
    }

    #[pygetset]
    fn retains_grad(&self) -> bool {
        self.tensor().retains_grad()
    }

    #[pymethod]
    fn retain_grad(&self, vm: &VirtualMachine) -> PyResult<()> {
        self.tensor().retain_grad().py(vm)
    }

    /// `hook(grad)` on this tensor's gradient; a handle removes it.
    #[pymethod]
    fn register_hook(&self, hook: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        let id = t.register_hook(super::autograd::tensor_hook(hook)).py(vm)?;
        Ok(super::autograd::tensor_handle(t, id, vm))
    }

    /// `hook(tensor)` after a gradient accumulates into this leaf's `.grad`.
    #[pymethod]
    fn register_post_accumulate_grad_hook(
        &self,
        hook: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        let t = self.tensor();
        let id = t
            .register_post_accumulate_grad_hook(super::autograd::post_accumulate_hook(hook))
            .py(vm)?;
        Ok(super::autograd::tensor_handle(t, id, vm))
    }

    #[pygetset]
    fn data(&self, vm: &VirtualMachine) -> PyObjectRef {
        wrap(self.tensor().detach(), vm)
    }

    /// `t.data = other`: `t` keeps its autograd record over `other`'s data.
    #[pygetset(setter)]
    fn set_data(&self, value: PyRef<PyTensor>) {
        let mut inner = self.inner.write();
        *inner = inner.with_data_of(&value.tensor());
    }

    /// `t.T`: the dims reversed, through the `permute` row (so with history).
    #[pygetset(name = "T")]
    fn transposed(&self, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        let order: Vec<i64> = (0..t.ndim() as i64).rev().collect();
        super::guard::guard("Tensor.T", vm, || {
            row("permute", vec![Value::Tensor(t), Value::Ints(order)])
                .py(vm)
                .map(|t| wrap(t, vm))
        })
    }

    /// `t.mT` (and `t.mH`, the same for real tensors): the last two dims
    /// swapped.
    #[pygetset(name = "mT")]
    fn matrix_transposed(&self, vm: &VirtualMachine) -> PyResult {
        self.swap_last_two("mT", true, vm)
    }

    #[pygetset(name = "mH")]
    fn matrix_adjoint(&self, vm: &VirtualMachine) -> PyResult {
        self.swap_last_two("mH", true, vm)
    }

    /// `t.H`: the adjoint of a matrix (its transpose, for real tensors).
    #[pygetset(name = "H")]
    fn adjoint(&self, vm: &VirtualMachine) -> PyResult {
        self.swap_last_two("H", false, vm)
    }

    /// The `transpose(-2, -1)` row for `t.<name>`, over batches of
    /// matrices when `batched`, else exactly a matrix.
    fn swap_last_two(&self, name: &str, batched: bool, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        let n = t.ndim();
        if batched && n < 2 {
            return Err(vm.new_runtime_error(format!(
                "tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor."
            )));
        }
        if !batched && n != 2 {
            return Err(vm.new_runtime_error(format!(
                "tensor.{name} is only supported on matrices (2-D tensors). Got {n}-D tensor."
            )));
        }
        super::guard::guard("Tensor.transpose", vm, || {
            row(
                "transpose",
                vec![Value::Tensor(t), Value::Int(-2), Value::Int(-1)],
            )
            .py(vm)
            .map(|t| wrap(t, vm))
        })
    }

    #[pymethod]
    fn item(&self, vm: &VirtualMachine) -> PyResult {
        super::guard::guard("Tensor.item", vm, || {
            Ok(scalar_to_py(item(&self.tensor(), vm)?, vm))
        })
    }

    #[pymethod]
    fn tolist(&self, vm: &VirtualMachine) -> PyResult {
        value_read("Tensor.tolist", vm);
        super::guard::guard("Tensor.tolist", vm, || Ok(to_list(&self.tensor(), vm)))
    }

    /// `backward(gradient=None, retain_graph=None, create_graph=False,
    /// inputs=None)`, as `torch.autograd.backward(self, ...)`.
    #[pymethod]
    fn backward(zelf: PyRef<Self>, mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        let backward = super::classes::attr("torch.autograd", "_tensor_backward", vm)?;
        args.args.insert(0, zelf.into());
        backward.call(args, vm)
    }

    #[pymethod]
    fn __format__(
        zelf: PyRef<Self>,
        spec: rustpython_vm::builtins::PyStrRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        let t = zelf.tensor();
        if t.ndim() == 0 {
            let v = scalar_to_py(item(&t, vm)?, vm);
            return vm.call_method(&v, "__format__", (spec,));
        }
        vm.call_method(zelf.as_object(), "__repr__", ())
    }

    /// `pickle`: PyTorch's reduction (`torch._utils._reduce_tensor`).
    #[pymethod]
    fn __reduce_ex__(zelf: PyRef<Self>, _protocol: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        crate::native::classes::module("torch._utils", vm)?
            .get_attr("_reduce_tensor", vm)?
            .call((zelf,), vm)
    }
}
