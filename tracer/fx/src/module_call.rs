//! The bodies of `Tracer.call_module` (the qualified name, scope and module
//! stack, the leaf test, then a `call_module` node or a trace into
//! `forward`), `is_leaf_module`, `path_of_module` and `getattr` (a module
//! attribute read while tracing). The patched `Module.__call__` and
//! `__getattr__` reach them through the tracer's hooks, so an override of
//! any of them is called instead.

use rustpython_vm::builtins::{PyBoundMethod, PyDict, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use super::hooks::loaded;
use super::record::NodeSpec;
use super::tracer_state::TracerRef;
use fxvm_vm::text::Utf8;

/// How to run a module that is traced into.
pub(crate) enum Forward {
    /// `forward(*args, **kwargs)` (what `Tracer.call_module` receives).
    Bound(PyObjectRef),
    /// The original `Module.__call__`, called as `call(m, *args, **kwargs)`
    /// (the patched `__call__` passes it, sparing a closure per call).
    Unbound(PyObjectRef),
}

impl Forward {
    /// As the callable `forward` torch.fx passes a `call_module` override.
    pub(crate) fn bound(self, m: &PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        match self {
            Forward::Bound(f) => f,
            Forward::Unbound(call) => PyBoundMethod::new(m.clone(), call).into_ref(&vm.ctx).into(),
        }
    }
}

/// `Tracer.call_module(m, forward, args, kwargs)`.
pub(crate) fn call_module(
    t: &TracerRef<'_>,
    m: PyObjectRef,
    forward: Forward,
    args: PyObjectRef,
    kwargs: PyObjectRef,
) -> PyResult {
    let vm = t.vm;
    let name = t.path_of_module(&m)?;
    let scope = t
        .scope()?
        .ok_or_else(|| vm.new_type_error("Tracer.call_module needs tracer.scope"))?;
    let prev = scope.get()?;
    let module_type: PyObjectRef = m.class().to_owned().into();
    scope.set((name.clone(), module_type.clone()))?;
    let result = record_call(t, &m, &name, &module_type, args, kwargs, &forward);
    scope.set(prev)?;
    result
}

/// The body of `call_module` between setting and restoring the scope.
fn record_call(
    t: &TracerRef<'_>,
    m: &PyObjectRef,
    name: &PyObjectRef,
    module_type: &PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    forward: &Forward,
) -> PyResult {
    let vm = t.vm;
    let name_str = name
        .downcast_ref::<PyStr>()
        .ok_or_else(|| vm.new_type_error("a module's qualified name is a str"))
        .and_then(|s| s.text(vm))?
        .to_owned();
    let num_calls = t.num_calls()?;
    let calls = match num_calls.get_item(name.as_object(), vm) {
        Ok(n) => n.try_to_value::<usize>(vm)?,
        Err(_) => 0,
    };
    let key = if calls > 0 {
        format!("{name_str}@{calls}")
    } else {
        name_str.clone()
    };
    let stack = t
        .module_stack()?
        .ok_or_else(|| vm.new_type_error("Tracer.call_module needs tracer.module_stack"))?;
    stack.set_item(
        &*vm.ctx.new_str(key),
        vm.ctx
            .new_tuple(vec![name.clone(), module_type.clone()])
            .into(),
        vm,
    )?;
    num_calls.set_item(name.as_object(), vm.ctx.new_int(calls + 1).into(), vm)?;
    let result = if t.is_leaf_module(m, name)? {
        t.create_proxy(
            NodeSpec::new("call_module", name.clone(), args, kwargs),
            None,
        )?
    } else {
        let args = args.try_to_value::<Vec<PyObjectRef>>(vm)?;
        let kwargs = match kwargs.downcast_ref::<PyDict>() {
            Some(d) => d
                .items_vec()
                .into_iter()
                .map(|(k, v)| Ok((k.str(vm)?.text(vm)?.to_owned(), v)))
                .collect::<PyResult<rustpython_vm::function::KwArgs>>()?,
            None => Default::default(),
        };
        match forward {
            Forward::Bound(f) => f.call(FuncArgs::new(args, kwargs), vm)?,
            Forward::Unbound(call) => {
                let positional: Vec<PyObjectRef> = std::iter::once(m.clone()).chain(args).collect();
                call.call(FuncArgs::new(positional, kwargs), vm)?
            }
        }
    };
    vm.call_method(stack.as_object(), "popitem", ())?;
    Ok(result)
}

/// `Tracer.is_leaf_module`: modules of `torch.nn` (except `Sequential`)
/// are called, not traced into.
pub(crate) fn is_leaf_module(m: &PyObjectRef, vm: &VirtualMachine) -> PyResult<bool> {
    let module = m.class().as_object().get_attr("__module__", vm)?;
    let module = module.str(vm)?;
    let module = module.text(vm)?;
    let sequential = loaded("torch.nn", vm)?.get_attr("Sequential", vm)?;
    Ok(
        (module.starts_with("torch.nn") || module.starts_with("torch.ao.nn"))
            && !m.is_instance(&sequential, vm)?,
    )
}

fn not_a_submodule(vm: &VirtualMachine) -> rustpython_vm::builtins::PyBaseExceptionRef {
    vm.new_name_error(
        "module is not installed as a submodule",
        vm.ctx.new_str("path_of_module"),
    )
}

/// `Tracer.path_of_module`: the module's qualified name in the root.
pub(crate) fn path_of_module(t: &TracerRef<'_>, m: &PyObjectRef) -> PyResult {
    let vm = t.vm;
    if let Some(paths) = t.submodule_paths()? {
        return paths
            .get_item_opt(&**m, vm)?
            .ok_or_else(|| not_a_submodule(vm));
    }
    let root = t.root()?;
    let named = vm.call_method(&root, "named_modules", ())?;
    find_named(&named, m, vm)?.ok_or_else(|| not_a_submodule(vm))
}

/// The name paired with `value` itself among `named`'s `(name, value)`
/// pairs (`named_modules()`, `named_parameters()` …).
pub(crate) fn find_named(
    named: &PyObjectRef,
    value: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    for pair in named.try_to_value::<Vec<PyObjectRef>>(vm)? {
        let pair: Vec<PyObjectRef> = pair.try_to_value(vm)?;
        if let [name, v] = &pair[..]
            && v.is(value)
        {
            return Ok(Some(name.clone()));
        }
    }
    Ok(None)
}

/// `Tracer.getattr(attr, attr_val, parameter_proxy_cache)`: parameters
/// (and buffers, with `proxy_buffer_attributes`) read as module attributes
/// become one `get_attr` node each; anything else is returned as it is.
pub(crate) fn getattr(t: &TracerRef<'_>, value: PyObjectRef, cache: &PyObjectRef) -> PyResult {
    let vm = t.vm;
    if fxvm_vm::binding::tensor_of(&value).is_none() {
        return Ok(value);
    }
    let parameter = loaded("torch.nn", vm)?.get_attr("Parameter", vm)?;
    if value.is_instance(&parameter, vm)?
        && let Some(proxy) = attr_proxy(t, &value, "parameters", cache)?
    {
        return Ok(proxy);
    }
    if t.proxy_buffer_attributes()?
        && let Some(proxy) = attr_proxy(t, &value, "buffers", cache)?
    {
        return Ok(proxy);
    }
    Ok(value)
}

/// The `get_attr` proxy of a parameter or buffer of the root (`kind`), made
/// once per name; `None` for a tensor the root does not hold.
fn attr_proxy(
    t: &TracerRef<'_>,
    value: &PyObjectRef,
    kind: &'static str,
    cache: &PyObjectRef,
) -> PyResult<Option<PyObjectRef>> {
    let vm = t.vm;
    let Some(name) = tensor_name(t, value, kind)? else {
        return Ok(None);
    };
    if vm._contains(cache, &name)? {
        return cache.get_item(&*name, vm).map(Some);
    }
    let factory = if t.param_shapes_constant()? && t.takes_proxy_factory()? {
        let make =
            loaded("torch.fx._symbolic_trace", vm)?.get_attr("_parameter_proxy_factory", vm)?;
        Some(make.call((t.obj.clone(), name.clone(), value.clone()), vm)?)
    } else {
        None
    };
    let empty = vm.ctx.empty_tuple.clone().into();
    let spec = NodeSpec::new("get_attr", name.clone(), empty, vm.ctx.new_dict().into());
    let proxy = t.create_proxy(spec, factory)?;
    cache.set_item(&*name, proxy.clone(), vm)?;
    Ok(Some(proxy))
}

/// The first qualified name of `value` among the root's parameters or
/// buffers (`kind`), as torch.fx finds it scanning them in order. The scan
/// is indexed once per trace (the tracer's `_named_tensor_index`, which
/// `trace` empties), and a tensor the index does not know (registered while
/// tracing) is still found by scanning.
fn tensor_name(
    t: &TracerRef<'_>,
    value: &PyObjectRef,
    kind: &'static str,
) -> PyResult<Option<PyObjectRef>> {
    let vm = t.vm;
    let named = || -> PyResult<Vec<PyObjectRef>> {
        let method = if kind == "parameters" {
            "named_parameters"
        } else {
            "named_buffers"
        };
        let root = t.root()?;
        vm.call_method(&root, method, ())?.try_to_value(vm)
    };
    let pair = |p: &PyObjectRef| -> PyResult<(PyObjectRef, PyObjectRef)> {
        let items: Vec<PyObjectRef> = p.try_to_value(vm)?;
        match <[PyObjectRef; 2]>::try_from(items) {
            Ok([n, v]) => Ok((n, v)),
            Err(_) => Err(vm.new_type_error("named tensors are (name, tensor) pairs")),
        }
    };
    let dict = t
        .obj
        .dict()
        .ok_or_else(|| vm.new_type_error("a tracer has a __dict__"))?;
    let all = match dict.get_item_opt("_named_tensor_index", vm)? {
        Some(d) => d,
        None => {
            let d: PyObjectRef = vm.ctx.new_dict().into();
            dict.set_item("_named_tensor_index", d.clone(), vm)?;
            d
        }
    };
    // A tensor missing from an index built by this call is not found by
    // scanning the same tensors again either.
    let mut built = false;
    let index = match vm.call_method(&all, "get", (kind,))? {
        i if !vm.is_none(&i) => i,
        _ => {
            built = true;
            let index = vm.ctx.new_dict();
            for p in named()? {
                let (n, v) = pair(&p)?;
                let key: PyObjectRef = vm.ctx.new_int(v.get_id()).into();
                if index.get_item_opt(&*key, vm)?.is_none() {
                    index.set_item(&*key, vm.ctx.new_tuple(vec![n, v]).into(), vm)?;
                }
            }
            all.set_item(kind, index.clone().into(), vm)?;
            index.into()
        }
    };
    let hit = vm.call_method(&index, "get", (vm.ctx.new_int(value.get_id()),))?;
    if !vm.is_none(&hit) {
        let (n, v) = pair(&hit)?;
        if v.is(value) {
            return Ok(Some(n));
        }
    }
    if built {
        return Ok(None);
    }
    for p in named()? {
        let (n, v) = pair(&p)?;
        if v.is(value) {
            return Ok(Some(n));
        }
    }
    Ok(None)
}
