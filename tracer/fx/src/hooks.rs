//! torch.fx's overridable tracer hooks, native: `TracerBase`'s
//! `create_proxy`, `create_node`, `create_arg` and `proxy`, `Tracer`'s
//! `create_arg`, `call_module`, `is_leaf_module`, `path_of_module` and
//! `getattr`, and `Proxy.__init__`. Each is a `TracerHook` object set on its
//! class that binds like a function, so a subclass overriding a hook and
//! calling `super()` reaches the same body. Native callers go through
//! `TracerRef`, which runs a hook's body directly when the tracer's class
//! resolves the name to a native hook and calls the override otherwise:
//! every hook has one body, and overriding one costs only that one.

use rustpython_vm::builtins::{PyStrInterned, PyStrRef, PyType};
use rustpython_vm::function::{FuncArgs, OptionalArg};
use rustpython_vm::types::{Callable, GetDescriptor};
use rustpython_vm::{
    AsObject, FromArgs, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use super::module_call::Forward;
use super::record::NodeSpec;
use super::tracer_state::TracerRef;
use fxvm_vm::text::Utf8;

/// A module already imported, by name: a `sys.modules` lookup, not a trip
/// through the import machinery.
pub(crate) fn loaded(name: &'static str, vm: &VirtualMachine) -> PyResult {
    vm.sys_module.get_attr("modules", vm)?.get_item(name, vm)
}

/// The class `module.name` of an imported module.
pub(crate) fn class(
    module: &'static str,
    name: &'static str,
    vm: &VirtualMachine,
) -> PyResult<PyRef<PyType>> {
    loaded(module, vm)?
        .get_attr(name, vm)?
        .downcast::<PyType>()
        .map_err(|_| vm.new_type_error(format!("{module}.{name} is not a class")))
}

/// Which hook a `TracerHook` is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hook {
    CreateProxy,
    CreateNode,
    /// `TracerBase.create_arg`: proxies, containers and base values.
    CreateArg,
    /// `Tracer.create_arg`: parameters, buffers, modules and constants too.
    TracerCreateArg,
    Proxy,
    ProxyInit,
    CallModule,
    IsLeafModule,
    PathOfModule,
    Getattr,
    /// `Proxy.__getattr__`: an `Attribute` of the proxy.
    ProxyGetattr,
    AttributeInit,
    /// `Attribute.__call__`: a `call_method` node.
    AttributeCall,
}

impl Hook {
    fn parse(qualname: &str) -> Option<Hook> {
        Some(match qualname {
            "TracerBase.create_proxy" => Hook::CreateProxy,
            "TracerBase.create_node" => Hook::CreateNode,
            "TracerBase.create_arg" => Hook::CreateArg,
            "Tracer.create_arg" => Hook::TracerCreateArg,
            "TracerBase.proxy" => Hook::Proxy,
            "Proxy.__init__" => Hook::ProxyInit,
            "Tracer.call_module" => Hook::CallModule,
            "Tracer.is_leaf_module" => Hook::IsLeafModule,
            "Tracer.path_of_module" => Hook::PathOfModule,
            "Tracer.getattr" => Hook::Getattr,
            "Proxy.__getattr__" => Hook::ProxyGetattr,
            "Attribute.__init__" => Hook::AttributeInit,
            "Attribute.__call__" => Hook::AttributeCall,
            _ => return None,
        })
    }

    fn qualname(self) -> &'static str {
        match self {
            Hook::CreateProxy => "TracerBase.create_proxy",
            Hook::CreateNode => "TracerBase.create_node",
            Hook::CreateArg => "TracerBase.create_arg",
            Hook::TracerCreateArg => "Tracer.create_arg",
            Hook::Proxy => "TracerBase.proxy",
            Hook::ProxyInit => "Proxy.__init__",
            Hook::CallModule => "Tracer.call_module",
            Hook::IsLeafModule => "Tracer.is_leaf_module",
            Hook::PathOfModule => "Tracer.path_of_module",
            Hook::Getattr => "Tracer.getattr",
            Hook::ProxyGetattr => "Proxy.__getattr__",
            Hook::AttributeInit => "Attribute.__init__",
            Hook::AttributeCall => "Attribute.__call__",
        }
    }

    /// The parameters, as `inspect.signature` reads them (`self` plain, as
    /// a Python method has it).
    fn text_signature(self) -> &'static str {
        match self {
            Hook::CreateProxy => {
                "(self, kind, target, args, kwargs, name=None, type_expr=None, proxy_factory_fn=None)"
            }
            Hook::CreateNode => "(self, kind, target, args, kwargs, name=None, type_expr=None)",
            Hook::CreateArg | Hook::TracerCreateArg => "(self, a)",
            Hook::Proxy => "(self, node)",
            Hook::ProxyInit => "(self, node, tracer=None)",
            Hook::CallModule => "(self, m, forward, args, kwargs)",
            Hook::IsLeafModule => "(self, m, module_qualified_name)",
            Hook::PathOfModule => "(self, mod)",
            Hook::Getattr => "(self, attr, attr_val, parameter_proxy_cache)",
            Hook::ProxyGetattr => "(self, k)",
            Hook::AttributeInit => "(self, root, attr)",
            Hook::AttributeCall => "(self, *args, **kwargs)",
        }
    }
}

/// `_fx.TracerHook`: one native hook, set on its class by the frozen
/// `torch.fx` (`create_node = _fx.tracer_hook("TracerBase.create_node")`).
#[pyclass(module = "torch._C._fx", name = "TracerHook")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyTracerHook {
    hook: Hook,
}

impl PyTracerHook {
    pub(crate) fn new(qualname: &str, vm: &VirtualMachine) -> PyResult<PyTracerHook> {
        Hook::parse(qualname)
            .map(|hook| PyTracerHook { hook })
            .ok_or_else(|| vm.new_value_error(format!("no native tracer hook {qualname}")))
    }

    pub(crate) fn hook(&self) -> Hook {
        self.hook
    }
}

/// How a tracer answers a hook's name.
pub(crate) enum Resolved {
    /// Its class keeps a native hook (one of those the caller accepts).
    Native(Hook),
    /// Anything else, bound to the tracer: an override, or an instance
    /// attribute of that name.
    Python(PyObjectRef),
}

/// What `obj.<name>` is, for a caller that runs the bodies of `accept`
/// directly. Read through the class's method cache.
pub(crate) fn resolve(
    obj: &PyObjectRef,
    name: &'static PyStrInterned,
    accept: &[Hook],
    vm: &VirtualMachine,
) -> PyResult<Resolved> {
    let shadowed = match obj.dict() {
        Some(dict) => dict.get_item_opt(name, vm)?.is_some(),
        None => false,
    };
    if !shadowed
        && let Some(attr) = obj.class().get_attr(name)
        && let Some(hook) = attr.downcast_ref::<PyTracerHook>()
        && accept.contains(&hook.hook)
    {
        return Ok(Resolved::Native(hook.hook));
    }
    Ok(Resolved::Python(obj.get_attr(name, vm)?))
}

/// `create_proxy`'s arguments: `create_node`'s, then `proxy_factory_fn`
/// (declared in full rather than flattened, so that a wrong count is
/// reported against all eight).
#[derive(FromArgs)]
struct CreateProxyArgs {
    #[pyarg(positional)]
    zelf: PyObjectRef,
    #[pyarg(any)]
    kind: PyStrRef,
    #[pyarg(any)]
    target: PyObjectRef,
    #[pyarg(any)]
    args: PyObjectRef,
    #[pyarg(any)]
    kwargs: PyObjectRef,
    #[pyarg(any, optional)]
    name: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    proxy_factory_fn: OptionalArg<PyObjectRef>,
}

impl CreateProxyArgs {
    /// The `create_node` part and the factory.
    fn split(self) -> (CreateNodeArgs, OptionalArg<PyObjectRef>) {
        let node = CreateNodeArgs {
            zelf: self.zelf,
            kind: self.kind,
            target: self.target,
            args: self.args,
            kwargs: self.kwargs,
            name: self.name,
            type_expr: self.type_expr,
        };
        (node, self.proxy_factory_fn)
    }
}

#[derive(FromArgs)]
struct CreateNodeArgs {
    #[pyarg(positional)]
    zelf: PyObjectRef,
    #[pyarg(any)]
    kind: PyStrRef,
    #[pyarg(any)]
    target: PyObjectRef,
    #[pyarg(any)]
    args: PyObjectRef,
    #[pyarg(any)]
    kwargs: PyObjectRef,
    #[pyarg(any, optional)]
    name: OptionalArg<PyObjectRef>,
    #[pyarg(any, optional)]
    type_expr: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct ProxyInitArgs {
    #[pyarg(positional)]
    zelf: PyObjectRef,
    #[pyarg(any)]
    node: PyObjectRef,
    #[pyarg(any, optional)]
    tracer: OptionalArg<PyObjectRef>,
}

#[derive(FromArgs)]
struct CallModuleArgs {
    #[pyarg(positional)]
    zelf: PyObjectRef,
    #[pyarg(any)]
    m: PyObjectRef,
    #[pyarg(any)]
    forward: PyObjectRef,
    #[pyarg(any)]
    args: PyObjectRef,
    #[pyarg(any)]
    kwargs: PyObjectRef,
}

#[derive(FromArgs)]
struct GetattrArgs {
    #[pyarg(positional)]
    zelf: PyObjectRef,
    /// The attribute's name (the native body needs only its value).
    #[pyarg(any, name = "attr")]
    _attr: PyObjectRef,
    #[pyarg(any)]
    attr_val: PyObjectRef,
    #[pyarg(any)]
    parameter_proxy_cache: PyObjectRef,
}

/// `None` and a missing argument alike.
fn given(a: OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> Option<PyObjectRef> {
    a.into_option().filter(|x| !vm.is_none(x))
}

fn name_arg(a: OptionalArg<PyObjectRef>, vm: &VirtualMachine) -> PyResult<Option<PyStrRef>> {
    given(a, vm)
        .map(|n| {
            n.downcast::<rustpython_vm::builtins::PyStr>().map_err(|n| {
                vm.new_type_error(format!("a node name is a str, not {}", n.class().name()))
            })
        })
        .transpose()
}

impl CreateNodeArgs {
    /// Runs `f` on the tracer and the node these arguments describe.
    fn with_spec<R>(
        self,
        vm: &VirtualMachine,
        f: impl FnOnce(&TracerRef<'_>, NodeSpec<'_>) -> PyResult<R>,
    ) -> PyResult<R> {
        let spec = NodeSpec {
            name: name_arg(self.name, vm)?,
            type_expr: given(self.type_expr, vm),
            ..NodeSpec::new(self.kind.text(vm)?, self.target, self.args, self.kwargs)
        };
        f(&TracerRef::new(&self.zelf, vm), spec)
    }
}

impl Callable for PyTracerHook {
    type Args = FuncArgs;

    fn call(zelf: &Py<Self>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
        match zelf.hook {
            Hook::CreateProxy => {
                let (node, factory) = args.bind::<CreateProxyArgs>(vm)?.split();
                let factory = given(factory, vm);
                node.with_spec(vm, |t, spec| super::record::create_proxy(t, spec, factory))
            }
            Hook::CreateNode => {
                let a: CreateNodeArgs = args.bind(vm)?;
                let node = a.with_spec(vm, super::record::create_node)?;
                Ok(node.into())
            }
            Hook::CreateArg | Hook::TracerCreateArg => {
                let (tracer, a): (PyObjectRef, PyObjectRef) = args.bind(vm)?;
                let t = TracerRef::new(&tracer, vm);
                let maker = super::create_arg::ArgMaker::new(&t)?;
                if zelf.hook == Hook::CreateArg {
                    maker.base(&a)
                } else {
                    maker.tracer_rules(&a)
                }
            }
            Hook::Proxy => {
                let (tracer, node): (PyObjectRef, PyObjectRef) = args.bind(vm)?;
                super::record::proxy(&TracerRef::new(&tracer, vm), node)
            }
            Hook::ProxyInit => {
                let a: ProxyInitArgs = args.bind(vm)?;
                super::record::proxy_init(&a.zelf, a.node, given(a.tracer, vm), vm)?;
                Ok(vm.ctx.none())
            }
            Hook::CallModule => {
                let a: CallModuleArgs = args.bind(vm)?;
                let t = TracerRef::new(&a.zelf, vm);
                super::module_call::call_module(
                    &t,
                    a.m,
                    Forward::Bound(a.forward),
                    a.args,
                    a.kwargs,
                )
            }
            Hook::IsLeafModule => {
                let (_tracer, m, _name): (PyObjectRef, PyObjectRef, PyObjectRef) = args.bind(vm)?;
                Ok(vm
                    .ctx
                    .new_bool(super::module_call::is_leaf_module(&m, vm)?)
                    .into())
            }
            Hook::PathOfModule => {
                let (tracer, m): (PyObjectRef, PyObjectRef) = args.bind(vm)?;
                super::module_call::path_of_module(&TracerRef::new(&tracer, vm), &m)
            }
            Hook::ProxyGetattr => {
                let (zelf, k): (PyObjectRef, PyStrRef) = args.bind(vm)?;
                super::attribute::proxy_getattr(&zelf, &k, vm)
            }
            Hook::AttributeInit => {
                let (zelf, root, attr): (PyObjectRef, PyObjectRef, PyObjectRef) = args.bind(vm)?;
                super::attribute::attribute_init(&zelf, root, attr, vm)?;
                Ok(vm.ctx.none())
            }
            Hook::AttributeCall => {
                let mut args = args;
                if args.args.is_empty() {
                    return Err(vm.new_type_error("Attribute.__call__ needs the attribute"));
                }
                let zelf = args.args.remove(0);
                super::attribute::attribute_call(&zelf, args, vm)
            }
            Hook::Getattr => {
                let a: GetattrArgs = args.bind(vm)?;
                let t = TracerRef::new(&a.zelf, vm);
                super::module_call::getattr(&t, a.attr_val, &a.parameter_proxy_cache)
            }
        }
    }
}

bound_like_a_function!(PyTracerHook);

#[pyclass(with(Callable, GetDescriptor))]
impl PyTracerHook {
    #[pygetset]
    fn __name__(&self) -> &'static str {
        let q = self.hook.qualname();
        &q[q.find('.').map_or(0, |i| i + 1)..]
    }

    #[pygetset]
    fn __qualname__(&self) -> &'static str {
        self.hook.qualname()
    }

    #[pygetset]
    fn __text_signature__(&self) -> &'static str {
        self.hook.text_signature()
    }
}
