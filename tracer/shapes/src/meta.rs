//! `torch._C._symbolic.infer` and `infer_subscript`: an op's outputs for
//! symbolic inputs, by the shape rule of its registry row. Tensors arrive
//! as fake tensors (objects with `_sym_sizes`, a tuple of `SymExpr`, and a
//! `dtype`) or real ones, sizes as `SymInt`/`SymExpr`/int; the questions a
//! rule asks go to the caller's `holds(expr)` and `hint(expr)`, which
//! answer from the example values (recording guards).

use fxvm_ops::meta::{Item, Meta, MetaOut, Oracle, TensorMeta};
use fxvm_ops::{Ty, Value};
use fxvm_symbolic::Expr;
use fxvm_vm::binding;
use rustpython_vm::builtins::{PyBaseExceptionRef, PyDict, PyEllipsis, PySlice, PyTuple};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

use crate::sym::PySymExpr;
use fxvm_vm::text::Utf8;

/// The caller's answers, with the first Python error they raised kept.
struct PyOracle<'a> {
    holds: PyObjectRef,
    hint: PyObjectRef,
    error: Option<PyBaseExceptionRef>,
    vm: &'a VirtualMachine,
}

impl<'a> PyOracle<'a> {
    fn new(holds: PyObjectRef, hint: PyObjectRef, vm: &'a VirtualMachine) -> PyOracle<'a> {
        PyOracle {
            holds,
            hint,
            error: None,
            vm,
        }
    }
}

impl Oracle for PyOracle<'_> {
    fn holds(&mut self, cond: &Expr) -> bool {
        if self.error.is_some() {
            return false;
        }
        let e = PySymExpr::wrap(cond.clone(), self.vm);
        match self
            .holds
            .call((e,), self.vm)
            .and_then(|r| r.try_to_bool(self.vm))
        {
            Ok(b) => b,
            Err(err) => {
                self.error = Some(err);
                false
            }
        }
    }

    fn hint(&mut self, e: &Expr) -> Option<i64> {
        let obj = PySymExpr::wrap(e.clone(), self.vm);
        let r = self.hint.call((obj,), self.vm).ok()?;
        r.try_into_value::<i64>(self.vm).ok()
    }
}

/// A size: a `SymExpr`, a `SymInt` (its node's expression) or an int.
fn size(o: &PyObjectRef, vm: &VirtualMachine) -> Option<Expr> {
    if let Some(e) = o.downcast_ref::<PySymExpr>() {
        return Some(e.expr().clone());
    }
    if &*o.class().name() == "SymInt" {
        let expr = o.get_attr("node", vm).ok()?.get_attr("expr", vm).ok()?;
        return expr.downcast_ref::<PySymExpr>().map(|e| e.expr().clone());
    }
    if o.class().is(vm.ctx.types.bool_type) {
        return None;
    }
    o.clone()
        .try_into_value::<i64>(vm)
        .ok()
        .map(|i| Expr::int(i as i128))
}

/// A fake or real tensor, described.
fn tensor_meta(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<TensorMeta>> {
    if let Some(t) = binding::tensor_of(o) {
        return Ok(Some(TensorMeta::of(t.shape(), t.dtype())));
    }
    let Ok(sizes) = o.get_attr("_sym_sizes", vm) else {
        return Ok(None);
    };
    let sizes = binding::items(&sizes)
        .ok_or_else(|| vm.new_type_error("_sym_sizes must be a tuple"))?
        .iter()
        .map(|s| size(s, vm))
        .collect::<Option<Vec<_>>>();
    let Some(sizes) = sizes else { return Ok(None) };
    let dtype = binding::dtype_from_py(&o.get_attr("dtype", vm)?, vm)?;
    Ok(Some(TensorMeta::new(sizes, dtype)))
}

fn has_tensor(ty: &Ty) -> bool {
    match ty {
        Ty::Tensor => true,
        Ty::Union(alts) => alts.iter().any(has_tensor),
        _ => false,
    }
}

/// One parameter's object as a rule sees it; `None` when it cannot be
/// described (the caller falls back to running the op).
fn param(ty: &Ty, o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Meta>> {
    if has_tensor(ty)
        && let Some(t) = tensor_meta(o, vm)?
    {
        return Ok(Some(Meta::Tensor(t)));
    }
    match ty {
        Ty::TensorList => {
            let Some(items) = binding::items(o) else {
                return Ok(None);
            };
            let metas = items
                .iter()
                .map(|x| tensor_meta(x, vm))
                .collect::<PyResult<Option<Vec<_>>>>()?;
            return Ok(metas.map(Meta::Tensors));
        }
        Ty::Int => {
            if let Some(e) = size(o, vm)
                && o.downcast_ref::<rustpython_vm::builtins::PyInt>().is_none()
            {
                return Ok(Some(Meta::Int(e)));
            }
        }
        Ty::IntList => {
            let items = binding::items(o).unwrap_or_else(|| vec![o.clone()]);
            return Ok(items
                .iter()
                .map(|x| size(x, vm))
                .collect::<Option<Vec<_>>>()
                .map(Meta::Ints));
        }
        Ty::Union(alts) => {
            // A traced size, or a list holding one, where the declaration
            // takes an int, a number or an int list.
            if alts.iter().any(|t| matches!(t, Ty::Int | Ty::Scalar))
                && let Some(e) = size(o, vm).filter(|e| e.as_int().is_none())
            {
                return Ok(Some(Meta::Int(e)));
            }
            if alts.contains(&Ty::IntList)
                && let Some(items) = binding::items(o)
                && let Some(sizes) = items
                    .iter()
                    .map(|x| size(x, vm))
                    .collect::<Option<Vec<_>>>()
                && sizes.iter().any(|e| e.as_int().is_none())
            {
                return Ok(Some(Meta::Ints(sizes)));
            }
        }
        Ty::Scalar if size(o, vm).is_some_and(|e| e.as_int().is_none()) => {
            return Ok(Some(Meta::Int(size(o, vm).expect("checked"))));
        }
        _ => {}
    }
    Ok(binding::convert(ty, o, vm)?.map(Meta::Value))
}

fn tensor_to_py(t: TensorMeta, vm: &VirtualMachine) -> PyResult {
    let sizes: Vec<PyObjectRef> = t
        .sizes
        .into_iter()
        .map(|s| PySymExpr::wrap(s, vm).into())
        .collect();
    Ok(vm
        .ctx
        .new_tuple(vec![
            vm.ctx.new_tuple(sizes).into(),
            binding::dtype_to_py(t.dtype, vm)?,
        ])
        .into())
}

fn finish(
    out: fxvm_tensor::Result<MetaOut>,
    oracle: PyOracle<'_>,
    vm: &VirtualMachine,
) -> PyResult {
    if let Some(e) = oracle.error {
        return Err(e);
    }
    let out = out.map_err(|e| vm.new_runtime_error(e.to_string()))?;
    match out {
        MetaOut::Tensor(t) => tensor_to_py(t, vm),
        MetaOut::Tuple(ts) => {
            let items = ts
                .into_iter()
                .map(|t| tensor_to_py(t, vm))
                .collect::<PyResult<Vec<_>>>()?;
            Ok(vm.ctx.new_list(items).into())
        }
        MetaOut::Input(i) => Ok(vm.ctx.new_int(i).into()),
    }
}

/// `infer(func, args, kwargs, holds, hint)`: `(sizes, dtype)` of the one
/// tensor result, a list of those for a tuple, the index of the parameter
/// an in-place op returns, or `None` when the op has no rule or an argument
/// cannot be described.
pub(crate) fn infer(
    func: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    holds: PyObjectRef,
    hint: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    match binding::op_of(&func, vm).filter(|op| op.has_meta()) {
        Some(op) => infer_op(op, args, kwargs, holds, hint, vm),
        None => Ok(vm.ctx.none()),
    }
}

/// [`infer`] for the registry row `op`, which has a shape rule.
fn infer_op(
    op: &'static fxvm_ops::Op,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    holds: PyObjectRef,
    hint: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let positional = args
        .downcast_ref::<PyTuple>()
        .map(|t| t.as_slice().to_vec())
        .unwrap_or_default();
    let keywords = binding::kwargs(&kwargs, vm);
    let objects = binding::bind_objects(&op.schema, FuncArgs::new(positional, keywords), vm)?;
    let mut metas = Vec::with_capacity(objects.len());
    for (p, o) in op.schema.params.iter().zip(&objects) {
        let meta = match o {
            Some(o) if !vm.is_none(o) => param(&p.ty, o, vm)?,
            _ => Some(Meta::Value(p.default_value().unwrap_or(Value::None))),
        };
        match meta {
            Some(m) => metas.push(m),
            None => return Ok(vm.ctx.none()),
        }
    }
    let mut oracle = PyOracle::new(holds, hint, vm);
    let out = op.infer(metas, &mut oracle).expect("the op has a rule");
    finish(out, oracle, vm)
}

/// One subscript item; `None` for what rules cannot describe (boolean masks).
fn item(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<Item>> {
    if vm.is_none(o) {
        return Ok(Some(Item::NewAxis));
    }
    if o.downcast_ref::<PyEllipsis>().is_some() {
        return Ok(Some(Item::Ellipsis));
    }
    if let Some(s) = o.downcast_ref::<PySlice>() {
        let bound = |b: Option<&PyObjectRef>| match b {
            Some(b) if !vm.is_none(b) => size(b, vm).map(Some),
            _ => Some(None),
        };
        let (Some(start), Some(stop)) = (bound(s.start.as_ref()), bound(Some(&s.stop))) else {
            return Ok(None);
        };
        let step = match bound(s.step.as_ref()) {
            Some(None) => 1,
            Some(Some(e)) => match e.as_int() {
                Some(i) => i as i64,
                None => return Ok(None),
            },
            None => return Ok(None),
        };
        return Ok(Some(Item::Slice { start, stop, step }));
    }
    if let Some(t) = tensor_meta(o, vm)? {
        return Ok(
            (!t.dtype.is_float() && t.dtype != fxvm_tensor::DType::Bool).then(|| {
                if t.ndim() == 0 {
                    Item::Int(Expr::int(0))
                } else {
                    Item::Tensor(t)
                }
            }),
        );
    }
    if let Some(items) = binding::items(o) {
        if items.iter().all(|x| size(x, vm).is_some()) {
            return Ok(Some(Item::Tensor(TensorMeta::of(
                &[items.len()],
                fxvm_tensor::DType::I64,
            ))));
        }
        return Ok(None);
    }
    Ok(size(o, vm).map(Item::Int))
}

/// `infer_subscript(x, index, holds, hint)`: `(sizes, dtype)` of `x[index]`,
/// or `None` when the index cannot be described.
pub(crate) fn infer_subscript(
    x: PyObjectRef,
    index: PyObjectRef,
    holds: PyObjectRef,
    hint: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let Some(x) = tensor_meta(&x, vm)? else {
        return Ok(vm.ctx.none());
    };
    let objects = match index.downcast_ref::<PyTuple>() {
        Some(t) => t.as_slice().to_vec(),
        None => vec![index.clone()],
    };
    let mut items = Vec::with_capacity(objects.len());
    for o in &objects {
        match item(o, vm)? {
            Some(i) => items.push(i),
            None => return Ok(vm.ctx.none()),
        }
    }
    let mut oracle = PyOracle::new(holds, hint, vm);
    let out = fxvm_ops::meta::subscript_of(&x, &items, &mut oracle);
    finish(out.map(MetaOut::Tensor), oracle, vm)
}

/// The `shape_env` of the first fake tensor among `args` (one level of
/// lists looked into).
fn shape_env(args: &[PyObjectRef], vm: &VirtualMachine) -> Option<PyObjectRef> {
    let env = |o: &PyObjectRef| -> Option<PyObjectRef> {
        if &*o.class().name() == "SymInt" {
            return o.get_attr("node", vm).ok()?.get_attr("shape_env", vm).ok();
        }
        o.get_attr("_sym_sizes", vm).ok()?;
        o.get_attr("shape_env", vm).ok()
    };
    let fake = |o: &PyObjectRef| (&*o.class().name() != "SymInt").then(|| env(o)).flatten();
    // A fake's environment first; a size's when there is no fake.
    let find = |f: &dyn Fn(&PyObjectRef) -> Option<PyObjectRef>| {
        args.iter()
            .find_map(|a| f(a).or_else(|| binding::items(a)?.iter().find_map(f)))
    };
    find(&fake).or_else(|| find(&env))
}

/// A new `cls` (a FakeTensor class) for one described tensor.
fn make_fake(
    cls: &PyObjectRef,
    item: &PyObjectRef,
    env: &PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let pair = item
        .downcast_ref::<PyTuple>()
        .ok_or_else(|| vm.new_type_error("a (sizes, dtype) pair"))?;
    let new = vm
        .ctx
        .types
        .object_type
        .as_object()
        .get_attr("__new__", vm)?;
    let fake = new.call((cls.clone(),), vm)?;
    let dict = fake
        .dict()
        .ok_or_else(|| vm.new_type_error("fake tensors have a __dict__"))?;
    dict.set_item("_sym_sizes", pair.as_slice()[0].clone(), vm)?;
    dict.set_item("dtype", pair.as_slice()[1].clone(), vm)?;
    dict.set_item("shape_env", env.clone(), vm)?;
    Ok(fake)
}

/// `FakeTensor.__torch_function__(cls, func, types, args, kwargs)`: the
/// fake result of `func` by its op's shape rule; `NoShapeRule` (from
/// `torch.fx.experimental.fake`) when there is none.
pub fn fake_torch_function(
    cls: PyObjectRef,
    func: PyObjectRef,
    args: PyObjectRef,
    kwargs: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    let positional = args
        .downcast_ref::<PyTuple>()
        .map(|t| t.as_slice().to_vec())
        .unwrap_or_default();
    let mut all = positional.clone();
    if let Some(d) = kwargs.downcast_ref::<PyDict>() {
        all.extend(d.values_vec());
    }
    let env = shape_env(&all, vm)
        .ok_or_else(|| vm.new_type_error("no fake tensor among the arguments"))?;
    let Some(op) = binding::op_of(&func, vm) else {
        // A function written in Python (`F.multi_head_attention_forward`,
        // a library's own): its body, whose ops come back here one by one.
        let run = vm
            .import("torch", 0)?
            .get_attr("_C", vm)?
            .get_attr("_run_without_torch_function", vm)?;
        let mut call_args = vec![func];
        call_args.extend(positional);
        return run.call(FuncArgs::new(call_args, binding::kwargs(&kwargs, vm)), vm);
    };
    let out = if op.has_meta() {
        let holds = env.get_attr("_holds", vm)?;
        let hint = env.get_attr("_hint", vm)?;
        infer_op(op, args, kwargs.clone(), holds, hint, vm)?
    } else {
        vm.ctx.none()
    };
    if vm.is_none(&out) {
        let name = func
            .get_attr("__qualname__", vm)
            .and_then(|q| q.str(vm).map(|s| s.lossy().into_owned()))
            .unwrap_or_else(|_| "this op".to_owned());
        // `import` answers the top package; the module itself is in sys.modules.
        let no_rule = vm
            .sys_module
            .get_attr("modules", vm)?
            .get_item("torch.fx.experimental.fake", vm)?
            .get_attr("NoShapeRule", vm)?;
        return Err(vm.new_exception_msg(
            no_rule
                .downcast()
                .map_err(|_| vm.new_type_error("NoShapeRule is a class"))?,
            format!("no shape rule for {name}").into(),
        ));
    }
    if let Some(i) = out.downcast_ref::<rustpython_vm::builtins::PyInt>() {
        let i = i.try_to_primitive::<usize>(vm)?;
        return positional
            .get(i)
            .cloned()
            .or_else(|| all.get(i).cloned())
            .ok_or_else(|| vm.new_index_error("in-place result out of range"));
    }
    if let Some(list) = out.downcast_ref::<rustpython_vm::builtins::PyList>() {
        let items = list.borrow_vec().to_vec();
        let fakes = items
            .iter()
            .map(|it| make_fake(&cls, it, &env, vm))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(vm.ctx.new_tuple(fakes).into());
    }
    make_fake(&cls, &out, &env, vm)
}
