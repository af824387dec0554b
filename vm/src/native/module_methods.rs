//! `nn.Module`'s hottest methods, natively: `__call__`, and `__getattr__`
//! with `__getattribute__` (every `self.layer` of a forward). Under
//! RustPython each Python frame is ~1 µs, and these ran three per module
//! call.
//!
//! A module with no forward hooks calls its `forward` straight away, sparing
//! the two Python frames (`_wrapped_call_impl`, `_call_impl`); a module with
//! hooks, or whose class (or a patch) replaces `_call_impl`, runs
//! `_call_impl` as before.

use rustpython_vm::builtins::{PyDict, PyStrRef};
use rustpython_vm::common::wtf8::Wtf8Buf;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// The `__call__` method for `nn.Module`, given its `_call_impl`.
pub(crate) fn call_method(call_impl: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
    let call = move |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        if args.args.is_empty() {
            return Err(
                vm.new_type_error("descriptor '__call__' of 'Module' object needs an argument")
            );
        }
        let zelf = args.args.remove(0);
        // `Module.compile()` keeps the compiled `_call_impl` on the instance.
        if let Some(dict) = zelf.dict()
            && let Some(compiled) = dict.get_item_opt("_compiled_call_impl", vm)?
            && !vm.is_none(&compiled)
        {
            return compiled.call(args, vm);
        }
        if without_hooks(&zelf, &call_impl, vm)? {
            return zelf.get_attr("forward", vm)?.call(args, vm);
        }
        vm.call_method(&zelf, "_call_impl", args)
    };
    // One definition per interpreter (each holds its own `_call_impl`).
    crate::binding::method_descriptor(
        "__call__",
        "Runs the module: its forward hooks around forward(*args, **kwargs).",
        call,
        vm,
    )
}

/// The `__getattr__` method for `nn.Module`: parameters, then buffers, then
/// submodules, else PyTorch's AttributeError.
pub(crate) fn getattr_method(vm: &VirtualMachine) -> PyObjectRef {
    let getattr = |zelf: PyObjectRef, name: PyStrRef, vm: &VirtualMachine| -> PyResult {
        registered(&zelf, &name, vm)?.ok_or_else(|| no_attribute(&zelf, &name, vm))
    };
    crate::binding::method_descriptor(
        "__getattr__",
        "A parameter, buffer or submodule of this module, by name.",
        getattr,
        vm,
    )
}

/// The class attribute of a callable replacing `nn.Module.__getattr__`
/// (a tracer's patch) that returns a value for every parameter, buffer and
/// submodule name: Module's `__getattribute__` then calls it directly for
/// those names.
pub const ANSWERS_REGISTERED: &str = "__fxvm_answers_registered__";

/// The `__getattribute__` method for `nn.Module`, given its `__getattr__`.
/// RustPython builds an AttributeError (its message formatted) for every
/// attribute the ordinary lookup misses before it calls `__getattr__` — every
/// `self.layer` of a forward. When the class keeps Module's `__getattr__`,
/// this answers from the registries without that error; a class with its
/// own `__getattr__` gets the usual error, and RustPython then calls it
/// (a tracer's patch marked [`ANSWERS_REGISTERED`] is called directly).
pub(crate) fn getattribute_method(module_getattr: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
    let getattribute = move |zelf: PyObjectRef, name: PyStrRef, vm: &VirtualMachine| -> PyResult {
        if let Some(value) = zelf.generic_getattr_opt(&name, None, vm)? {
            return Ok(value);
        }
        let own = zelf
            .class()
            .get_attr(vm.ctx.intern_str("__getattr__"))
            .is_some_and(|g| g.is(&module_getattr));
        if own && let Some(value) = registered(&zelf, &name, vm)? {
            return Ok(value);
        }
        // A `__getattr__` that answers registered names (a tracer's patch)
        // is called here for them, sparing the error RustPython would build
        // before calling it.
        if !own
            && let Some(getattr) = zelf.class().get_attr(vm.ctx.intern_str("__getattr__"))
            && getattr
                .class()
                .get_attr(vm.ctx.intern_str(ANSWERS_REGISTERED))
                .is_some()
            && registered(&zelf, &name, vm)?.is_some()
        {
            return getattr.call((zelf, name), vm);
        }
        Err(no_attribute(&zelf, &name, vm))
    };
    crate::binding::method_descriptor(
        "__getattribute__",
        "Return getattr(self, name).",
        getattribute,
        vm,
    )
}

/// The per-instance state `nn.Module.__init__` sets, in its order: the
/// `training` flag, then the registries and hook tables (a set for the
/// non-persistent buffer names, dicts for the rest).
const MODULE_STATE: [&str; 17] = [
    "training",
    "_parameters",
    "_buffers",
    "_non_persistent_buffers_set",
    "_backward_pre_hooks",
    "_backward_hooks",
    "_is_full_backward_hook",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_state_dict_hooks",
    "_state_dict_pre_hooks",
    "_load_state_dict_pre_hooks",
    "_load_state_dict_post_hooks",
    "_modules",
];

/// Fills a new module's `__dict__` with its fresh state (see
/// `MODULE_STATE`): one native call where `__init__` made seventeen
/// `object.__setattr__` calls — a GraphModule builds a module for every
/// intermediate path of its targets.
pub(crate) fn init_state(zelf: &PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
    let dict = zelf
        .dict()
        .ok_or_else(|| vm.new_type_error("a Module instance has a __dict__"))?;
    for name in MODULE_STATE {
        let value: PyObjectRef = match name {
            "training" => vm.ctx.new_bool(true).into(),
            "_non_persistent_buffers_set" => vm.ctx.types.set_type.as_object().call((), vm)?,
            "_is_full_backward_hook" => vm.ctx.none(),
            _ => vm.ctx.new_dict().into(),
        };
        dict.set_item(name, value, vm)?;
    }
    Ok(())
}

/// A parameter, buffer or submodule named `name` (in that order).
fn registered(
    zelf: &PyObjectRef,
    name: &PyStrRef,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let Some(dict) = zelf.dict() else {
        return Ok(None);
    };
    for registry in ["_parameters", "_buffers", "_modules"] {
        let Some(entries) = dict.get_item_opt(registry, vm)? else {
            continue;
        };
        let found = match entries.downcast_ref::<PyDict>() {
            Some(d) => d.get_item_opt(name.as_object(), vm)?,
            None if vm._contains(&entries, name.as_object())? => {
                Some(entries.get_item(name.as_object(), vm)?)
            }
            None => None,
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// PyTorch's (and Python's) error for a missing attribute, carrying `name`
/// and `obj` as Python's does; the name is kept as given (a lone surrogate
/// included).
fn no_attribute(
    zelf: &PyObjectRef,
    name: &PyStrRef,
    vm: &VirtualMachine,
) -> rustpython_vm::builtins::PyBaseExceptionRef {
    let mut message = Wtf8Buf::from(format!(
        "'{}' object has no attribute '",
        zelf.class().name()
    ));
    message.push_wtf8(name.as_wtf8());
    message.push_char('\'');
    let error = vm.new_attribute_error(message);
    vm.set_attribute_error_context(&error, zelf.clone(), name.clone());
    error
}

/// Whether `_call_impl` would only call `forward`: the instance has no
/// forward (pre-)hooks and its class still uses the original `_call_impl`.
fn without_hooks(
    zelf: &PyObjectRef,
    call_impl: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<bool> {
    Ok(crate::binding::without_call_hooks(zelf, vm)?
        && zelf
            .class()
            .get_attr(vm.ctx.intern_str("_call_impl"))
            .is_some_and(|f| f.is(call_impl)))
}
