//! `Proxy`'s operator methods (`__add__`, `__radd__`, `__neg__` …), native:
//! each records `call_function operator.<op>` through the tracer's
//! `create_proxy` hook. As Python closures they added a frame to every
//! arithmetic operation a trace records.

use rustpython_vm::builtins::{PyDict, PyTypeRef};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::types::{Callable, Constructor, GetDescriptor};
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use super::record::NodeSpec;
use super::tracer_state::TracerRef;

/// `_fx.ProxyOperator(target, reflected, name)`: the method `name` of
/// `Proxy`, recording `target(self, *args)` — or `target(other, self)` when
/// `reflected`.
#[pyclass(module = "torch._C._fx", name = "ProxyOperator", traverse = "manual")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyProxyOperator {
    target: PyObjectRef,
    reflected: bool,
    name: String,
}

// SAFETY: `traverse` visits the one object the payload owns; the field is
// immutable, so `clear` has nothing it may take out.
unsafe impl Traverse for PyProxyOperator {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        self.target.traverse(f);
    }
}

impl Constructor for PyProxyOperator {
    type Args = (PyObjectRef, bool, String);

    fn py_new(
        _cls: &Py<rustpython_vm::builtins::PyType>,
        (target, reflected, name): Self::Args,
        _vm: &VirtualMachine,
    ) -> PyResult<Self> {
        Ok(PyProxyOperator {
            target,
            reflected,
            name,
        })
    }
}

impl Callable for PyProxyOperator {
    type Args = FuncArgs;

    fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        let Some(first) = args.args.first() else {
            return Err(vm.new_type_error(format!("{} needs the proxy", zelf.name)));
        };
        let names = super::tracer_state::names(vm);
        let tracer = first.get_attr(names.tracer, vm)?;
        let positional = match (&args.args[..], zelf.reflected) {
            ([this, other], true) => vec![other.clone(), this.clone()],
            (_, true) => {
                return Err(vm.new_type_error(format!("{} takes one operand", zelf.name)));
            }
            (all, false) => all.to_vec(),
        };
        let kwargs = PyDict::default().into_ref(&vm.ctx);
        for (k, v) in args.kwargs {
            kwargs.set_item(k.as_str(), v, vm)?;
        }
        let args = vm.ctx.new_tuple(positional).into();
        let spec = NodeSpec::new("call_function", zelf.target.clone(), args, kwargs.into());
        TracerRef::new(&tracer, vm).create_proxy(spec, None)
    }
}

bound_like_a_function!(PyProxyOperator);

#[pyclass(with(Constructor, Callable, GetDescriptor))]
impl PyProxyOperator {
    #[pygetset]
    fn __name__(&self) -> String {
        self.name.clone()
    }

    #[pygetset]
    fn __qualname__(&self) -> String {
        format!("Proxy.{}", self.name)
    }
}

/// The class, for `torch._C._fx`.
pub(crate) fn proxy_operator_type() -> PyTypeRef {
    use rustpython_vm::class::PyClassImpl;
    PyProxyOperator::make_static_type()
}
