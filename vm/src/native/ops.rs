//! The Python face of the op registry: every row of `fxvm_ops` becomes
//! `torch.X`, `Tensor.X` and `torch.nn.functional.X` callables as its places
//! say, each dispatching `__torch_function__` before binding its arguments
//! and running the kernel.

use std::sync::OnceLock;

use fxvm_ops::{Op, Place, Schema};
use rustpython_vm::builtins::{PyDict, PyType};
use rustpython_vm::function::{FuncArgs, IntoPyNativeFn, PyMethodFlags};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyPayload, PyResult, VirtualMachine};

use super::bind::{bind_objects, bind_values, default_to_py, to_py};
use super::convert::{IntoPy, scalar};
use super::tensor::PyTensor;
use crate::text::Utf8;

/// Types among the arguments that override `__torch_function__`, subclasses
/// before their bases, then left to right.
fn overloaded_types(args: &FuncArgs, vm: &VirtualMachine) -> Vec<PyObjectRef> {
    let tensor_type = PyTensor::class(&vm.ctx);
    let mut types: Vec<PyObjectRef> = Vec::new();
    let mut visit = |obj: &PyObjectRef| {
        let cls = obj.class();
        if cls.is(tensor_type) || scalar(obj, vm).is_some() || vm.is_none(obj) {
            return;
        }
        if cls
            .get_attr(vm.ctx.intern_str("__torch_function__"))
            .is_none()
        {
            return;
        }
        let cls_obj: PyObjectRef = cls.to_owned().into();
        if types.iter().any(|t| t.is(&cls_obj)) {
            return;
        }
        let at = types.iter().position(|t| {
            t.downcast_ref::<PyType>()
                .is_some_and(|base| cls.fast_issubclass(base))
        });
        match at {
            Some(i) => types.insert(i, cls_obj),
            None => types.push(cls_obj),
        }
    };
    for a in args.args.iter().chain(args.kwargs.values()) {
        visit(a);
        if let Some(items) = super::bind::seq(a) {
            items.iter().for_each(&mut visit);
        }
    }
    types
}

std::thread_local! {
    /// The `torch.overrides.TorchFunctionMode`s entered and not yet left,
    /// innermost last.
    static MODES: std::cell::RefCell<Vec<PyObjectRef>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether a `TorchFunctionMode` is active (every torch function then goes to it).
pub(crate) fn modes_active() -> bool {
    MODES.with(|m| !m.borrow().is_empty())
}

pub(crate) fn push_mode(mode: PyObjectRef) {
    MODES.with(|m| m.borrow_mut().push(mode));
}

pub(crate) fn pop_mode() -> Option<PyObjectRef> {
    MODES.with(|m| m.borrow_mut().pop())
}

/// The active modes, outermost first.
pub(crate) fn modes() -> Vec<PyObjectRef> {
    MODES.with(|m| m.borrow().clone())
}

/// Calls each override in turn — the innermost `TorchFunctionMode` first,
/// then the arguments' types; `None` when there were none.
pub(super) fn torch_function(
    func: &PyObjectRef,
    name: &str,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let types = overloaded_types(args, vm);
    if modes_active() {
        return mode_dispatch(func, types, args, vm).map(Some);
    }
    if types.is_empty() {
        return Ok(None);
    }
    dispatch(func, name, types, args, vm).map(Some)
}

/// `func(*args)` handed to the innermost mode's `__torch_function__`, which
/// runs with that mode off (what it calls reaches the modes below, or the op).
pub(super) fn mode_dispatch(
    func: &PyObjectRef,
    types: Vec<PyObjectRef>,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    let mode = pop_mode().expect("a mode is active");
    let kwargs = PyDict::default().into_ref(&vm.ctx);
    let call = (|| {
        for (k, v) in &args.kwargs {
            kwargs.set_item(k.as_str(), v.clone(), vm)?;
        }
        mode.get_attr("__torch_function__", vm)?.call(
            (
                func.clone(),
                vm.ctx.new_tuple(types),
                vm.ctx.new_tuple(args.args.clone()),
                kwargs,
            ),
            vm,
        )
    })();
    push_mode(mode);
    call
}

pub(super) fn dispatch(
    func: &PyObjectRef,
    name: &str,
    types: Vec<PyObjectRef>,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult {
    let types_tuple = vm.ctx.new_tuple(types.clone());
    let pos = vm.ctx.new_tuple(args.args.clone());
    let kwargs = PyDict::default().into_ref(&vm.ctx);
    for (k, v) in &args.kwargs {
        kwargs.set_item(k.as_str(), v.clone(), vm)?;
    }
    for t in &types {
        let handler = t.get_attr("__torch_function__", vm)?;
        let r = handler.call(
            (
                func.clone(),
                types_tuple.clone(),
                pos.clone(),
                kwargs.clone(),
            ),
            vm,
        )?;
        if !r.is(&vm.ctx.not_implemented) {
            return Ok(r);
        }
    }
    let names: Vec<String> = types
        .iter()
        .map(|t| {
            t.repr(vm)
                .map(|s| s.lossy().into_owned())
                .unwrap_or_default()
        })
        .collect();
    Err(vm.new_type_error(format!(
        "no implementation found for '{name}' on types that implement __torch_function__: [{}]",
        names.join(", ")
    )))
}

/// The call a Python-level function hands to `__torch_function__`: the
/// first `n` parameters positionally, every other one by keyword with its
/// default filled in (traced graphs record exactly this form).
fn python_form(
    schema: &Schema,
    n: usize,
    args: &FuncArgs,
    vm: &VirtualMachine,
) -> PyResult<FuncArgs> {
    let objects = bind_objects(schema, args.clone(), vm)?;
    let value = |i: usize| {
        objects[i]
            .clone()
            .unwrap_or_else(|| default_to_py(schema.params[i].default.as_ref().map(|d| d.text), vm))
    };
    // A `*varargs` parameter among the positional ones passes its items
    // (`einsum(equation, *operands)`).
    let mut positional: Vec<PyObjectRef> = Vec::new();
    for i in 0..n.min(schema.params.len()) {
        match super::bind::seq(&value(i)) {
            Some(items) if schema.params[i].varargs => positional.extend(items),
            _ => positional.push(value(i)),
        }
    }
    let kwargs = (n..schema.params.len())
        .map(|i| (schema.params[i].name.to_owned(), value(i)))
        .collect::<rustpython_vm::function::KwArgs>();
    Ok(FuncArgs::new(positional, kwargs))
}

/// The attribute reads PyTorch's Python-written function makes first: an
/// argument without the attribute raises Python's AttributeError there.
/// An optional parameter's None is not read (PyTorch's code tests it
/// first); a required one's is.
fn python_reads(op: &Op, objects: &[Option<PyObjectRef>], vm: &VirtualMachine) -> PyResult<()> {
    let is_none = |i: usize| objects[i].as_ref().is_none_or(|o| vm.is_none(o));
    for read in &op.python_reads {
        if read.when_none.is_some_and(|c| !is_none(c)) {
            continue;
        }
        let (i, attr) = (read.param, read.attr);
        let optional = op.schema.params[i].optional;
        let Some(obj) = objects[i].as_ref().filter(|o| !(optional && vm.is_none(o))) else {
            continue;
        };
        if vm.get_attribute_opt(obj.clone(), attr)?.is_none() {
            return Err(vm.new_attribute_error(format!(
                "'{}' object has no attribute '{attr}'",
                obj.class().name()
            )));
        }
    }
    Ok(())
}

/// A callable for one op at one place: dispatches `__torch_function__`,
/// binds, runs the kernel under the panic guard.
fn make_call(
    op: &'static Op,
    me: &'static OnceLock<PyObjectRef>,
    qualname: &'static str,
    form: Option<usize>,
) -> impl Fn(FuncArgs, &VirtualMachine) -> PyResult + Send + Sync + 'static {
    move |args: FuncArgs, vm: &VirtualMachine| {
        if let Some(func) = me.get() {
            let types = overloaded_types(&args, vm);
            let modes = modes_active();
            if modes || !types.is_empty() {
                let python;
                let call = match form {
                    Some(n) => {
                        python = python_form(&op.schema, n, &args, vm)?;
                        &python
                    }
                    None => &args,
                };
                return match modes {
                    true => mode_dispatch(func, types, call, vm),
                    false => dispatch(func, qualname, types, call, vm),
                };
            }
        }
        let objects = bind_objects(&op.schema, args, vm)?;
        if form.is_some() {
            python_reads(op, &objects, vm)?;
        }
        super::guard::guard(qualname, vm, || {
            let values = bind_values(&op.schema, &objects, vm)?;
            let result = op.run(values).py(vm)?;
            if crate::tensor::autograd::is_anomaly_enabled() {
                super::anomaly::stamp_forward_trace(&result, vm);
            }
            to_py(result, &objects, vm)
        })
    }
}

/// A builtin function whose `__module__` reads `module`, as PyTorch's do.
/// `doc`, when given, starts with the text signature (`name(sig)\n--\n\n`)
/// that `inspect.signature` reads.
fn native_function<Kind>(
    name: &'static str,
    module: &'static str,
    call: impl IntoPyNativeFn<Kind>,
    doc: Option<&'static str>,
    vm: &VirtualMachine,
) -> PyObjectRef {
    crate::binding::definition(name, call, PyMethodFlags::empty(), doc)
        .to_function()
        .with_module(vm.ctx.intern_str(module))
        .into_ref(&vm.ctx)
        .into()
}

/// Builds every binding: installs `Tensor` methods and returns the
/// `torch`, `torch.nn.functional` and `torch.linalg` functions by name.
pub(crate) fn bind(vm: &VirtualMachine) -> PyResult<(PyObjectRef, PyObjectRef, PyObjectRef)> {
    let torch = PyDict::default().into_ref(&vm.ctx);
    let functional = PyDict::default().into_ref(&vm.ctx);
    let linalg = PyDict::default().into_ref(&vm.ctx);
    let class: &'static Py<PyType> = PyTensor::class(&vm.ctx);
    // Bindings live as long as the process, like the registry they call.
    let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
    for op in fxvm_ops::registry().ops() {
        let name = op.name();
        let mut torch_fn = None;
        for &place in op.places {
            let me: &'static OnceLock<PyObjectRef> = Box::leak(Box::new(OnceLock::new()));
            let f: PyObjectRef = match (place, place.module()) {
                (Place::FunctionalIsTorch, _) => torch_fn.clone().unwrap_or_else(|| {
                    panic!("{name}: FunctionalIsTorch needs a Torch place first")
                }),
                (Place::Method, _) | (_, None) => vm
                    .new_method(
                        name,
                        class,
                        make_call(op, me, leak(format!("Tensor.{name}")), None),
                    )
                    .into(),
                (_, Some(module)) => native_function(
                    name,
                    module,
                    make_call(
                        op,
                        me,
                        leak(format!("{module}.{name}")),
                        place.python_form(),
                    ),
                    // Functions PyTorch writes in Python have signatures;
                    // its builtins have none.
                    place
                        .python_form()
                        .map(|_| leak(format!("{name}{}\n--\n\n", op.schema.python_signature()))),
                    vm,
                ),
            };
            let _ = me.set(f.clone());
            match place {
                Place::Method => class.set_attr(vm.ctx.intern_str(name), f),
                p if p.is_torch() => {
                    torch.set_item(name, f.clone(), vm)?;
                    torch_fn = Some(f);
                }
                Place::FunctionalNativeAs(alias) => functional.set_item(alias, f, vm)?,
                Place::Linalg => {
                    linalg.set_item(name.strip_prefix("linalg_").unwrap_or(name), f, vm)?
                }
                _ => functional.set_item(name, f, vm)?,
            }
        }
    }
    Ok((torch.into(), functional.into(), linalg.into()))
}
