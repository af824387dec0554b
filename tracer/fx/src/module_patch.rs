//! The `nn.Module.__call__` and `__getattr__` a trace patches in, natively.
//! As Python closures they added a Python frame (1–2 µs under RustPython)
//! to every module call and every submodule or parameter read, on top of
//! the native hooks. Each goes through the tracer's hook (`call_module`,
//! `getattr`), so an override of it is called instead.

use rustpython_vm::builtins::{PyDict, PyTypeRef};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::types::{Callable, Constructor, GetDescriptor};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use super::module_call::Forward;
use super::tracer_state::TracerRef;

/// Whether torch.fx's `_suspended` flag (a one-item list) is set: code
/// running outside the trace (a leaf module's own forward, a hook).
fn suspended(flag: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    flag.get_item(vm.ctx.new_int(0).as_object(), vm)?
        .try_to_bool(vm)
}

/// `_fx.TracedModuleCall(tracer, orig, suspended, seen, on_new_class)`: `Module.__call__` during a trace.
#[pyclass(
    module = "torch._C._fx",
    name = "TracedModuleCall",
    traverse = "manual"
)]
#[derive(Debug, PyPayload)]
pub(crate) struct PyTracedModuleCall {
    tracer: PyObjectRef,
    /// The original `Module.__call__`.
    orig: PyObjectRef,
    /// torch.fx's `_suspended` flag.
    suspended: PyObjectRef,
    /// The classes whose `forward` globals were scanned for autowrapping.
    seen: PyObjectRef,
    /// Called with the first module of each class not yet `seen`.
    on_new_class: PyObjectRef,
}

// SAFETY: `traverse` visits each object the payload owns exactly once; the
// fields are immutable, so `clear` has nothing it may take out.
unsafe impl Traverse for PyTracedModuleCall {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.tracer.traverse(f);
        self.orig.traverse(f);
        self.suspended.traverse(f);
        self.seen.traverse(f);
        self.on_new_class.traverse(f);
    }
}

impl Constructor for PyTracedModuleCall {
    type Args = (
        PyObjectRef,
        PyObjectRef,
        PyObjectRef,
        PyObjectRef,
        PyObjectRef,
    );

    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        (tracer, orig, suspended, seen, on_new_class): Self::Args,
        _vm: &VirtualMachine,
    ) -> PyResult<Self> {
        Ok(PyTracedModuleCall {
            tracer,
            orig,
            suspended,
            seen,
            on_new_class,
        })
    }
}

impl Callable for PyTracedModuleCall {
    type Args = FuncArgs;

    fn call(zelf: &Py<Self>, mut args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        if args.args.is_empty() {
            return Err(vm.new_type_error("Module.__call__ needs the module"));
        }
        if suspended(&zelf.suspended, vm)? {
            return zelf.orig.call(args, vm);
        }
        let m = args.args[0].clone();
        let cls: PyObjectRef = m.class().to_owned().into();
        if !vm._contains(&zelf.seen, &cls)? {
            zelf.on_new_class.call((m.clone(),), vm)?;
        }
        args.args.remove(0);
        let kwargs = PyDict::default().into_ref(&vm.ctx);
        for (k, v) in args.kwargs {
            kwargs.set_item(k.as_str(), v, vm)?;
        }
        TracerRef::new(&zelf.tracer, vm).call_module(
            m,
            Forward::Unbound(zelf.orig.clone()),
            vm.ctx.new_tuple(args.args).into(),
            kwargs.into(),
        )
    }
}

bound_like_a_function!(PyTracedModuleCall);

#[pyclass(with(Constructor, Callable, GetDescriptor), flags(HAS_DICT))]
impl PyTracedModuleCall {
    /// Named as torch.fx's wrapper is. RustPython describes the callable of
    /// every `f(*args, **kwargs)` call up front, by `__qualname__` or else
    /// by `repr` of the bound method — which would render the module (and
    /// record `get_attr` nodes for the parameters its `repr` reads).
    #[pygetset]
    fn __qualname__(&self) -> &'static str {
        "Tracer.trace.<locals>.module_call_wrapper"
    }

    #[pygetset]
    fn __name__(&self) -> &'static str {
        "module_call_wrapper"
    }
}

/// `_fx.TracedModuleGetattr(tracer, orig, suspended, cache)`:
/// `Module.__getattr__` during a trace — what it finds goes through the
/// tracer's `getattr` (parameters become `get_attr` nodes).
#[pyclass(
    module = "torch._C._fx",
    name = "TracedModuleGetattr",
    traverse = "manual"
)]
#[derive(Debug, PyPayload)]
pub(crate) struct PyTracedModuleGetattr {
    tracer: PyObjectRef,
    /// The original `Module.__getattr__`.
    orig: PyObjectRef,
    suspended: PyObjectRef,
    /// The trace's parameter proxy cache.
    cache: PyObjectRef,
}

// SAFETY: as for `PyTracedModuleCall`: every owned object visited once,
// immutable fields.
unsafe impl Traverse for PyTracedModuleGetattr {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.tracer.traverse(f);
        self.orig.traverse(f);
        self.suspended.traverse(f);
        self.cache.traverse(f);
    }
}

impl Constructor for PyTracedModuleGetattr {
    type Args = (PyObjectRef, PyObjectRef, PyObjectRef, PyObjectRef);

    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        (tracer, orig, suspended, cache): Self::Args,
        _vm: &VirtualMachine,
    ) -> PyResult<Self> {
        Ok(PyTracedModuleGetattr {
            tracer,
            orig,
            suspended,
            cache,
        })
    }
}

impl Callable for PyTracedModuleGetattr {
    type Args = (PyObjectRef, PyObjectRef);

    fn call(zelf: &Py<Self>, (m, attr): Self::Args, vm: &VirtualMachine) -> PyResult {
        let value = zelf.orig.call((m, attr.clone()), vm)?;
        if suspended(&zelf.suspended, vm)? {
            return Ok(value);
        }
        TracerRef::new(&zelf.tracer, vm).getattr(attr, value, &zelf.cache)
    }
}

bound_like_a_function!(PyTracedModuleGetattr);

#[pyclass(with(Constructor, Callable, GetDescriptor), flags(HAS_DICT))]
impl PyTracedModuleGetattr {
    /// Module's `__getattribute__` calls this patch directly for registered
    /// names (see `fxvm_vm::ANSWERS_REGISTERED`): it answers them all.
    #[pyattr]
    fn __fxvm_answers_registered__(ctx: &rustpython_vm::Context) -> PyObjectRef {
        ctx.new_bool(true).into()
    }

    /// As `PyTracedModuleCall.__qualname__`.
    #[pygetset]
    fn __qualname__(&self) -> &'static str {
        "Tracer.trace.<locals>.module_getattr_wrapper"
    }

    #[pygetset]
    fn __name__(&self) -> &'static str {
        "module_getattr_wrapper"
    }
}

/// The two classes, for `torch._C._fx`.
pub(crate) fn types() -> (PyTypeRef, PyTypeRef) {
    use rustpython_vm::class::PyClassImpl;
    (
        PyTracedModuleCall::make_static_type(),
        PyTracedModuleGetattr::make_static_type(),
    )
}
