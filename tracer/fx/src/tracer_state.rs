//! A tracer as the native hooks see it: one typed accessor per piece of
//! Python state they read (`graph`, `scope`, `module_stack` …), with the
//! attribute names interned once per thread rather than looked up by text
//! per op, and one typed call per overridable hook (see `hooks`).

use std::cell::OnceCell;

use rustpython_vm::builtins::{PyDict, PyDictRef, PyStrInterned};
use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use super::hooks::{Hook, Resolved, resolve};
use super::module_call::Forward;
use super::record::NodeSpec;

macro_rules! names {
    ($($field:ident = $text:literal),* $(,)?) => {
        /// The attribute names the native tracer reads, interned.
        pub(crate) struct Names {
            $(pub(crate) $field: &'static PyStrInterned,)*
        }

        impl Names {
            fn intern(vm: &VirtualMachine) -> Names {
                Names { $($field: vm.ctx.intern_str($text),)* }
            }
        }
    };
}

names! {
    graph = "graph",
    scope = "scope",
    module_path = "module_path",
    module_type = "module_type",
    module_stack = "module_stack",
    node_name_to_scope = "node_name_to_scope",
    num_calls = "num_calls",
    submodule_paths = "submodule_paths",
    record_source_loc = "record_source_loc",
    record_stack_traces = "record_stack_traces",
    proxy_class = "_proxy_class",
    proxy_buffer_attributes = "proxy_buffer_attributes",
    param_shapes_constant = "param_shapes_constant",
    root = "root",
    tensor_attrs = "tensor_attrs",
    tracer = "tracer",
    node = "node",
    attr = "attr",
    cached_node = "_node",
    fields = "_fields",
    fx_create_arg = "__fx_create_arg__",
    dataclass_fields = "__dataclass_fields__",
    create_proxy = "create_proxy",
    create_node = "create_node",
    create_arg = "create_arg",
    proxy = "proxy",
    call_module = "call_module",
    is_leaf_module = "is_leaf_module",
    path_of_module = "path_of_module",
    getattr = "getattr",
}

thread_local! {
    static NAMES: OnceCell<&'static Names> = const { OnceCell::new() };
}

/// The interned names (strings interned by the VM live for the process).
pub(crate) fn names(vm: &VirtualMachine) -> &'static Names {
    NAMES.with(|n| *n.get_or_init(|| Box::leak(Box::new(Names::intern(vm)))))
}

/// `tracer.scope`: where in the module hierarchy nodes are being made.
pub(crate) struct Scope<'a> {
    obj: PyObjectRef,
    names: &'static Names,
    vm: &'a VirtualMachine,
}

impl Scope<'_> {
    /// `(scope.module_path, scope.module_type)`.
    pub(crate) fn get(&self) -> PyResult<(PyObjectRef, PyObjectRef)> {
        Ok((
            self.obj.get_attr(self.names.module_path, self.vm)?,
            self.obj.get_attr(self.names.module_type, self.vm)?,
        ))
    }

    pub(crate) fn set(&self, (path, module_type): (PyObjectRef, PyObjectRef)) -> PyResult<()> {
        self.obj.set_attr(self.names.module_path, path, self.vm)?;
        self.obj
            .set_attr(self.names.module_type, module_type, self.vm)
    }
}

/// A `TracerBase` instance.
pub(crate) struct TracerRef<'a> {
    pub(crate) obj: &'a PyObjectRef,
    pub(crate) names: &'static Names,
    pub(crate) vm: &'a VirtualMachine,
}

impl<'a> TracerRef<'a> {
    pub(crate) fn new(obj: &'a PyObjectRef, vm: &'a VirtualMachine) -> TracerRef<'a> {
        TracerRef {
            obj,
            names: names(vm),
            vm,
        }
    }

    fn get(&self, name: &'static PyStrInterned) -> PyResult {
        self.obj.get_attr(name, self.vm)
    }

    fn flag(&self, name: &'static PyStrInterned) -> PyResult<bool> {
        self.get(name)?.try_to_bool(self.vm)
    }

    /// `tracer.graph` (any object: a graph subclass may override its methods).
    pub(crate) fn graph(&self) -> PyResult {
        self.get(self.names.graph)
    }

    /// `tracer.scope`, unless it is `None`.
    pub(crate) fn scope(&self) -> PyResult<Option<Scope<'a>>> {
        let obj = self.get(self.names.scope)?;
        Ok((!self.vm.is_none(&obj)).then_some(Scope {
            obj,
            names: self.names,
            vm: self.vm,
        }))
    }

    /// `tracer.module_stack` when it is a dict (torch.fx's ordered stack of
    /// `{key: (path, type)}`).
    pub(crate) fn module_stack(&self) -> PyResult<Option<PyDictRef>> {
        Ok(self.get(self.names.module_stack)?.downcast::<PyDict>().ok())
    }

    /// `tracer.node_name_to_scope`, unless it is `None`.
    pub(crate) fn node_name_to_scope(&self) -> PyResult<Option<PyObjectRef>> {
        let map = self.get(self.names.node_name_to_scope)?;
        Ok((!self.vm.is_none(&map)).then_some(map))
    }

    /// `tracer.num_calls`: how often each module path was called.
    pub(crate) fn num_calls(&self) -> PyResult {
        self.get(self.names.num_calls)
    }

    /// `tracer.submodule_paths` when it is a non-empty dict.
    pub(crate) fn submodule_paths(&self) -> PyResult<Option<PyDictRef>> {
        Ok(self
            .get(self.names.submodule_paths)?
            .downcast::<PyDict>()
            .ok()
            .filter(|d| d.__len__() > 0))
    }

    pub(crate) fn record_source_loc(&self) -> PyResult<bool> {
        self.flag(self.names.record_source_loc)
    }

    pub(crate) fn record_stack_traces(&self) -> PyResult<bool> {
        self.flag(self.names.record_stack_traces)
    }

    pub(crate) fn proxy_buffer_attributes(&self) -> PyResult<bool> {
        self.flag(self.names.proxy_buffer_attributes)
    }

    pub(crate) fn param_shapes_constant(&self) -> PyResult<bool> {
        self.flag(self.names.param_shapes_constant)
    }

    /// The class of the proxies this tracer makes (`_proxy_class`).
    pub(crate) fn proxy_class(&self) -> PyResult {
        self.get(self.names.proxy_class)
    }

    pub(crate) fn root(&self) -> PyResult {
        self.get(self.names.root)
    }

    /// `tracer.tensor_attrs`: `{constant: qualified name}`.
    pub(crate) fn tensor_attrs(&self) -> PyResult {
        self.get(self.names.tensor_attrs)
    }

    /// `tracer.create_proxy(kind, target, args, kwargs, name=…, type_expr=…,
    /// proxy_factory_fn=…)`, passing to an override only what is given.
    pub(crate) fn create_proxy(
        &self,
        spec: NodeSpec<'_>,
        proxy_factory_fn: Option<PyObjectRef>,
    ) -> PyResult {
        let vm = self.vm;
        match resolve(self.obj, self.names.create_proxy, &[Hook::CreateProxy], vm)? {
            Resolved::Native(_) => super::record::create_proxy(self, spec, proxy_factory_fn),
            Resolved::Python(f) => {
                let named: KwArgs = [
                    ("name", spec.name.map(Into::into)),
                    ("type_expr", spec.type_expr),
                    ("proxy_factory_fn", proxy_factory_fn),
                ]
                .into_iter()
                .filter_map(|(k, v)| Some((k.to_owned(), v?)))
                .collect();
                let kind = vm.ctx.new_str(spec.kind).into();
                let positional = vec![kind, spec.target, spec.args, spec.kwargs];
                f.call(FuncArgs::new(positional, named), vm)
            }
        }
    }

    /// `tracer.create_node(kind, target, args, kwargs, name, type_expr)`.
    pub(crate) fn create_node(&self, spec: NodeSpec<'_>) -> PyResult {
        let vm = self.vm;
        match resolve(self.obj, self.names.create_node, &[Hook::CreateNode], vm)? {
            Resolved::Native(_) => Ok(super::record::create_node(self, spec)?.into()),
            Resolved::Python(f) => f.call(spec.positional(vm), vm),
        }
    }

    /// `tracer.proxy(node)`.
    pub(crate) fn proxy(&self, node: PyObjectRef) -> PyResult {
        match resolve(self.obj, self.names.proxy, &[Hook::Proxy], self.vm)? {
            Resolved::Native(_) => super::record::proxy(self, node),
            Resolved::Python(f) => f.call((node,), self.vm),
        }
    }

    /// `tracer.call_module(m, forward, args, kwargs)`.
    pub(crate) fn call_module(
        &self,
        m: PyObjectRef,
        forward: Forward,
        args: PyObjectRef,
        kwargs: PyObjectRef,
    ) -> PyResult {
        let vm = self.vm;
        match resolve(self.obj, self.names.call_module, &[Hook::CallModule], vm)? {
            Resolved::Native(_) => super::module_call::call_module(self, m, forward, args, kwargs),
            Resolved::Python(f) => {
                let forward = forward.bound(&m, vm);
                f.call((m, forward, args, kwargs), vm)
            }
        }
    }

    /// `tracer.is_leaf_module(m, qualified_name)`.
    pub(crate) fn is_leaf_module(&self, m: &PyObjectRef, name: &PyObjectRef) -> PyResult<bool> {
        let vm = self.vm;
        match resolve(
            self.obj,
            self.names.is_leaf_module,
            &[Hook::IsLeafModule],
            vm,
        )? {
            Resolved::Native(_) => super::module_call::is_leaf_module(m, vm),
            Resolved::Python(f) => f.call((m.clone(), name.clone()), vm)?.try_to_bool(vm),
        }
    }

    /// `tracer.path_of_module(m)`.
    pub(crate) fn path_of_module(&self, m: &PyObjectRef) -> PyResult {
        match resolve(
            self.obj,
            self.names.path_of_module,
            &[Hook::PathOfModule],
            self.vm,
        )? {
            Resolved::Native(_) => super::module_call::path_of_module(self, m),
            Resolved::Python(f) => f.call((m.clone(),), self.vm),
        }
    }

    /// `tracer.getattr(attr, attr_val, parameter_proxy_cache)`.
    pub(crate) fn getattr(
        &self,
        attr: PyObjectRef,
        value: PyObjectRef,
        cache: &PyObjectRef,
    ) -> PyResult {
        match resolve(self.obj, self.names.getattr, &[Hook::Getattr], self.vm)? {
            Resolved::Native(_) => super::module_call::getattr(self, value, cache),
            Resolved::Python(f) => f.call((attr, value, cache.clone()), self.vm),
        }
    }

    /// Whether the tracer's `create_proxy` takes `proxy_factory_fn` (the
    /// native one does; an override is asked through its signature, as
    /// torch.fx asks).
    pub(crate) fn takes_proxy_factory(&self) -> PyResult<bool> {
        let vm = self.vm;
        match resolve(self.obj, self.names.create_proxy, &[Hook::CreateProxy], vm)? {
            Resolved::Native(_) => Ok(true),
            Resolved::Python(f) => super::hooks::loaded("torch.fx._symbolic_trace", vm)?
                .get_attr("_takes_proxy_factory", vm)?
                .call((f,), vm)?
                .try_to_bool(vm),
        }
    }
}
