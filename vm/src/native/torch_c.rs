//! `torch._C`: the native half of the frozen `torch` package.

pub(crate) use _c::module_def;

#[rustpython_vm::pymodule(name = "torch._C")]
mod _c {
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::{PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine};

    use crate::native::convert::PyDType;
    use crate::native::tensor::PyTensor;
    use crate::tensor::DType;

    /// The fxvm release that built this module, for `torch.version.fxvm`.
    #[pyattr(name = "_fxvm_version")]
    const FXVM_VERSION: &str = env!("CARGO_PKG_VERSION");

    // Native classes defined outside this module are initialised on first use.
    #[pyattr(name = "Tensor")]
    fn tensor_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyTensor::make_static_type()
    }

    #[pyattr(name = "dtype")]
    fn dtype_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyDType::make_static_type()
    }

    fn dtype(d: DType, vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType::make_static_type();
        PyDType { dtype: d }.into_ref(&vm.ctx)
    }

    #[pyattr(once)]
    fn float32(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::F32, vm)
    }

    #[pyattr(once)]
    fn float64(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::F64, vm)
    }

    #[pyattr(once)]
    fn int32(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::I32, vm)
    }

    #[pyattr(once)]
    fn int64(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::I64, vm)
    }

    #[pyattr(once, name = "bool")]
    fn bool_(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::Bool, vm)
    }

    /// `__torch_function__` dispatch for functions written in Python:
    /// `(True, result)` when an override handled the call, else `(False, None)`.
    #[pyfunction]
    fn _handle_torch_function(
        func: PyObjectRef,
        args: rustpython_vm::builtins::PyTupleRef,
        kwargs: rustpython_vm::function::OptionalArg<rustpython_vm::builtins::PyDictRef>,
        vm: &VirtualMachine,
    ) -> PyResult<(bool, PyObjectRef)> {
        let mut call = rustpython_vm::function::FuncArgs::from(args.as_slice().to_vec());
        if let rustpython_vm::function::OptionalArg::Present(kw) = kwargs {
            for (k, v) in kw {
                let key = k.downcast::<rustpython_vm::builtins::PyStr>().map_err(|_| vm.new_type_error("keywords must be strings"))?;
                call.kwargs.insert(key.expect_str().to_owned(), v);
            }
        }
        let name = func.get_attr("__name__", vm).ok().and_then(|n| n.str(vm).ok()).map(|s| s.expect_str().to_owned()).unwrap_or_default();
        match crate::native::ops::torch_function(&func, &name, &call, vm)? {
            Some(r) => Ok((true, r)),
            None => Ok((false, vm.ctx.none())),
        }
    }

    /// Installs the generated `Tensor` methods and returns the generated
    /// `(torch functions, torch.nn.functional functions)` as two dicts.
    #[pyfunction]
    fn _bind_ops(vm: &VirtualMachine) -> PyResult<(PyObjectRef, PyObjectRef)> {
        crate::native::ops::bind(vm)
    }
}
