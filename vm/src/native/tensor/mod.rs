//! `torch.Tensor`: the native type over the tensor core and its core
//! attributes (sizes, dtype, device, autograd state …); its Python
//! protocols are in `protocols.rs`. Op methods (`add`, `sum`, `view` …) are
//! generated from the op table in `ops`.

mod protocols;

pub(crate) use protocols::value_read;
use protocols::{item, row, truth};

use rustpython_vm::builtins::PyTypeRef;
use rustpython_vm::common::lock::PyRwLock;
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::types::{
    AsMapping, AsNumber, Comparable, Constructor, Hashable, Iterable, Representable,
};
use rustpython_vm::{
    AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use crate::tensor::layout::MemoryFormat;
use crate::tensor::{DType, Tensor};
use fxvm_ops::Value;

use crate::native::convert::{IntoPy, scalar_to_py, to_list};
use crate::native::dtype::{PyDType, dtype_to_py};
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

#[derive(rustpython_vm::FromArgs)]
struct ContiguityArgs {
    #[pyarg(any, optional)]
    memory_format: OptionalArg<PyObjectRef>,
}

impl Constructor for PyTensor {
    type Args = FuncArgs;

    /// PyTorch's legacy constructor (see [`super::legacy_new`]).
    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        args: FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult<Self> {
        let t = crate::native::legacy_new::legacy_new(None, args, vm)?;
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
        crate::native::classes::attr("numpy", "_from_torch", vm)?.call((t,), vm)
    }

    /// `tensor.untyped_storage()`: the bytes its elements live in (see `torch.storage`).
    #[pymethod]
    fn untyped_storage(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        crate::native::classes::attr("torch.storage", "_untyped_of", vm)?.call((zelf,), vm)
    }

    /// `tensor.storage()`: its storage in its dtype (deprecated by PyTorch).
    #[pymethod]
    fn storage(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult {
        crate::native::classes::attr("torch.storage", "_typed_of", vm)?.call((zelf,), vm)
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
        crate::native::classes::size(self.tensor().shape(), vm)
    }

    #[pymethod]
    fn size(&self, dim: OptionalArg<i64>, vm: &VirtualMachine) -> PyResult {
        let t = self.tensor();
        match dim {
            OptionalArg::Present(d) => {
                Ok(vm.ctx.new_int(t.shape()[t.dim_strict(d).py(vm)?]).into())
            }
            OptionalArg::Missing => crate::native::classes::size(t.shape(), vm),
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
        crate::native::classes::attr("torch", "device", vm)?.call(("cpu",), vm)
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
            Some(node) => crate::native::autograd::node_to_py(node, vm),
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
        let id = t
            .register_hook(crate::native::autograd::tensor_hook(hook))
            .py(vm)?;
        Ok(crate::native::autograd::tensor_handle(t, id, vm))
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
            .register_post_accumulate_grad_hook(crate::native::autograd::post_accumulate_hook(hook))
            .py(vm)?;
        Ok(crate::native::autograd::tensor_handle(t, id, vm))
    }

    #[pygetset]
    fn data(&self, vm: &VirtualMachine) -> PyObjectRef {
        wrap(self.tensor().detach(), vm)
    }

    /// The in-place view ops (`x.unsqueeze_(0)`, `t_`, `transpose_`,
    /// `squeeze_`, `swapdims_`): `t` itself becomes the view the row makes —
    /// the same storage with new sizes and strides, and the view's history
    /// when the row recorded one. A leaf that requires grad is refused while grad
    /// mode records, as PyTorch refuses it.
    fn restride(
        zelf: PyRef<Self>,
        op: &str,
        args: Vec<Value>,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        let t = zelf.tensor();
        if crate::tensor::autograd::records_history() && t.requires_grad() && t.is_leaf() {
            return Err(crate::tensor::TensorError::LeafInPlace).py(vm);
        }
        let mut values = vec![Value::Tensor(t)];
        values.extend(args);
        let view = crate::native::guard::guard(op, vm, || row(op, values).py(vm))?;
        let mut inner = zelf.inner.write();
        // Without history (a leaf, or no grad mode) `t` keeps its own
        // autograd record — requires_grad, .grad, hooks — over the view.
        *inner = if view.grad_fn().is_some() {
            view
        } else {
            inner.with_data_of(&view)
        };
        drop(inner);
        Ok(zelf)
    }

    #[pymethod]
    fn unsqueeze_(zelf: PyRef<Self>, dim: i64, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        Self::restride(zelf, "unsqueeze_", vec![Value::Int(dim)], vm)
    }

    #[pymethod]
    fn squeeze_(
        zelf: PyRef<Self>,
        dim: OptionalArg<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        let dims = match dim {
            OptionalArg::Missing => Value::None,
            OptionalArg::Present(d) if vm.is_none(&d) => Value::None,
            OptionalArg::Present(d) => match d.try_to_value::<i64>(vm) {
                Ok(d) => Value::Int(d),
                Err(_) => Value::Ints(d.try_to_value::<Vec<i64>>(vm)?),
            },
        };
        Self::restride(zelf, "squeeze_", vec![dims], vm)
    }

    #[pymethod]
    fn t_(zelf: PyRef<Self>, vm: &VirtualMachine) -> PyResult<PyRef<Self>> {
        Self::restride(zelf, "t_", vec![], vm)
    }

    #[pymethod]
    #[pymethod(name = "swapdims_")]
    #[pymethod(name = "swapaxes_")]
    fn transpose_(
        zelf: PyRef<Self>,
        dim0: i64,
        dim1: i64,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        Self::restride(
            zelf,
            "transpose_",
            vec![Value::Int(dim0), Value::Int(dim1)],
            vm,
        )
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
        crate::native::guard::guard("Tensor.T", vm, || {
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
        crate::native::guard::guard("Tensor.transpose", vm, || {
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
        crate::native::guard::guard("Tensor.item", vm, || {
            Ok(scalar_to_py(item(&self.tensor(), vm)?, vm))
        })
    }

    #[pymethod]
    fn tolist(&self, vm: &VirtualMachine) -> PyResult {
        value_read("Tensor.tolist", vm);
        crate::native::guard::guard("Tensor.tolist", vm, || Ok(to_list(&self.tensor(), vm)))
    }

    /// `backward(gradient=None, retain_graph=None, create_graph=False,
    /// inputs=None)`, as `torch.autograd.backward(self, ...)`.
    #[pymethod]
    fn backward(zelf: PyRef<Self>, mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        let backward = crate::native::classes::attr("torch.autograd", "_tensor_backward", vm)?;
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
