//! Patching of objects and code objects during a trace, as the native module
//! `torch._C._fx_patches`:
//! - `Patcher`: sets module globals (dict entries, shadowing builtins) and
//!   class attributes, records each change, skips objects already patched,
//!   and on leaving its `with` block reverts everything in reverse order,
//!   whether tracing finished or raised;
//! - `Wrappers`: the autowrap wrappers made so far, reused by later traces,
//!   and `public_callable_ids(namespace)`, the functions a tracer autowraps;
//! - `patch_function_args(fn, n)`: `fn` with its `*args`/`**kwargs`
//!   taken as `n` plain positional parameters (its code object rewritten).

mod patcher;
mod wrappers;

/// The module definition to register with an interpreter builder.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    module::module_def(ctx)
}

#[rustpython_vm::pymodule(name = "torch._C._fx_patches")]
mod module {
    use rustpython_vm::builtins::PyTypeRef;
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::function::KwArgs;
    use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

    #[pyattr(name = "Patcher")]
    fn patcher_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::patcher::Patcher::make_static_type()
    }

    #[pyattr(name = "Wrappers")]
    fn wrappers_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::wrappers::Wrappers::make_static_type()
    }

    /// The ids of the public callables among the values of `namespace` (a
    /// module's dict): the functions a `Tracer` autowraps.
    #[pyfunction]
    fn public_callable_ids(
        namespace: rustpython_vm::builtins::PyDictRef,
        vm: &VirtualMachine,
    ) -> PyObjectRef {
        let ids = namespace
            .items_vec()
            .into_iter()
            .filter(|(name, value)| {
                name.downcast_ref::<rustpython_vm::builtins::PyStr>()
                    .is_some_and(|n| !n.as_wtf8().as_bytes().starts_with(b"_"))
                    && value.is_callable()
            })
            .map(|(_, value)| vm.ctx.new_int(value.get_id()).into())
            .collect();
        vm.ctx.new_list(ids).into()
    }

    /// `fn` taking its varargs and keyword varargs as `nargs` positional
    /// parameters: the code object gets the new counts and loses the
    /// `CO_VARARGS`/`CO_VARKEYWORDS` flags; globals, defaults and closure stay.
    #[pyfunction]
    fn patch_function_args(f: PyObjectRef, nargs: usize, vm: &VirtualMachine) -> PyResult {
        const CO_VARARGS: i64 = 0x04;
        const CO_VARKEYWORDS: i64 = 0x08;
        let code = f.get_attr("__code__", vm)?;
        let flags: i64 = code.get_attr("co_flags", vm)?.try_into_value(vm)?;
        let changes: KwArgs = [
            ("co_argcount".to_owned(), vm.ctx.new_int(nargs).into()),
            ("co_posonlyargcount".to_owned(), vm.ctx.new_int(0).into()),
            ("co_kwonlyargcount".to_owned(), vm.ctx.new_int(0).into()),
            (
                "co_flags".to_owned(),
                vm.ctx
                    .new_int(flags & !(CO_VARARGS | CO_VARKEYWORDS))
                    .into(),
            ),
        ]
        .into_iter()
        .collect();
        let new_code = code
            .get_attr("replace", vm)?
            .call(rustpython_vm::function::FuncArgs::new(vec![], changes), vm)?;
        let function_type: PyObjectRef = f.class().to_owned().into();
        function_type.call(
            (
                new_code,
                f.get_attr("__globals__", vm)?,
                f.get_attr("__name__", vm)?,
                f.get_attr("__defaults__", vm)?,
                f.get_attr("__closure__", vm)?,
            ),
            vm,
        )
    }
}
