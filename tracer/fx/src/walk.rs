//! Walks over a module hierarchy that every trace starts with, natively:
//! reading `_modules` and `__dict__` directly is far cheaper than running
//! `named_modules()` generators in the interpreter.

use fxvm_vm::text::Utf8;
use rustpython_vm::builtins::{PyDict, PyDictRef};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// The children of `m` in order (`m._modules`, `None` entries skipped).
fn children(m: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<(PyObjectRef, PyObjectRef)>> {
    let Some(dict) = m.dict() else {
        return Ok(vec![]);
    };
    let Some(modules) = dict.get_item_opt("_modules", vm)? else {
        return Ok(vec![]);
    };
    let Some(modules) = modules.downcast_ref::<PyDict>() else {
        return Ok(vec![]);
    };
    Ok(modules
        .items_vec()
        .into_iter()
        .filter(|(_, v)| !vm.is_none(v))
        .collect())
}

fn join(prefix: &str, name: &PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
    let name = name.str(vm)?;
    let name = name.text(vm)?;
    Ok(if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    })
}

/// `named_modules()`: each module once, under the first name it is reached by.
pub(crate) fn module_paths(
    m: &PyObjectRef,
    prefix: String,
    out: &PyDictRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if out.get_item_opt(&**m, vm)?.is_some() {
        return Ok(());
    }
    out.set_item(&**m, vm.ctx.new_str(prefix.clone()).into(), vm)?;
    for (name, child) in children(m, vm)? {
        module_paths(&child, join(&prefix, &name, vm)?, out, vm)?;
    }
    Ok(())
}

/// torch.fx's `collect_tensor_attrs`: instance attributes of `types`, then
/// each distinct child (`named_children`), the last name found winning.
pub(crate) fn constant_attrs(
    m: &PyObjectRef,
    prefix: String,
    types: &PyObjectRef,
    out: &PyDictRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if let Some(dict) = m.dict() {
        for (k, v) in dict.items_vec() {
            if v.is_instance(types, vm)? {
                out.set_item(&*v, vm.ctx.new_str(join(&prefix, &k, vm)?).into(), vm)?;
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (name, child) in children(m, vm)? {
        if seen.insert(child.as_object().get_id()) {
            constant_attrs(&child, join(&prefix, &name, vm)?, types, out, vm)?;
        }
    }
    Ok(())
}

/// The classes `copy_attr` needs: `nn.Module`, `nn.Parameter`, `Tensor`.
pub(crate) struct Classes {
    pub(crate) module: PyObjectRef,
    pub(crate) parameter: PyObjectRef,
    pub(crate) tensor: PyObjectRef,
}

/// `m._modules` (a module's child registry).
fn modules_dict(m: &PyObjectRef, vm: &VirtualMachine) -> PyResult<PyDictRef> {
    let d = m
        .dict()
        .ok_or_else(|| vm.new_type_error("a module has a __dict__"))?;
    d.get_item("_modules", vm)?
        .downcast()
        .map_err(|_| vm.new_type_error("_modules is a dict"))
}

/// torch.fx's `_copy_attr`: installs the attribute at the dotted `target` of
/// `from` at the same path of `to`, creating empty modules for missing
/// parents; plain tensors become buffers (keeping persistence). Children and
/// parameters are stored in their registries directly (what `__setattr__`
/// would do on a module that has no such name yet).
pub(crate) fn copy_attr(
    from: &PyObjectRef,
    to: &PyObjectRef,
    target: &str,
    c: &Classes,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let (prefix, field) = match target.rsplit_once('.') {
        Some((p, f)) => (Some(p), f),
        None => (None, target),
    };
    let (mut from, mut to) = (from.clone(), to.clone());
    for item in prefix.into_iter().flat_map(|p| p.split('.')) {
        let f = match modules_dict(&from, vm)?.get_item_opt(item, vm)? {
            Some(f) if !vm.is_none(&f) => f,
            _ => from.get_attr(&*vm.ctx.new_str(item), vm)?,
        };
        let t = modules_dict(&to, vm)?
            .get_item_opt(item, vm)?
            .filter(|t| !vm.is_none(t));
        let t = match t {
            Some(t) if t.is(&f) => return Ok(()),
            Some(t) => t,
            None => {
                let fresh = c.module.call((), vm)?;
                modules_dict(&to, vm)?.set_item(item, fresh.clone(), vm)?;
                fresh
            }
        };
        from = f;
        to = t;
    }
    let orig = from.get_attr(&*vm.ctx.new_str(field), vm)?;
    if orig.is_instance(&c.tensor, vm)? && !orig.is_instance(&c.parameter, vm)? {
        let non_persistent = from.dict().and_then(|d| {
            d.get_item_opt("_non_persistent_buffers_set", vm)
                .ok()
                .flatten()
        });
        let persistent = match non_persistent {
            Some(set) => !vm._contains(&set, vm.ctx.new_str(field).as_object())?,
            None => true,
        };
        let kwargs: rustpython_vm::function::KwArgs =
            [("persistent".to_owned(), vm.ctx.new_bool(persistent).into())]
                .into_iter()
                .collect();
        vm.call_method(
            &to,
            "register_buffer",
            rustpython_vm::function::FuncArgs::new(
                vec![vm.ctx.new_str(field).into(), orig],
                kwargs,
            ),
        )?;
        return Ok(());
    }
    let registry = if orig.is_instance(&c.module, vm)? {
        Some("_modules")
    } else if orig.is_instance(&c.parameter, vm)? {
        Some("_parameters")
    } else {
        None
    };
    match registry.and_then(|r| to.dict().and_then(|d| d.get_item_opt(r, vm).ok().flatten())) {
        Some(dict) => dict.set_item(field, orig, vm),
        None => to.set_attr(&*vm.ctx.new_str(field), orig, vm),
    }
}
