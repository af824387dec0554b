//! `proxy.attr`: `Proxy.__getattr__` makes an `Attribute`, which records a
//! `call_method` node when called (`x.view(…)`) and a `getattr` node only
//! when used as a value (its `node` property, in Python). Native, as these
//! run for every method call a trace records.

use rustpython_vm::builtins::{PyDict, PyStrRef};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use super::hooks::{Hook, class};
use super::record::{NodeSpec, bare_instance, keeps_native_init};
use super::tracer_state::{TracerRef, names};

/// `Proxy.__getattr__(self, k)`: `Attribute(self, k)`.
pub(crate) fn proxy_getattr(zelf: &PyObjectRef, k: &PyStrRef, vm: &VirtualMachine) -> PyResult {
    if k.as_wtf8() == "__qualname__" {
        // RustPython looks this up on every `f(*args)` call to word a
        // possible error, then falls back to repr(f), which would record a
        // node for an unused Attribute; a plain name keeps calls clean.
        return zelf.class().as_object().get_attr("__qualname__", vm);
    }
    let cls: PyObjectRef = class("torch.fx.proxy", "Attribute", vm)?.into();
    let attr: PyObjectRef = k.clone().into();
    if keeps_native_init(&cls, Hook::AttributeInit, vm) {
        let obj = bare_instance(&cls, vm)?;
        attribute_init(&obj, zelf.clone(), attr, vm)?;
        return Ok(obj);
    }
    cls.call((zelf.clone(), attr), vm)
}

/// `Attribute.__init__(self, root, attr)`.
pub(crate) fn attribute_init(
    zelf: &PyObjectRef,
    root: PyObjectRef,
    attr: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let names = names(vm);
    let tracer = root.get_attr(names.tracer, vm)?;
    zelf.set_attr(names.root, root, vm)?;
    zelf.set_attr(names.attr, attr, vm)?;
    zelf.set_attr(names.tracer, tracer, vm)?;
    zelf.set_attr(names.cached_node, vm.ctx.none(), vm)
}

/// `Attribute.__call__(self, *args, **kwargs)`: `root.attr(*args, **kwargs)`
/// as a `call_method` node.
pub(crate) fn attribute_call(zelf: &PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    let names = names(vm);
    let tracer = zelf.get_attr(names.tracer, vm)?;
    let root = zelf.get_attr(names.root, vm)?;
    let attr = zelf.get_attr(names.attr, vm)?;
    let positional: Vec<PyObjectRef> = std::iter::once(root).chain(args.args).collect();
    let kwargs = PyDict::default().into_ref(&vm.ctx);
    for (k, v) in args.kwargs {
        kwargs.set_item(k.as_str(), v, vm)?;
    }
    let args = vm.ctx.new_tuple(positional).into();
    let spec = NodeSpec::new("call_method", attr, args, kwargs.into());
    TracerRef::new(&tracer, vm).create_proxy(spec, None)
}
