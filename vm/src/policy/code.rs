//! Code objects: RustPython trusts the bytecode it runs (a hand-made
//! `co_code` reaches `unreachable!` and unchecked state), so a host without
//! the native capability may not make code from bytes — `code.replace` of
//! anything but the signature (what the tracer rewrites for `*args`),
//! `types.CodeType(...)`, `marshal.loads`. `compile` stays: its bytecode
//! comes from the compiler. The code type is shared by the process's
//! interpreters, so the guards look up the caller's policy.

use std::sync::OnceLock;

use rustpython_vm::builtins::PyType;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{Py, PyObjectRef, PyRef, PyResult, VirtualMachine};

use super::registry::policy_of;
use super::shared::{own_method, set_method};
use super::{Capability, denied};

/// What `replace` may change without the native capability: the signature
/// and the names tracebacks show.
const SIGNATURE: &[&str] = &[
    "co_argcount",
    "co_posonlyargcount",
    "co_kwonlyargcount",
    "co_flags",
    "co_name",
    "co_qualname",
    "co_filename",
    "co_firstlineno",
];
const CO_VARARGS: i64 = 0x04;
const CO_VARKEYWORDS: i64 = 0x08;
/// The `co_flags` bits a signature change may flip.
const VARARGS_FLAGS: i64 = CO_VARARGS | CO_VARKEYWORDS;

/// A class's constructor slot.
type NewFunc = fn(PyRef<PyType>, FuncArgs, &VirtualMachine) -> PyResult;

static REPLACE: OnceLock<PyObjectRef> = OnceLock::new();
static NEW: OnceLock<NewFunc> = OnceLock::new();

fn restricted(vm: &VirtualMachine) -> bool {
    policy_of(vm).is_some_and(|p| !p.native)
}

/// Guards `code.replace` and the code constructor, once per process
/// ([`super::shared`]).
pub(super) fn patch(vm: &VirtualMachine) -> PyResult<()> {
    let class: &'static Py<PyType> = vm.ctx.types.code_type;
    let _ = REPLACE.set(own_method(vm, class, "replace")?);
    let guarded = |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        let original = REPLACE.get().expect("set before the method is replaced");
        if restricted(vm) {
            check_replace(&args, vm)?;
        }
        original.call(args, vm)
    };
    set_method(
        vm,
        class,
        "replace",
        "Return a copy of the code object with new values for the specified fields.",
        guarded,
    );

    if let Some(new) = class.slots.new.load() {
        let _ = NEW.set(new);
        class.slots.new.store(Some(guarded_new));
        let new_name = vm.ctx.intern_str("__new__");
        let constructor = vm.new_function(
            "__new__",
            |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                let mut args = args;
                if args.args.is_empty() {
                    return Err(vm.new_type_error("code.__new__(): not enough arguments"));
                }
                let cls: PyRef<PyType> =
                    args.args.remove(0).downcast().map_err(|_| {
                        vm.new_type_error("code.__new__(X): X is not a type object")
                    })?;
                guarded_new(cls, args, vm)
            },
        );
        class.set_attr(new_name, constructor.into());
    }
    Ok(())
}

fn guarded_new(cls: PyRef<PyType>, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if restricted(vm) {
        return Err(denied(
            vm,
            Capability::Native,
            "types.CodeType() (code from bytes)",
        ));
    }
    let original = NEW.get().expect("set before the slot is replaced");
    original(cls, args, vm)
}

/// A `replace` that only re-declares the signature (counts within the
/// code's locals, only the varargs flags flipped).
fn check_replace(args: &FuncArgs, vm: &VirtualMachine) -> PyResult<()> {
    let refuse = |what: &str| {
        Err(denied(
            vm,
            Capability::Native,
            &format!("code.replace({what}=...)"),
        ))
    };
    let Some(code) = args.args.first() else {
        return Ok(());
    };
    if args.args.len() > 1 {
        return refuse("positional");
    }
    if let Some(key) = args
        .kwargs
        .keys()
        .find(|k| !SIGNATURE.contains(&k.as_str()))
    {
        return refuse(key);
    }
    let int = |name: &'static str| -> PyResult<i64> {
        match args.kwargs.get(name) {
            Some(v) => v.clone().try_into_value(vm),
            None => code.get_attr(name, vm)?.try_into_value(vm),
        }
    };
    let old_flags: i64 = code.get_attr("co_flags", vm)?.try_into_value(vm)?;
    let flags = int("co_flags")?;
    if (flags ^ old_flags) & !VARARGS_FLAGS != 0 {
        return refuse("co_flags");
    }
    let nlocals: i64 = code.get_attr("co_nlocals", vm)?.try_into_value(vm)?;
    let (argcount, posonly, kwonly) = (
        int("co_argcount")?,
        int("co_posonlyargcount")?,
        int("co_kwonlyargcount")?,
    );
    let star = i64::from(flags & CO_VARARGS != 0) + i64::from(flags & CO_VARKEYWORDS != 0);
    if argcount < 0
        || kwonly < 0
        || posonly < 0
        || posonly > argcount
        || argcount + kwonly + star > nlocals
    {
        return refuse("co_argcount");
    }
    Ok(())
}
