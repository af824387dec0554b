//! The fake value of every node of a shape-traced graph, natively where a
//! node is a registry op on fake values (most of a model's nodes): its
//! arguments are read from the earlier nodes' `meta["val"]` and the op's
//! shape rule gives the result. Any other node is left to the tracer's
//! Python `_value`, which may also fail (the node then keeps no value).

use rustpython_vm::builtins::{PyInt, PyList, PyTuple};
use rustpython_vm::{AsObject, Py, PyObjectRef, PyResult, VirtualMachine};

use super::node::{Op, PyNode};
use fxvm_vm::text::Utf8;

/// `a` with every node replaced by its value; `None` when a node has none
/// or `a` holds something this pass leaves to Python (slices, dicts …).
fn resolve(a: &PyObjectRef, vm: &VirtualMachine) -> Option<PyObjectRef> {
    if let Some(node) = a.downcast_ref::<PyNode>() {
        return node.meta_get("val", vm);
    }
    if let Some(t) = a.downcast_ref::<PyTuple>() {
        let items = t
            .iter()
            .map(|x| resolve(x, vm))
            .collect::<Option<Vec<_>>>()?;
        return Some(vm.ctx.new_tuple(items).into());
    }
    if let Some(d) = a.downcast_ref::<rustpython_vm::builtins::PyDict>() {
        let out = vm.ctx.new_dict();
        for (k, v) in d.items_vec() {
            out.set_item(&*k, resolve(&v, vm)?, vm).ok()?;
        }
        return Some(out.into());
    }
    if a.class().is(vm.ctx.types.list_type) || &*a.class().name() == "immutable_list" {
        let items: Vec<PyObjectRef> = a.try_to_value(vm).ok()?;
        let items = items
            .iter()
            .map(|x| resolve(x, vm))
            .collect::<Option<Vec<_>>>()?;
        return Some(vm.ctx.new_list(items).into());
    }
    let plain = vm.is_none(a)
        || a.class().is(vm.ctx.types.int_type)
        || a.class().is(vm.ctx.types.float_type)
        || a.class().is(vm.ctx.types.bool_type)
        || a.class().is(vm.ctx.types.str_type)
        || matches!(
            &*a.class().name(),
            "dtype" | "device" | "SymInt" | "FakeTensor"
        );
    plain.then(|| a.clone())
}

fn is_fake(v: &PyObjectRef) -> bool {
    &*v.class().name() == "FakeTensor"
}

/// What the pass needs at hand.
struct Context {
    fake_cls: PyObjectRef,
    tensor_cls: PyObjectRef,
    getitem: PyObjectRef,
    /// `operator` function name → the Tensor method computing it on fakes.
    operators: PyObjectRef,
    /// qualified name → module, for `call_module` nodes.
    modules: PyObjectRef,
    /// `ShapeTracer._leaf_forward(module, args, kwargs)`.
    leaf_forward: PyObjectRef,
}

/// The value of `node` computed here, or `None` to leave it to Python.
fn native_value(
    node: &Py<PyNode>,
    cx: &Context,
    vm: &VirtualMachine,
) -> PyResult<Option<PyObjectRef>> {
    let (fake_cls, tensor_cls, getitem) = (&cx.fake_cls, &cx.tensor_cls, &cx.getitem);
    let op = node.op();
    if !matches!(op, Op::CallFunction | Op::CallMethod | Op::CallModule) {
        return Ok(None);
    }
    let Some(args) = resolve(&node.args_tuple().into(), vm) else {
        return Ok(None);
    };
    let Some(kwargs) = resolve(&node.kwargs_dict().into(), vm)
        .or_else(|| (node.kwargs_dict().__len__() == 0).then(|| vm.ctx.new_dict().into()))
    else {
        return Ok(None);
    };
    let args_t = args
        .downcast_ref::<PyTuple>()
        .expect("a tuple")
        .as_slice()
        .to_vec();
    let target = node.target();
    let call = |f: &PyObjectRef| {
        let kw = fxvm_vm::binding::kwargs(&kwargs, vm);
        f.call(
            rustpython_vm::function::FuncArgs::new(args_t.clone(), kw),
            vm,
        )
    };
    if op == Op::CallModule {
        // A leaf module's forward on the fakes (the rules of the ops it
        // calls), its buffers restored after (`ShapeTracer._leaf_forward`).
        let module = cx.modules.get_item(&*target, vm)?;
        return cx
            .leaf_forward
            .call((module, args.clone(), kwargs.clone()), vm)
            .map(Some);
    }
    let Some(first) = args_t.first() else {
        return Ok(None);
    };
    if op == Op::CallFunction
        && !target.is(getitem)
        && target
            .get_attr("__module__", vm)
            .is_ok_and(|m| m.str(vm).is_ok_and(|s| s.to_str() == Some("_operator")))
    {
        // An operator on fakes is the Tensor method computing it; on sizes
        // and numbers, the operator itself (SymInt arithmetic).
        if is_fake(first) || args_t.get(1).is_some_and(is_fake) {
            let name = target.get_attr("__name__", vm)?;
            let Ok(method) = cx.operators.get_item(&*name, vm) else {
                return Ok(None);
            };
            let func = tensor_cls.get_attr(&*method.str(vm)?, vm)?;
            // `2 * x` has the sizes and dtype of `x * 2` (not so a product).
            let args = if is_fake(first) {
                args.clone()
            } else if name.str(vm)?.text(vm)? != "matmul" {
                vm.ctx
                    .new_tuple(vec![args_t[1].clone(), first.clone()])
                    .into()
            } else {
                return Ok(None);
            };
            return Ok(
                fxvm_shapes::fake_torch_function(fake_cls.clone(), func, args, kwargs, vm).ok(),
            );
        }
        return Ok(call(&target).ok());
    }
    let func = match op {
        Op::CallFunction if target.is(getitem) => {
            // `split(...)[i]`, `x.size()[i]`: an item of a tuple value.
            if let (Some(t), Some(i)) = (
                first.downcast_ref::<PyTuple>(),
                args_t.get(1).and_then(|i| i.downcast_ref::<PyInt>()),
            ) {
                let i = i.try_to_primitive::<isize>(vm)?;
                let n = t.len() as isize;
                let at = if i < 0 { i + n } else { i };
                return Ok((0..n)
                    .contains(&at)
                    .then(|| t.as_slice()[at as usize].clone()));
            }
            return Ok(None);
        }
        Op::CallFunction => target,
        _ => {
            // A Tensor method on a fake (its own size methods stay in Python).
            let name = target.str(vm)?.text(vm)?.to_owned();
            if !is_fake(first) {
                return Ok(None);
            }
            if matches!(name.as_str(), "size" | "dim" | "numel") {
                let rest = vm.ctx.new_tuple(args_t[1..].to_vec());
                let method = first.get_attr(&*vm.ctx.new_str(name), vm)?;
                return Ok(method.call(rest.as_slice().to_vec(), vm).ok());
            }
            match tensor_cls.get_attr(&*vm.ctx.new_str(name), vm) {
                Ok(f) => f,
                Err(_) => return Ok(None),
            }
        }
    };
    let has_fake = args_t.iter().any(|a| {
        is_fake(a)
            || a.downcast_ref::<PyList>()
                .is_some_and(|l| l.borrow_vec().iter().any(is_fake))
    });
    if !has_fake || fxvm_vm::binding::op_of(&func, vm).is_none_or(|o| !o.has_meta()) {
        return Ok(None);
    }
    match fxvm_shapes::fake_torch_function(fake_cls.clone(), func, args, kwargs, vm) {
        Ok(v) => Ok(Some(v)),
        Err(_) => Ok(None),
    }
}

/// `propagate(nodes, tracer, fake_cls, operators, modules)`: sets `meta["val"]` on every node
/// that can have one (see the module doc).
pub(crate) fn propagate(
    nodes: PyObjectRef,
    tracer: PyObjectRef,
    fake_cls: PyObjectRef,
    operators: PyObjectRef,
    modules: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let operator = fxvm_vm::binding::module("operator", vm)?;
    let cx = Context {
        fake_cls,
        tensor_cls: fxvm_vm::binding::module("torch", vm)?.get_attr("Tensor", vm)?,
        getitem: operator.get_attr("getitem", vm)?,
        operators,
        modules,
        leaf_forward: tracer.get_attr("_leaf_forward", vm)?,
    };
    let python_value = tracer.get_attr("_value", vm)?;
    let nodes: Vec<PyObjectRef> = nodes.try_to_value(vm)?;
    for obj in nodes {
        let Some(node) = obj.downcast_ref::<PyNode>() else {
            continue;
        };
        if node.op() == Op::Output || node.meta_get("val", vm).is_some() {
            continue;
        }
        match native_value(node, &cx, vm) {
            Ok(Some(v)) => node.meta(vm).set_item("val", v, vm)?,
            // Python's turn; best effort: a node it cannot follow either
            // keeps no value.
            _ => {
                let _ = python_value.call((obj.clone(),), vm);
            }
        }
    }
    Ok(())
}
