//! `torch._C._fx`: the native torch.fx IR — nodes, graphs, naming, text and
//! code generation — and the tracer's hooks. The frozen `torch.fx` package
//! (`tracer/py/torch/fx/`) builds on it.
//!
//! Where things live: `node.rs`/`graph.rs` the IR data; `format.rs`,
//! `codegen.rs`, `tabular.rs` its text; `hooks.rs` the overridable tracer
//! hooks (`create_proxy`, `create_arg`, `call_module` …) with their bodies
//! in `record.rs`, `create_arg.rs`, `module_call.rs`, reached through
//! `tracer_state::TracerRef`; `dispatch.rs` what a `Proxy` operation
//! records; `passes.rs` graph passes; `propagate.rs` shape propagation.
//!
//! Extending: a graph pass is a function over `PyGraph`'s nodes bound here
//! as a `#[pyfunction]` (see `eliminate_dead_code`); a tracer hook is a
//! `Hook` variant with its body, set on its class in the frozen Python.

/// A callable object that binds like a function when set on a class: read
/// through an instance, it is a bound method of that instance.
macro_rules! bound_like_a_function {
    ($payload:ty) => {
        impl rustpython_vm::types::GetDescriptor for $payload {
            fn descr_get(
                zelf: rustpython_vm::PyObjectRef,
                obj: Option<rustpython_vm::PyObjectRef>,
                _cls: Option<rustpython_vm::PyObjectRef>,
                vm: &rustpython_vm::VirtualMachine,
            ) -> rustpython_vm::PyResult {
                use rustpython_vm::PyPayload;
                Ok(match obj {
                    Some(obj) if !vm.is_none(&obj) => {
                        rustpython_vm::builtins::PyBoundMethod::new(obj, zelf)
                            .into_ref(&vm.ctx)
                            .into()
                    }
                    _ => zelf,
                })
            }
        }
    };
}

pub mod args;
mod attribute;
mod codegen;
mod create_arg;
mod dispatch;
mod format;
mod graph;
mod hooks;
mod module_call;
mod module_patch;
mod namespace;
pub mod node;
mod passes;
mod propagate;
mod proxy_ops;
mod record;
mod tabular;
mod tracer_state;
mod walk;

/// The module definition to register with an interpreter builder.
pub fn module_def(ctx: &rustpython_vm::Context) -> &'static rustpython_vm::builtins::PyModuleDef {
    module::module_def(ctx)
}

use rustpython_vm::VirtualMachine;
use rustpython_vm::builtins::PyBaseExceptionRef;

/// `getattr(obj, name, None)` for a name known only at run time.
fn attr(
    obj: &rustpython_vm::PyObject,
    name: &str,
    vm: &VirtualMachine,
) -> rustpython_vm::PyResult<Option<rustpython_vm::PyObjectRef>> {
    let key = vm.ctx.new_str(name);
    vm.get_attribute_opt(obj.to_owned(), &*key)
}

fn assertion(vm: &VirtualMachine, msg: impl Into<String>) -> PyBaseExceptionRef {
    vm.new_exception_msg(
        vm.ctx.exceptions.assertion_error.to_owned(),
        msg.into().into(),
    )
}

#[rustpython_vm::pymodule(name = "torch._C._fx")]
mod module {
    use rustpython_vm::builtins::{PyStr, PyTypeRef};
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::convert::ToPyObject;
    use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

    use super::args::{self, Containers, Leaf};
    use super::graph::PyGraph;
    use super::node::PyNode;
    use fxvm_vm::text::Utf8;

    /// `Node`, with its text methods (`format_node`, `_pretty_print_target`)
    /// installed from the text layer: the node data knows nothing of printing.
    #[pyattr(name = "Node")]
    fn node_type(vm: &VirtualMachine) -> PyTypeRef {
        let cls = PyNode::make_static_type();
        let class = <PyNode as rustpython_vm::PyPayload>::class(&vm.ctx);
        let format_node = vm.new_method("format_node", class, format_node);
        class.set_attr(vm.ctx.intern_str("format_node"), format_node.into());
        let pretty = vm.new_function("_pretty_print_target", pretty_print_target);
        let pretty = vm
            .ctx
            .types
            .staticmethod_type
            .to_owned()
            .to_pyobject(vm)
            .call((pretty,), vm)
            .expect("staticmethod wraps a function");
        class.set_attr(vm.ctx.intern_str("_pretty_print_target"), pretty);
        cls
    }

    #[derive(rustpython_vm::FromArgs)]
    struct FormatNodeArgs {
        #[pyarg(any, optional)]
        placeholder_names: rustpython_vm::function::OptionalArg<PyObjectRef>,
        #[pyarg(any, optional)]
        maybe_return_typename: rustpython_vm::function::OptionalArg<PyObjectRef>,
        #[pyarg(named, optional)]
        include_tensor_metadata: rustpython_vm::function::OptionalArg<bool>,
    }

    /// `node.format_node(placeholder_names=None, maybe_return_typename=None)`.
    fn format_node(
        zelf: rustpython_vm::PyRef<PyNode>,
        a: FormatNodeArgs,
        vm: &VirtualMachine,
    ) -> PyResult<Option<String>> {
        let names = a.placeholder_names.into_option().filter(|x| !vm.is_none(x));
        let ret = a
            .maybe_return_typename
            .into_option()
            .filter(|x| !vm.is_none(x));
        super::format::format_node(
            &zelf,
            names.as_ref(),
            ret.as_ref(),
            a.include_tensor_metadata.unwrap_or(false),
            vm,
        )
    }

    fn pretty_print_target(target: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        super::format::pretty_target(&target, vm)
    }

    /// See `super::propagate::propagate`.
    #[pyfunction]
    fn propagate_fakes(
        nodes: PyObjectRef,
        tracer: PyObjectRef,
        fake_cls: PyObjectRef,
        operators: PyObjectRef,
        modules: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        super::propagate::propagate(nodes, tracer, fake_cls, operators, modules, vm)
    }

    /// `str(graph)`.
    #[pyfunction]
    fn graph_str(graph: rustpython_vm::PyRef<PyGraph>, vm: &VirtualMachine) -> PyResult<String> {
        super::format::graph_str(&graph, vm)
    }

    /// `(src, globals, lineno_map, prologue_start)` of the generated `forward`;
    /// `pytree` is `(original argument names, has an output spec)` for
    /// graphs traced with nested placeholders.
    #[pyfunction]
    fn python_code(
        graph: rustpython_vm::PyRef<PyGraph>,
        root_module: rustpython_vm::builtins::PyStrRef,
        verbose: bool,
        pytree: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<rustpython_vm::builtins::PyTupleRef> {
        let pytree = match pytree.filter(|p| !vm.is_none(p)) {
            Some(p) => {
                let parts: Vec<PyObjectRef> = p.try_into_value(vm)?;
                let [args, out]: [PyObjectRef; 2] = parts
                    .try_into()
                    .map_err(|_| vm.new_type_error("pytree info is (orig_args, has_out_spec)"))?;
                let args: Vec<rustpython_vm::builtins::PyStrRef> = args.try_into_value(vm)?;
                Some(super::codegen::PyTree {
                    orig_args: args
                        .iter()
                        .map(|a| Ok(a.text(vm)?.to_owned()))
                        .collect::<PyResult<_>>()?,
                    out_spec: out.try_to_bool(vm)?,
                })
            }
            None => None,
        };
        super::codegen::python_code(&graph, root_module.text(vm)?, verbose, pytree.as_ref(), vm)
    }

    #[pyattr(name = "GraphBase")]
    fn graph_type(_vm: &VirtualMachine) -> PyTypeRef {
        PyGraph::make_static_type()
    }

    #[pyattr(name = "_node_list")]
    fn node_list_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::graph::NodeList::make_static_type()
    }

    #[pyattr(name = "_node_iterator")]
    fn node_iter_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::graph::NodeIter::make_static_type()
    }

    #[pyattr(name = "TracedModuleCall")]
    fn traced_module_call_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::module_patch::types().0
    }

    #[pyattr(name = "ProxyOperator")]
    fn proxy_operator_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::proxy_ops::proxy_operator_type()
    }

    #[pyattr(name = "TracerHook")]
    fn tracer_hook_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::hooks::PyTracerHook::make_static_type()
    }

    #[pyattr(name = "TracedModuleGetattr")]
    fn traced_module_getattr_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::module_patch::types().1
    }

    #[pyattr(name = "_InsertPoint")]
    fn insert_point_type(_vm: &VirtualMachine) -> PyTypeRef {
        super::graph::InsertPoint::make_static_type()
    }

    /// `torch.fx.map_arg`: applies `fn` to each node inside `a`.
    #[pyfunction]
    fn map_arg(a: PyObjectRef, f: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        if !f.is_callable() {
            return Err(crate::assertion(
                vm,
                "torch.fx.map_arg(a, fn): fn must be a callable".to_owned(),
            ));
        }
        let mut call = |x: &PyObjectRef| f.call((x.clone(),), vm);
        args::map(&a, &Containers::load(vm)?, &mut Leaf::Nodes(&mut call), vm)
    }

    /// `torch.fx.node.map_aggregate`: applies `fn` to each leaf inside `a`.
    #[pyfunction]
    fn map_aggregate(a: PyObjectRef, f: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let mut call = |x: &PyObjectRef| f.call((x.clone(),), vm);
        args::map(&a, &Containers::load(vm)?, &mut Leaf::All(&mut call), vm)
    }

    /// The table of `Graph.print_tabular`.
    #[pyfunction]
    fn tabulate(
        rows: Vec<Vec<PyObjectRef>>,
        headers: Vec<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<String> {
        let text = |o: &PyObjectRef| -> PyResult<String> {
            if let Some(s) = o.downcast_ref::<PyStr>() {
                return Ok(s.text(vm)?.to_owned());
            }
            Ok(o.str(vm)?.text(vm)?.to_owned())
        };
        let headers = headers.iter().map(text).collect::<PyResult<Vec<_>>>()?;
        let rows = rows
            .iter()
            .map(|r| r.iter().map(text).collect::<PyResult<Vec<_>>>())
            .collect::<PyResult<Vec<_>>>()?;
        Ok(super::tabular::simple_table(&headers, &rows))
    }

    /// The typed signatures of a builtin registry op's overloads (see
    /// `Schema::overload_signatures`); None for anything else, including
    /// functions PyTorch writes in Python (`inspect.signature` has those).
    #[pyfunction]
    fn op_signatures(f: PyObjectRef, vm: &VirtualMachine) -> PyObjectRef {
        if f.get_attr("__text_signature__", vm)
            .is_ok_and(|t| !vm.is_none(&t))
        {
            return vm.ctx.none();
        }
        match fxvm_vm::binding::op_of(&f, vm) {
            Some(op) => vm
                .ctx
                .new_list(
                    op.schema
                        .overload_signatures()
                        .into_iter()
                        .map(|s| vm.ctx.new_str(s).into())
                        .collect(),
                )
                .into(),
            None => vm.ctx.none(),
        }
    }

    /// The return annotation text (`Tensor`, `tuple[Tensor, Tensor]`) of a
    /// registry function PyTorch writes in Python, or None.
    #[pyfunction]
    fn op_returns(f: PyObjectRef, vm: &VirtualMachine) -> Option<&'static str> {
        f.get_attr("__text_signature__", vm)
            .ok()
            .filter(|t| !vm.is_none(t))?;
        fxvm_vm::binding::op_of(&f, vm)?.schema.returns
    }

    /// A node's example value (see `PyNode::value_meta`), or None.
    #[pyfunction]
    fn node_value(node: rustpython_vm::PyRef<PyNode>, vm: &VirtualMachine) -> PyObjectRef {
        node.value_meta(vm).unwrap_or_else(|| vm.ctx.none())
    }

    /// A node value in short (`f32[2, s0]`, `Sym(s0)`), or None.
    #[pyfunction]
    fn value_summary(val: PyObjectRef, vm: &VirtualMachine) -> PyResult<Option<String>> {
        super::format::value_summary(&val, vm)
    }

    /// A picture of a graph as `"svg"` or `"html"`: `nodes` are
    /// `(name, op, target, shape, source, module)` strings in graph order,
    /// `edges` `(from, to)` indices into them.
    #[pyfunction]
    fn render_picture(
        title: String,
        nodes: Vec<Vec<String>>,
        edges: Vec<Vec<usize>>,
        format: String,
        vm: &VirtualMachine,
    ) -> PyResult<String> {
        let edges = edges
            .into_iter()
            .map(|pair| match pair[..] {
                [a, b] => Ok((a, b)),
                _ => Err(vm.new_value_error("a picture edge is (from, to)")),
            })
            .collect::<PyResult<Vec<_>>>()?;
        if let Some(&(a, b)) = edges
            .iter()
            .find(|(a, b)| *a >= nodes.len() || *b >= nodes.len())
        {
            return Err(vm.new_index_error(format!(
                "edge ({a}, {b}) names a node past the {} given",
                nodes.len()
            )));
        }
        let nodes = nodes
            .into_iter()
            .map(|fields| match <[String; 6]>::try_from(fields) {
                Ok([name, op, target, shape, source, module]) => Ok(fxvm_picture::Node {
                    name,
                    op,
                    target,
                    shape,
                    source,
                    module,
                }),
                Err(fields) => Err(vm.new_value_error(format!(
                    "a picture node is (name, op, target, shape, source, module), not {} strings",
                    fields.len()
                ))),
            })
            .collect::<PyResult<Vec<_>>>()?;
        let picture = fxvm_picture::Picture {
            title,
            nodes,
            edges,
        };
        match format.as_str() {
            "svg" => Ok(fxvm_picture::to_svg(&picture)),
            "html" => Ok(fxvm_picture::to_html(&picture)),
            other => Err(vm.new_value_error(format!(
                "unknown picture format {other:?}; choose svg or html"
            ))),
        }
    }

    /// The native tracer hook named `qualname` (`"TracerBase.create_node"`
    /// …), for its class's body (see `hooks.rs`).
    #[pyfunction]
    fn tracer_hook(
        qualname: rustpython_vm::builtins::PyStrRef,
        vm: &VirtualMachine,
    ) -> PyResult<super::hooks::PyTracerHook> {
        super::hooks::PyTracerHook::new(qualname.text(vm)?, vm)
    }

    /// `Proxy.__torch_function__`, natively (see `dispatch.rs`).
    #[pyfunction]
    fn proxy_torch_function(
        cls: PyObjectRef,
        func: PyObjectRef,
        _types: PyObjectRef,
        args: rustpython_vm::function::OptionalArg<PyObjectRef>,
        kwargs: rustpython_vm::function::OptionalArg<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult {
        let none = || vm.ctx.none();
        super::dispatch::torch_function(
            cls,
            func,
            args.unwrap_or_else(none),
            kwargs.unwrap_or_else(none),
            vm,
        )
    }

    /// A node for one of `Proxy`'s own methods (see `dispatch::record`).
    #[pyfunction]
    fn record(
        tracer: PyObjectRef,
        kind: rustpython_vm::builtins::PyStrRef,
        target: PyObjectRef,
        args: PyObjectRef,
        kwargs: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult {
        super::dispatch::record(tracer, kind.text(vm)?, target, args, kwargs, vm)
    }

    /// `Graph.eliminate_dead_code` on this graph (see `passes.rs`); the
    /// predicate, when given, decides which unused nodes must stay.
    #[pyfunction]
    fn eliminate_dead_code(
        graph: rustpython_vm::PyRef<super::graph::PyGraph>,
        is_impure_node: Option<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<bool> {
        let predicate = is_impure_node.filter(|f| !vm.is_none(f));
        let call = |node: &super::node::NodeRef| -> PyResult<bool> {
            let f = predicate.as_ref().expect("only called with a predicate");
            f.call((node.clone(),), vm)?.try_to_bool(vm)
        };
        let is_impure: Option<super::passes::Purity<'_>> = predicate.as_ref().map(|_| &call as _);
        super::passes::eliminate_dead_code(&graph, is_impure, vm)
    }

    /// `{module: name for name, module in root.named_modules()}`.
    #[pyfunction]
    fn module_paths(root: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let out = vm.ctx.new_dict();
        super::walk::module_paths(&root, String::new(), &out, vm)?;
        Ok(out.into())
    }

    /// `{value: qualified name}` for attributes of `root` and its children
    /// (each child once per parent) that are instances of `types`.
    #[pyfunction]
    fn constant_attrs(root: PyObjectRef, types: PyObjectRef, vm: &VirtualMachine) -> PyResult {
        let out = vm.ctx.new_dict();
        super::walk::constant_attrs(&root, String::new(), &types, &out, vm)?;
        Ok(out.into())
    }

    /// `_copy_attr` for each of `targets` (see `walk::copy_attr`).
    #[pyfunction]
    fn copy_attrs(
        from: PyObjectRef,
        to: PyObjectRef,
        targets: Vec<rustpython_vm::builtins::PyStrRef>,
        classes: Vec<PyObjectRef>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let [module, parameter, tensor]: [PyObjectRef; 3] = classes
            .try_into()
            .map_err(|_| vm.new_type_error("copy_attrs expects (Module, Parameter, Tensor)"))?;
        let c = super::walk::Classes {
            module,
            parameter,
            tensor,
        };
        for t in targets {
            super::walk::copy_attr(&from, &to, t.text(vm)?, &c, vm)?;
        }
        Ok(())
    }

    #[derive(rustpython_vm::FromArgs)]
    struct FormatArgArgs {
        #[pyarg(any)]
        arg: PyObjectRef,
        /// Items of a top-level list or tuple shown before `...[total_len=N]`.
        #[pyarg(any, optional)]
        max_list_len: rustpython_vm::function::OptionalArg<usize>,
    }

    #[pyfunction]
    fn _format_arg(a: FormatArgArgs, vm: &VirtualMachine) -> PyResult<String> {
        match a.max_list_len.into_option() {
            Some(max) => super::format::format_arg_limited(&a.arg, max, vm),
            None => super::format::format_arg(&a.arg, vm),
        }
    }

    #[pyfunction]
    fn _get_qualified_name(f: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        super::format::qualified_name(&f, vm)
    }

    #[pyfunction]
    fn _type_repr(o: PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
        super::format::type_repr(&o, vm)
    }
}
