//! The Python face of autograd: `grad_fn` nodes (one Python class per
//! node name, as PyTorch's `AddmmBackward0`), Python callables as hooks,
//! and `torch._C._autograd`'s grad mode and backward functions.

use std::cell::RefCell;
use std::sync::Arc;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyDict, PyTypeRef};
use rustpython_vm::function::{FuncArgs, PyComparisonValue};
use rustpython_vm::types::{Comparable, Hashable, PyComparisonOp, PyTypeSlots, Representable};
use rustpython_vm::{
    AsObject, Py, PyObject, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use crate::tensor::autograd::{Hook, Node};
use crate::tensor::{Tensor, TensorError};

use super::tensor::{PyTensor, wrap};

pub(crate) use _autograd::module_def;

thread_local! {
    /// Exceptions raised by Python hooks during a backward pass, re-raised
    /// when the pass's error reaches Python.
    static RAISED: RefCell<Vec<PyBaseExceptionRef>> = const { RefCell::new(Vec::new()) };
}

/// Keeps a Python exception for the binding edge; the core sees `Callback`.
pub(crate) fn raised(e: PyBaseExceptionRef) -> TensorError {
    RAISED.with(|r| r.borrow_mut().push(e));
    TensorError::Callback
}

/// The exception a Python callback raised, if one is waiting.
pub(crate) fn take_raised() -> Option<PyBaseExceptionRef> {
    RAISED.with(|r| r.borrow_mut().pop())
}

/// A Python result as a gradient: `None`, or a tensor replacing it.
fn returned_grad(r: PyObjectRef, vm: &VirtualMachine) -> Result<Option<Tensor>, TensorError> {
    if vm.is_none(&r) {
        return Ok(None);
    }
    match r.downcast_ref::<PyTensor>() {
        Some(t) => Ok(Some(t.tensor())),
        None => Err(raised(vm.new_type_error(format!(
            "hook returned an object of type {}, expected a Tensor or None",
            r.class().name()
        )))),
    }
}

/// `f(grad)` as a hook on a gradient.
pub(crate) fn tensor_hook(f: PyObjectRef) -> Hook {
    Arc::new(move |g: &Tensor| {
        rustpython_vm::vm::thread::with_vm(&f, |vm| {
            let r = f.call((wrap(g.clone(), vm),), vm).map_err(raised)?;
            returned_grad(r, vm)
        })
        .unwrap_or(Ok(None))
    })
}

/// `f(tensor)` after a gradient accumulated into a leaf's `.grad`.
pub(crate) fn post_accumulate_hook(f: PyObjectRef) -> Hook {
    Arc::new(move |t: &Tensor| {
        rustpython_vm::vm::thread::with_vm(&f, |vm| {
            f.call((wrap(t.clone(), vm),), vm)
                .map(|_| None)
                .map_err(raised)
        })
        .unwrap_or(Ok(None))
    })
}

/// A tuple of gradients for a node hook (`None` where undefined).
fn grads_tuple(grads: &[Option<Tensor>], vm: &VirtualMachine) -> PyObjectRef {
    vm.ctx
        .new_tuple(
            grads
                .iter()
                .map(|g| g.clone().map_or(vm.ctx.none(), |g| wrap(g, vm)))
                .collect(),
        )
        .into()
}

/// What a node hook returned: `None`, or new gradients.
fn returned_grads(
    r: PyObjectRef,
    vm: &VirtualMachine,
) -> Result<Option<Vec<Option<Tensor>>>, TensorError> {
    if vm.is_none(&r) {
        return Ok(None);
    }
    let items = super::bind::seq(&r).ok_or_else(|| {
        raised(vm.new_type_error("a node hook must return None or a tuple of gradients"))
    })?;
    items
        .into_iter()
        .map(|g| returned_grad(g, vm))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[pyclass(module = "torch.autograd.graph", name = "Node")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyNode {
    pub(crate) node: Arc<Node>,
}

/// `grad_fn` and `next_functions` entries: an instance of the class named
/// as the node (made once per name, a subclass of `Node`).
pub(crate) fn node_to_py(node: Arc<Node>, vm: &VirtualMachine) -> PyResult {
    let base = PyNode::class(&vm.ctx);
    let classes = match base.get_attr(vm.ctx.intern_str("_classes")) {
        Some(d) => d,
        None => {
            let d: PyObjectRef = PyDict::default().into_ref(&vm.ctx).into();
            base.set_attr(vm.ctx.intern_str("_classes"), d.clone());
            d
        }
    };
    let name = node.name().to_owned();
    let cls = match classes.get_item(name.as_str(), vm) {
        Ok(c) => c,
        Err(_) => {
            let c: PyObjectRef = vm
                .ctx
                .new_class(None, &name, base.to_owned(), PyTypeSlots::heap_default())
                .into();
            classes.set_item(name.as_str(), c.clone(), vm)?;
            c
        }
    };
    let cls: PyTypeRef = cls
        .downcast()
        .map_err(|_| vm.new_type_error("node class is not a type"))?;
    Ok(PyNode { node }.into_ref_with_type(vm, cls)?.into())
}

/// What removing a hook undoes.
#[derive(Debug)]
enum Registered {
    Tensor(Tensor, u64),
    Node(Arc<Node>, u64),
}

/// The handle `register_hook` returns (`torch.utils.hooks.RemovableHandle`'s role).
#[pyclass(module = "torch.utils.hooks", name = "RemovableHandle")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyHookHandle {
    registered: Registered,
}

#[pyclass]
impl PyHookHandle {
    #[pymethod]
    fn remove(&self) {
        match &self.registered {
            Registered::Tensor(t, id) => t.remove_hook(*id),
            Registered::Node(n, id) => {
                n.remove_hook(*id);
            }
        }
    }

    #[pymethod]
    fn __enter__(zelf: PyRef<Self>) -> PyRef<Self> {
        zelf
    }

    #[pymethod]
    fn __exit__(&self, _args: FuncArgs) {
        self.remove();
    }
}

pub(crate) fn tensor_handle(t: Tensor, id: u64, vm: &VirtualMachine) -> PyObjectRef {
    PyHookHandle {
        registered: Registered::Tensor(t, id),
    }
    .into_ref(&vm.ctx)
    .into()
}

#[pyclass(flags(BASETYPE), with(Comparable, Hashable, Representable))]
impl PyNode {
    #[pymethod]
    fn name(&self) -> String {
        match self.node.name() {
            "AccumulateGrad" => "torch::autograd::AccumulateGrad".to_owned(),
            n => n.to_owned(),
        }
    }

    /// `((node or None, input_nr), …)`, one per input of the forward op.
    #[pygetset]
    fn next_functions(&self, vm: &VirtualMachine) -> PyResult {
        let items = self
            .node
            .next_edges()
            .iter()
            .map(|e| {
                Ok(match e {
                    Some(e) => vm
                        .ctx
                        .new_tuple(vec![
                            node_to_py(e.node.clone(), vm)?,
                            vm.ctx.new_int(e.input_nr).into(),
                        ])
                        .into(),
                    None => vm
                        .ctx
                        .new_tuple(vec![vm.ctx.none(), vm.ctx.new_int(0).into()])
                        .into(),
                })
            })
            .collect::<PyResult<Vec<PyObjectRef>>>()?;
        Ok(vm.ctx.new_tuple(items).into())
    }

    /// A leaf accumulator's tensor.
    #[pygetset]
    fn variable(&self, vm: &VirtualMachine) -> PyResult {
        match self.node.variable() {
            Some(t) => Ok(wrap(t, vm)),
            None => Err(vm.new_attribute_error(format!(
                "'{}' object has no attribute 'variable'",
                self.node.name()
            ))),
        }
    }

    #[pymethod]
    fn _sequence_nr(&self) -> u64 {
        self.node.sequence_nr()
    }

    /// PyTorch keeps a dict per node for users' data; fxvm's `grad_fn`
    /// objects are made per access, so a dict would lose what is stored.
    #[pygetset]
    fn metadata(&self, vm: &VirtualMachine) -> PyResult {
        Err(vm.new_not_implemented_error(
            "grad_fn.metadata is not supported by fxvm (grad_fn objects are made per access)",
        ))
    }

    /// `hook(grad_inputs, grad_outputs)` after the node runs.
    #[pymethod]
    fn register_hook(&self, f: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        let id = self.node.add_post_hook(Arc::new(move |inputs, outputs| {
            rustpython_vm::vm::thread::with_vm(&f, |vm| {
                let r = f
                    .call((grads_tuple(inputs, vm), grads_tuple(outputs, vm)), vm)
                    .map_err(raised)?;
                returned_grads(r, vm)
            })
            .unwrap_or(Ok(None))
        }));
        self.handle(id, vm)
    }

    /// `hook(grad_outputs)` before the node runs.
    #[pymethod]
    fn register_prehook(&self, f: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        let id = self.node.add_pre_hook(Arc::new(move |grads| {
            rustpython_vm::vm::thread::with_vm(&f, |vm| {
                let r = f.call((grads_tuple(grads, vm),), vm).map_err(raised)?;
                returned_grads(r, vm)
            })
            .unwrap_or(Ok(None))
        }));
        self.handle(id, vm)
    }
}

impl PyNode {
    fn handle(&self, id: u64, vm: &VirtualMachine) -> PyObjectRef {
        PyHookHandle {
            registered: Registered::Node(self.node.clone(), id),
        }
        .into_ref(&vm.ctx)
        .into()
    }
}

impl Comparable for PyNode {
    fn cmp(
        zelf: &Py<Self>,
        other: &PyObject,
        op: PyComparisonOp,
        _vm: &VirtualMachine,
    ) -> PyResult<PyComparisonValue> {
        op.eq_only(|| {
            Ok(match other.downcast_ref::<PyNode>() {
                Some(o) => Arc::ptr_eq(&zelf.node, &o.node).into(),
                None => PyComparisonValue::NotImplemented,
            })
        })
    }
}

impl Hashable for PyNode {
    fn hash(
        zelf: &Py<Self>,
        _vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::common::hash::PyHash> {
        Ok(Arc::as_ptr(&zelf.node) as usize as rustpython_vm::common::hash::PyHash)
    }
}

impl Representable for PyNode {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!(
            "<{} object at {:#x}>",
            zelf.node.name(),
            Arc::as_ptr(&zelf.node) as usize
        ))
    }
}

/// Tensors of a Python sequence (or one tensor).
fn tensors(o: &PyObjectRef, what: &str, vm: &VirtualMachine) -> PyResult<Vec<Tensor>> {
    if let Some(t) = o.downcast_ref::<PyTensor>() {
        return Ok(vec![t.tensor()]);
    }
    super::bind::seq(o)
        .ok_or_else(|| {
            vm.new_type_error(format!("{what} must be a Tensor or a sequence of Tensors"))
        })?
        .iter()
        .map(|t| {
            t.downcast_ref::<PyTensor>()
                .map(|t| t.tensor())
                .ok_or_else(|| {
                    vm.new_type_error(format!("{what} must be a Tensor or a sequence of Tensors"))
                })
        })
        .collect()
}

/// Gradients for the roots: `None`, a tensor, or a sequence of either.
fn grads(o: &PyObjectRef, n: usize, vm: &VirtualMachine) -> PyResult<Vec<Option<Tensor>>> {
    if vm.is_none(o) {
        return Ok(vec![None; n]);
    }
    if let Some(t) = o.downcast_ref::<PyTensor>() {
        return Ok(vec![Some(t.tensor())]);
    }
    super::bind::seq(o)
        .ok_or_else(|| vm.new_type_error("grad_tensors must be a Tensor, None or a sequence"))?
        .iter()
        .map(|g| {
            if vm.is_none(g) {
                return Ok(None);
            }
            g.downcast_ref::<PyTensor>()
                .map(|t| Some(t.tensor()))
                .ok_or_else(|| vm.new_type_error("gradients must be Tensors or None"))
        })
        .collect()
}

#[rustpython_vm::pymodule(name = "torch._C._autograd")]
mod _autograd {
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

    use fxvm_ops::autograd::engine::{self, Options};

    use super::{PyHookHandle, PyNode, grads, tensors};
    use crate::native::convert::IntoPy;
    use crate::native::tensor::wrap;
    use crate::tensor::autograd as ag;

    #[pyattr(name = "Node")]
    fn node_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyNode::make_static_type()
    }

    #[pyattr(name = "RemovableHandle")]
    fn handle_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        PyHookHandle::make_static_type()
    }

    #[pyfunction]
    fn is_grad_enabled() -> bool {
        ag::is_grad_enabled()
    }

    /// Sets grad mode; returns the previous one.
    #[pyfunction]
    fn _set_grad_enabled(on: bool) -> bool {
        ag::set_grad_enabled(on)
    }

    #[pyfunction]
    fn is_inference_mode_enabled() -> bool {
        ag::is_inference_mode()
    }

    #[pyfunction]
    fn _set_inference_mode(on: bool) -> bool {
        ag::set_inference_mode(on)
    }

    #[pyfunction]
    fn is_anomaly_enabled() -> bool {
        ag::is_anomaly_enabled()
    }

    #[pyfunction]
    fn is_anomaly_check_nan_enabled() -> bool {
        ag::is_anomaly_check_nan_enabled()
    }

    #[pyfunction]
    fn _set_anomaly_enabled(enabled: bool, check_nan: bool) {
        ag::set_anomaly_enabled(enabled, check_nan)
    }

    /// Links a custom Function's outputs to its backward (see `function_apply`).
    #[pyfunction]
    fn _function_apply(
        cls: PyObjectRef,
        ctx: PyObjectRef,
        args: Vec<PyObjectRef>,
        output: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        super::function_apply(cls, ctx, args, output, vm)
    }

    /// `torch.autograd.backward`.
    #[pyfunction]
    fn _backward(
        roots: PyObjectRef,
        grad_tensors: PyObjectRef,
        retain_graph: bool,
        create_graph: bool,
        inputs: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let roots = tensors(&roots, "tensors", vm)?;
        let grads = grads(&grad_tensors, roots.len(), vm)?;
        let inputs = if vm.is_none(&inputs) {
            None
        } else {
            Some(tensors(&inputs, "inputs", vm)?)
        };
        let opts = Options {
            retain_graph,
            create_graph,
        };
        engine::backward(&roots, grads, inputs.as_deref(), opts).py(vm)
    }

    /// `torch.autograd.grad`: a tuple, `None` for unused inputs.
    #[pyfunction]
    fn _grad(
        outputs: PyObjectRef,
        inputs: PyObjectRef,
        grad_outputs: PyObjectRef,
        retain_graph: bool,
        create_graph: bool,
        allow_unused: bool,
        vm: &VirtualMachine,
    ) -> PyResult {
        let outputs = tensors(&outputs, "outputs", vm)?;
        let inputs = tensors(&inputs, "inputs", vm)?;
        let grads = grads(&grad_outputs, outputs.len(), vm)?;
        let opts = Options {
            retain_graph,
            create_graph,
        };
        let got = engine::grad(&outputs, grads, &inputs, opts, allow_unused).py(vm)?;
        Ok(vm
            .ctx
            .new_tuple(
                got.into_iter()
                    .map(|g| g.map_or(vm.ctx.none(), |g| wrap(g, vm)))
                    .collect(),
            )
            .into())
    }
}

/// A custom `autograd.Function`'s node: its `backward(ctx, *grads)`.
struct FunctionBackward {
    cls: PyObjectRef,
    ctx: PyObjectRef,
    /// For each forward argument, whether it was a tensor (an edge).
    tensor_args: Vec<bool>,
    materialize: bool,
}

impl crate::tensor::autograd::Backward for FunctionBackward {
    fn apply(
        &mut self,
        grads: Vec<Option<Tensor>>,
        _ctx: &crate::tensor::autograd::Ctx<'_>,
    ) -> Result<Vec<Option<Tensor>>, TensorError> {
        let (cls, ctx, tensor_args) = (&self.cls, &self.ctx, &self.tensor_args);
        rustpython_vm::vm::thread::with_vm(cls, |vm| {
            let mut args = vec![ctx.clone()];
            args.extend(
                grads
                    .iter()
                    .map(|g| g.clone().map_or(vm.ctx.none(), |g| wrap(g, vm))),
            );
            let backward = cls.get_attr("backward", vm).map_err(raised)?;
            let r = backward.call(args, vm).map_err(raised)?;
            let items = match r.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
                Some(t) => t.as_slice().to_vec(),
                None => vec![r],
            };
            if items.len() < tensor_args.iter().filter(|&&t| t).count()
                && items.len() != tensor_args.len()
            {
                return Err(raised(vm.new_runtime_error(format!(
                    "function {}Backward returned an incorrect number of gradients (expected {}, got {})",
                    cls.get_attr("__name__", vm)
                        .ok()
                        .and_then(|n| n.str(vm).ok())
                        .map(|s| s.to_string())
                        .unwrap_or_default(),
                    tensor_args.len(),
                    items.len()
                ))));
            }
            let mut out = Vec::new();
            for (item, &is_tensor) in items.into_iter().zip(tensor_args) {
                if is_tensor {
                    out.push(returned_grad(item, vm)?);
                }
            }
            Ok(out)
        })
        .unwrap_or(Ok(vec![]))
    }

    fn materializes(&self) -> bool {
        self.materialize
    }
}

/// Links a custom Function's outputs to a node running its `backward`,
/// when an argument requires grad; returns the outputs (an output that is
/// an argument itself becomes a new tensor, as in PyTorch).
pub(crate) fn function_apply(
    cls: PyObjectRef,
    ctx: PyObjectRef,
    args: Vec<PyObjectRef>,
    output: PyObjectRef,
    vm: &VirtualMachine,
) -> PyResult {
    use crate::tensor::autograd::{Edge, TensorInfo};
    let inputs: Vec<Option<Tensor>> = args
        .iter()
        .map(|a| a.downcast_ref::<PyTensor>().map(|t| t.tensor()))
        .collect();
    let wants = crate::tensor::autograd::records_history()
        && inputs.iter().flatten().any(Tensor::requires_grad);
    if !wants {
        return Ok(output);
    }
    let tuple = output
        .downcast_ref::<rustpython_vm::builtins::PyTuple>()
        .map(|t| t.as_slice().to_vec());
    let is_tuple = tuple.is_some();
    let items = tuple.unwrap_or_else(|| vec![output.clone()]);
    let non_diff: Vec<PyObjectRef> = ctx
        .get_attr("non_differentiable", vm)
        .ok()
        .and_then(|n| super::bind::seq(&n))
        .unwrap_or_default();
    let materialize = ctx
        .get_attr("materialize_grads", vm)
        .map(|m| m.try_to_bool(vm).unwrap_or(true))
        .unwrap_or(true);
    let outs: Vec<Option<Tensor>> = items
        .iter()
        .map(|o| o.downcast_ref::<PyTensor>().map(|t| t.tensor()))
        .collect();
    let next: Vec<Option<Edge>> = inputs
        .iter()
        .flatten()
        .map(fxvm_ops::autograd::edge)
        .collect();
    let infos = inputs.iter().flatten().map(TensorInfo::of).collect();
    let name = format!("{}Backward", cls.get_attr("__name__", vm)?.str(vm)?);
    let node = Node::new(
        name,
        next,
        infos,
        outs.iter()
            .map(|o| {
                o.as_ref().map_or(
                    TensorInfo {
                        shape: vec![],
                        dtype: crate::tensor::DType::F32,
                    },
                    TensorInfo::of,
                )
            })
            .collect(),
        Box::new(FunctionBackward {
            cls,
            ctx,
            tensor_args: inputs.iter().map(Option::is_some).collect(),
            materialize,
        }),
    );
    let mut results = Vec::with_capacity(items.len());
    for (n, (obj, t)) in items.into_iter().zip(outs).enumerate() {
        let Some(t) = t else {
            results.push(obj);
            continue;
        };
        if non_diff.iter().any(|x| x.is(&obj)) || !t.dtype().is_float() {
            results.push(obj);
            continue;
        }
        let is_input = inputs.iter().flatten().any(|i| i.same(&t));
        let (obj, t) = if is_input {
            let v = t.detach();
            (wrap(v.clone(), vm), v)
        } else {
            (obj, t)
        };
        t.set_history(node.clone(), n);
        results.push(obj);
    }
    Ok(if is_tuple {
        vm.ctx.new_tuple(results).into()
    } else {
        results.pop().unwrap_or_else(|| vm.ctx.none())
    })
}
