//! `torch._C`: the native half of the frozen `torch` package.

pub(crate) use _c::module_def;

#[rustpython_vm::pymodule(name = "torch._C")]
mod _c {
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::{PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine};

    use crate::native::dtype::PyDType;
    use crate::native::generator::PyGenerator;
    use crate::native::tensor::PyTensor;
    use crate::tensor::DType;
    use crate::text::Utf8;

    /// `torch.library`'s schema parsing, by the registry's own parser
    /// (`fxvm_ops::schema::split`): `(name, parameters text, [(type, name,
    /// default, keyword_only)], returns)`, all text as written; a malformed
    /// schema raises PyTorch's RuntimeError.
    #[pyfunction]
    fn _parse_schema(
        text: rustpython_vm::builtins::PyStrRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyObjectRef> {
        let decl = fxvm_ops::schema::split(text.text(vm)?)
            .map_err(|e| vm.new_runtime_error(e.to_string()))?;
        let opt = |t: Option<&str>| -> PyObjectRef {
            t.map_or_else(|| vm.ctx.none(), |t| vm.ctx.new_str(t).into())
        };
        let params = decl
            .params
            .iter()
            .map(|p| {
                let name = if p.varargs {
                    format!("*{}", p.name)
                } else {
                    p.name.to_owned()
                };
                vm.ctx
                    .new_tuple(vec![
                        vm.ctx.new_str(p.ty).into(),
                        vm.ctx.new_str(name).into(),
                        opt(p.default),
                        vm.ctx.new_bool(p.kw_only).into(),
                    ])
                    .into()
            })
            .collect();
        Ok(vm
            .ctx
            .new_tuple(vec![
                vm.ctx.new_str(decl.name).into(),
                vm.ctx.new_str(decl.params_text).into(),
                vm.ctx.new_list(params).into(),
                opt(decl.returns),
            ])
            .into())
    }

    /// Sets the options every tensor `repr` reads (`torch.set_printoptions`
    /// keeps the Python-side values; `threshold` may be `inf`).
    #[pyfunction]
    fn _set_printoptions(
        precision: usize,
        threshold: f64,
        edgeitems: usize,
        linewidth: usize,
        sci_mode: Option<bool>,
    ) {
        crate::tensor::format::set_print_options(crate::tensor::format::PrintOptions {
            precision,
            threshold,
            edgeitems,
            linewidth,
            sci_mode,
        });
    }

    /// The fxvm release that built this module, for `torch.version.fxvm`.
    #[pyattr(name = "_fxvm_version")]
    const FXVM_VERSION: &str = env!("CARGO_PKG_VERSION");

    // Native classes defined outside this module are initialised on first use.
    #[pyattr(name = "Tensor")]
    fn tensor_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyTensor::make_static_type()
    }

    #[pyattr(name = "Generator")]
    fn generator_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyGenerator::make_static_type()
    }

    /// The generator `torch.manual_seed` reseeds and ops use by default
    /// (one per interpreter: a thread may give its interpreter its own).
    #[pyattr]
    fn default_generator(vm: &VirtualMachine) -> PyObjectRef {
        PyGenerator::make_static_type();
        PyGenerator::wrap(crate::tensor::random::Generator::default_cpu(), vm)
    }

    #[pyattr(name = "dtype")]
    fn dtype_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyDType::make_static_type()
    }

    fn dtype(d: DType, vm: &VirtualMachine) -> PyRef<PyDType> {
        PyDType::make_static_type();
        PyDType::stored(d).into_ref(&vm.ctx)
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

    #[pyattr(once)]
    fn float16(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::F16, vm)
    }

    #[pyattr(once)]
    fn bfloat16(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::BF16, vm)
    }

    #[pyattr(once)]
    fn uint8(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::U8, vm)
    }

    #[pyattr(once)]
    fn int8(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::I8, vm)
    }

    #[pyattr(once)]
    fn int16(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::I16, vm)
    }

    #[pyattr(once, name = "bool")]
    fn bool_(vm: &VirtualMachine) -> PyRef<PyDType> {
        dtype(DType::Bool, vm)
    }

    /// The device types `torch.device` accepts (what tensor creation checks).
    #[pyattr(once)]
    fn _device_types(vm: &VirtualMachine) -> PyObjectRef {
        let names = crate::native::bind::DEVICE_TYPES
            .iter()
            .map(|n| vm.ctx.new_str(*n).into())
            .collect();
        vm.ctx.new_tuple(names).into()
    }

    /// `torch.get_default_dtype()`.
    #[pyfunction]
    fn _get_default_dtype(vm: &VirtualMachine) -> PyResult {
        crate::native::dtype::dtype_to_py(crate::tensor::dtype::default_float(), vm)
    }

    /// `torch.set_default_dtype(d)`: the dtype float data and float-making
    /// ops default to, process-wide.
    #[pyfunction]
    fn _set_default_dtype(d: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        use crate::native::convert::IntoPy;
        let d = crate::native::dtype::dtype_from_py(&d, vm)?;
        crate::tensor::dtype::set_default_float(d).py(vm)
    }

    /// `torch.<Type>Tensor(*args, **kwargs)`: the legacy constructor making
    /// tensors of the class's dtype (the first argument).
    #[pyfunction]
    fn _legacy_new(mut args: rustpython_vm::function::FuncArgs, vm: &VirtualMachine) -> PyResult {
        let dtype = args
            .take_positional()
            .ok_or_else(|| vm.new_type_error("_legacy_new() needs a dtype"))?;
        let dtype = crate::native::dtype::dtype_from_py(&dtype, vm)?;
        let t = crate::native::legacy_new::legacy_new(Some(dtype), args, vm)?;
        Ok(crate::native::tensor::wrap(t, vm))
    }

    /// The dtypes PyTorch names that fxvm stores no tensors of, by name
    /// (`torch` binds each at its top level).
    #[pyattr(once)]
    fn _unstored_dtypes(vm: &VirtualMachine) -> PyObjectRef {
        use crate::native::dtype::{Kind, UNSTORED};
        PyDType::make_static_type();
        let dict = vm.ctx.new_dict();
        for u in UNSTORED {
            let d = PyDType {
                kind: Kind::Unstored(u),
            }
            .into_ref(&vm.ctx);
            dict.set_item(u.name, d.into(), vm)
                .expect("a fresh dict takes string keys");
        }
        dict.into()
    }

    std::thread_local! {
        /// Set while an override runs a Python-level function's own body.
        static BODY_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// `nn.Module.__call__` made from its `_call_impl` (see `module_methods`).
    #[pyfunction]
    fn _module_call(call_impl: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        crate::native::module_methods::call_method(call_impl, vm)
    }

    /// `nn.Module.__getattr__` (see `module_methods`).
    #[pyfunction]
    fn _module_getattr(vm: &VirtualMachine) -> PyObjectRef {
        crate::native::module_methods::getattr_method(vm)
    }

    /// `nn.Module.__getattribute__` made from its `__getattr__` (see `module_methods`).
    #[pyfunction]
    fn _module_getattribute(module_getattr: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        crate::native::module_methods::getattribute_method(module_getattr, vm)
    }

    /// Sets a new module's registries and hook tables (see `module_methods`).
    #[pyfunction]
    fn _module_init_state(module: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        crate::native::module_methods::init_state(&module, vm)
    }

    /// Reports a change of a module's mode or registered members (see `module_state`).
    #[pyfunction]
    fn _module_state_changed() {
        crate::native::module_state::changed();
    }

    /// Whether a step is being recorded (`fxvm_ops::tape`), for the Python
    /// parts of torch that must say how they replay.
    #[pyfunction]
    fn _step_recording() -> bool {
        fxvm_ops::tape::active()
    }

    /// Marks the step being recorded as one that cannot replay.
    #[pyfunction]
    fn _step_refuse(reason: String) {
        fxvm_ops::tape::refuse(reason);
    }

    /// Pauses the recording for Python every replay runs again (an
    /// optimizer's step): the call step's number, or None.
    #[pyfunction]
    fn _step_pause_for_call() -> Option<usize> {
        fxvm_ops::tape::pause_for_call()
    }

    /// Marks the next op recorded as taking live keyword arguments (an
    /// optimizer's hyperparameters): their set's number, or None.
    #[pyfunction]
    fn _step_live_args() -> Option<usize> {
        fxvm_ops::tape::live_args()
    }

    /// Pauses the recording around work that is not the step's.
    #[pyfunction]
    fn _step_suspend() {
        fxvm_ops::tape::suspend();
    }

    /// Ends `_step_pause_for_call` or `_step_suspend`.
    #[pyfunction]
    fn _step_resume() {
        fxvm_ops::tape::resume();
    }

    /// The count of module-state changes so far (see `module_state`).
    #[pyfunction]
    fn _module_state_epoch() -> u64 {
        crate::native::module_state::epoch()
    }

    /// `func(*args, **kwargs)` with the functions written in Python running
    /// their own bodies rather than dispatching `__torch_function__` (what
    /// an override that decomposes them needs, as PyTorch's
    /// `DisableTorchFunctionSubclass`); builtin ops still dispatch.
    #[pyfunction]
    fn _run_without_torch_function(
        func: PyObjectRef,
        args: rustpython_vm::function::FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult {
        let before = BODY_ONLY.with(|b| b.replace(true));
        let result = func.call(args, vm);
        BODY_ONLY.with(|b| b.set(before));
        result
    }

    /// Enters a `TorchFunctionMode` (see `torch.overrides`).
    #[pyfunction]
    fn _push_torch_function_mode(mode: PyObjectRef) {
        crate::native::ops::push_mode(mode);
    }

    /// Leaves the innermost `TorchFunctionMode`, returning it.
    #[pyfunction]
    fn _pop_torch_function_mode(vm: &VirtualMachine) -> PyResult {
        crate::native::ops::pop_mode()
            .ok_or_else(|| vm.new_runtime_error("Trying to pop from an empty mode stack"))
    }

    /// The active `TorchFunctionMode`s, outermost first.
    #[pyfunction]
    fn _torch_function_modes(vm: &VirtualMachine) -> PyObjectRef {
        vm.ctx.new_list(crate::native::ops::modes()).into()
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
        if BODY_ONLY.with(|b| b.get()) {
            return Ok((false, vm.ctx.none()));
        }
        let mut call = rustpython_vm::function::FuncArgs::from(args.as_slice().to_vec());
        if let rustpython_vm::function::OptionalArg::Present(kw) = kwargs {
            for (k, v) in kw {
                let key = k
                    .downcast::<rustpython_vm::builtins::PyStr>()
                    .map_err(|_| vm.new_type_error("keywords must be strings"))?;
                call.kwargs.insert(key.text(vm)?.to_owned(), v);
            }
        }
        let name = func
            .get_attr("__name__", vm)
            .ok()
            .and_then(|n| n.str(vm).ok())
            .map(|s| s.lossy().into_owned())
            .unwrap_or_default();
        match crate::native::ops::torch_function(&func, &name, &call, vm)? {
            Some(r) => Ok((true, r)),
            None => Ok((false, vm.ctx.none())),
        }
    }

    /// `torch.load`'s native half: reads a checkpoint from the file's bytes
    /// and builds its object. `safe_globals` maps full names to the
    /// user's allow-listed objects; `find_class` (weights_only=False) resolves
    /// any other global.
    #[pyfunction]
    fn _load_checkpoint(
        source: rustpython_vm::builtins::PyBytesRef,
        weights_only: bool,
        safe_globals: rustpython_vm::builtins::PyDictRef,
        find_class: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        let data = std::sync::Arc::new(source.as_bytes().to_vec());
        load_checkpoint(
            Source::Bytes(data),
            weights_only,
            safe_globals,
            find_class,
            vm,
        )
    }

    /// `torch.load` of a file path: each storage read into a buffer of its
    /// own, or (`mmap`) the file mapped and storages read in place from it
    /// until written.
    #[pyfunction]
    fn _load_checkpoint_file(
        path: String,
        mmap: bool,
        weights_only: bool,
        safe_globals: rustpython_vm::builtins::PyDictRef,
        find_class: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        crate::policy::check_read(vm, "torch.load", &path)?;
        let io_error = |e: std::io::Error| vm.new_os_error(format!("{path}: {e}"));
        let file = std::fs::File::open(&path).map_err(io_error)?;
        let source = if mmap {
            let data = fxvm_checkpoint::source::map(&file).map_err(io_error)?;
            Source::Mapped(data, file)
        } else {
            Source::File(file)
        };
        load_checkpoint(source, weights_only, safe_globals, find_class, vm)
    }

    /// Where `torch.load` reads a checkpoint from.
    enum Source {
        Bytes(fxvm_tensor::buffer::SharedBytes),
        Mapped(fxvm_tensor::buffer::SharedBytes, std::fs::File),
        File(std::fs::File),
    }

    /// Builds a checkpoint's object.
    fn load_checkpoint(
        source: Source,
        weights_only: bool,
        safe_globals: rustpython_vm::builtins::PyDictRef,
        find_class: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        use crate::native::load::{Loader, Policy, unpickling_error};
        let ck = match source {
            Source::Bytes(data) => fxvm_checkpoint::Checkpoint::open_shared(data),
            Source::Mapped(data, file) => fxvm_checkpoint::Checkpoint::open_mapped(data, file),
            Source::File(file) => fxvm_checkpoint::Checkpoint::open_file(file),
        }
        .map_err(|e| match e {
            fxvm_checkpoint::CheckpointError::UnsupportedDType(_) => {
                vm.new_not_implemented_error(e.to_string())
            }
            fxvm_checkpoint::CheckpointError::Pickle(p) => unpickling_error(p.message, vm),
            e => vm.new_runtime_error(e.to_string()),
        })?;
        let policy = if weights_only {
            Policy::WeightsOnly { user: safe_globals }
        } else {
            Policy::Trusted { find_class }
        };
        Loader::new(&ck, policy, vm).load()
    }

    /// The tensors (sorted by name) and `__metadata__` of a safetensors
    /// file's bytes; a damaged file raises ValueError with the reason.
    #[pyfunction]
    fn _safetensors_load(
        data: rustpython_vm::builtins::PyBytesRef,
        vm: &VirtualMachine,
    ) -> PyResult<(PyObjectRef, PyObjectRef)> {
        safetensors_load(std::sync::Arc::new(data.as_bytes().to_vec()), vm)
    }

    /// `_safetensors_load` of the file at `path`, memory-mapped: tensors are
    /// read in place and paged in as they are touched.
    #[pyfunction]
    fn _safetensors_load_file(
        path: String,
        vm: &VirtualMachine,
    ) -> PyResult<(PyObjectRef, PyObjectRef)> {
        crate::policy::check_read(vm, "safetensors load_file", &path)?;
        let data = std::fs::File::open(&path)
            .and_then(|file| fxvm_checkpoint::source::map(&file))
            .map_err(|e| vm.new_os_error(format!("{path}: {e}")))?;
        safetensors_load(data, vm)
    }

    fn safetensors_load(
        data: fxvm_tensor::buffer::SharedBytes,
        vm: &VirtualMachine,
    ) -> PyResult<(PyObjectRef, PyObjectRef)> {
        let loaded = fxvm_checkpoint::safetensors::load(&data)
            .map_err(|e| vm.new_value_error(e.to_string()))?;
        let tensors: Vec<PyObjectRef> = loaded
            .tensors
            .into_iter()
            .map(|(name, t)| {
                vm.ctx
                    .new_tuple(vec![
                        vm.ctx.new_str(name).into(),
                        crate::native::tensor::wrap(t, vm),
                    ])
                    .into()
            })
            .collect();
        let metadata = match loaded.metadata {
            Some(m) => {
                let d = vm.ctx.new_dict();
                let mut entries: Vec<_> = m.into_iter().collect();
                entries.sort();
                for (k, v) in entries {
                    d.set_item(k.as_str(), vm.ctx.new_str(v).into(), vm)?;
                }
                d.into()
            }
            None => vm.ctx.none(),
        };
        Ok((vm.ctx.new_list(tensors).into(), metadata))
    }

    /// A safetensors file's bytes for tensors by name and string metadata
    /// (a dict, or None).
    #[pyfunction]
    fn _safetensors_save(
        names: Vec<rustpython_vm::builtins::PyStrRef>,
        tensors: Vec<PyRef<PyTensor>>,
        metadata: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::builtins::PyBytesRef> {
        let tensors: Vec<(String, crate::tensor::Tensor)> = names
            .iter()
            .zip(&tensors)
            .map(|(n, t)| Ok((n.text(vm)?.to_owned(), t.tensor())))
            .collect::<PyResult<_>>()?;
        let metadata = match metadata.downcast_ref::<rustpython_vm::builtins::PyDict>() {
            None => None,
            Some(d) => Some(
                d.items_vec()
                    .into_iter()
                    .map(|(k, v)| {
                        Ok((
                            k.str(vm)?.text(vm)?.to_owned(),
                            v.str(vm)?.text(vm)?.to_owned(),
                        ))
                    })
                    .collect::<PyResult<std::collections::HashMap<String, String>>>()?,
            ),
        };
        let bytes = fxvm_checkpoint::safetensors::save(&tensors, metadata)
            .map_err(|e| vm.new_value_error(e.to_string()))?;
        Ok(vm.ctx.new_bytes(bytes))
    }

    /// `torch.save`'s container: the zip archive PyTorch writes, from the
    /// pickle's bytes and the tensors whose storages it names, keyed in order.
    #[pyfunction]
    fn _write_checkpoint(
        name: rustpython_vm::builtins::PyStrRef,
        pickle: rustpython_vm::builtins::PyBytesRef,
        storages: Vec<PyRef<PyTensor>>,
        vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::builtins::PyBytesRef> {
        let records: Vec<(String, Vec<u8>)> = storages
            .iter()
            .enumerate()
            .map(|(i, t)| (i.to_string(), t.tensor().storage_bytes()))
            .collect();
        let bytes = fxvm_checkpoint::write_zip(name.text(vm)?, pickle.as_bytes(), &records)
            .map_err(|e| vm.new_runtime_error(e.to_string()))?;
        Ok(vm.ctx.new_bytes(bytes))
    }

    /// `(storage id, storage length, storage class name)` of a tensor, for
    /// `torch.save` to name each storage once however many views share it.
    #[pyfunction]
    fn _storage_info(t: PyRef<PyTensor>) -> (usize, usize, &'static str) {
        let t = t.tensor();
        (
            t.storage_id(),
            t.storage_len(),
            fxvm_checkpoint::storage_class(t.dtype()),
        )
    }

    /// The view of `storage` (a tensor standing for its whole storage) that
    /// `torch._utils._rebuild_tensor_v2` describes; bounds are checked.
    #[pyfunction]
    fn _storage_view(
        storage: PyRef<PyTensor>,
        offset: usize,
        size: Vec<usize>,
        stride: Vec<usize>,
        vm: &VirtualMachine,
    ) -> PyResult {
        use crate::native::convert::IntoPy;
        Ok(crate::native::tensor::wrap(
            storage
                .tensor()
                .whole_storage()
                .as_strided(&size, &stride, offset)
                .py(vm)?,
            vm,
        ))
    }

    /// Installs the generated `Tensor` methods and returns the generated
    /// `(torch, torch.nn.functional, torch.linalg)` functions as three dicts.
    #[pyfunction]
    fn _bind_ops(vm: &VirtualMachine) -> PyResult<(PyObjectRef, PyObjectRef, PyObjectRef)> {
        crate::native::ops::bind(vm)
    }
}
