//! A traced graph as plain Rust data: each node's name, opcode, typed
//! target and arguments, inputs, users, value shape and source line, read
//! once from the torch.fx Graph so a host walks it without touching Python.

use std::fmt;
use std::str::FromStr;

use fxvm_ops::{OpId, Place, registry};
use rustpython_vm::builtins::{PyDict, PyFloat, PyInt, PyList, PyStr, PyTuple};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// What a node does (torch.fx's `node.op`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opcode {
    Placeholder,
    GetAttr,
    CallFunction,
    CallMethod,
    CallModule,
    Output,
}

impl Opcode {
    /// The opcode as torch.fx spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Opcode::Placeholder => "placeholder",
            Opcode::GetAttr => "get_attr",
            Opcode::CallFunction => "call_function",
            Opcode::CallMethod => "call_method",
            Opcode::CallModule => "call_module",
            Opcode::Output => "output",
        }
    }
}

impl FromStr for Opcode {
    type Err = String;

    fn from_str(s: &str) -> Result<Opcode, String> {
        Ok(match s {
            "placeholder" => Opcode::Placeholder,
            "get_attr" => Opcode::GetAttr,
            "call_function" => Opcode::CallFunction,
            "call_method" => Opcode::CallMethod,
            "call_module" => Opcode::CallModule,
            "output" => Opcode::Output,
            other => return Err(format!("unknown opcode {other:?}")),
        })
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What a node calls or names.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    /// An op of fxvm's registry, called as a function (`torch.relu`,
    /// `F.linear`) or as a Tensor method (`x.view(…)`).
    Op(OpId),
    /// Any other function, by qualified name (`operator.add`, a wrapped
    /// user function).
    Callable(String),
    /// A Tensor method outside the registry, by name.
    Method(String),
    /// A submodule called (`call_module`), by qualified path.
    Module(String),
    /// A parameter, buffer or constant read (`get_attr`), by qualified path.
    Attr(String),
    /// An input of the graph (`placeholder`), by name.
    Input(String),
    Output,
}

/// An argument of a node.
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// Another node's value, by the node's name.
    Node(String),
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Tuple(Vec<Arg>),
    List(Vec<Arg>),
    Dict(Vec<(String, Arg)>),
    /// Anything else (dtypes, slices, devices …) as torch.fx prints it.
    Other(String),
}

/// One node of a traced graph.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub name: String,
    pub op: Opcode,
    pub target: Target,
    /// The target as torch.fx prints it (`torch.relu`, `layer1.0.conv1`,
    /// `view`, `operator.add`).
    pub target_name: String,
    pub args: Vec<Arg>,
    pub kwargs: Vec<(String, Arg)>,
    /// Nodes this one reads, in order.
    pub inputs: Vec<String>,
    /// Nodes that read this one.
    pub users: Vec<String>,
    /// The value's dtype and sizes (`f32[2, s0, 16]`) when traced with
    /// example shapes.
    pub shape: Option<String>,
    /// The user's `file:line` that made the node.
    pub source: Option<String>,
}

/// A traced graph: its nodes in order, the text torch.fx prints for it,
/// and the generated `forward`.
#[derive(Debug, Clone)]
pub struct Graph {
    pub nodes: Vec<Node>,
    pub text: String,
    pub code: String,
    /// Guards on symbolic sizes (`s0 <= 64`) a shape trace relies on.
    pub guards: Vec<String>,
}

impl Graph {
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The nodes of one opcode.
    pub fn nodes_of(&self, op: Opcode) -> impl Iterator<Item = &Node> + '_ {
        self.nodes.iter().filter(move |n| n.op == op)
    }

    /// The nodes that run registry op `id`.
    pub fn calls_of(&self, id: OpId) -> impl Iterator<Item = &Node> + '_ {
        self.nodes
            .iter()
            .filter(move |n| n.target == Target::Op(id))
    }
}

impl fmt::Display for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn text(o: &PyObjectRef, vm: &VirtualMachine) -> PyResult<String> {
    Ok(o.str(vm)?.to_string_lossy().into_owned())
}

/// `list(o)`.
fn list(o: PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<PyObjectRef>> {
    vm.ctx
        .types
        .list_type
        .as_object()
        .call((o,), vm)?
        .try_to_value(vm)
}

/// The names of the nodes in `o` (a list, or the keys of a dict).
fn names(o: PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<String>> {
    list(o, vm)?
        .iter()
        .map(|n| text(&n.get_attr("name", vm)?, vm))
        .collect()
}

/// A node's target, typed by its opcode: registry ops by their rows, other
/// functions by the qualified name torch.fx prints (`printed`).
fn target(
    op: Opcode,
    target: &PyObjectRef,
    printed: &str,
    vm: &VirtualMachine,
) -> PyResult<Target> {
    let name = || text(target, vm);
    Ok(match op {
        Opcode::CallFunction => {
            match fxvm_vm::binding::op_of(target, vm).and_then(|o| registry().id(o)) {
                Some(id) => Target::Op(id),
                None => Target::Callable(printed.to_owned()),
            }
        }
        Opcode::CallMethod => {
            let method = name()?;
            let row = registry()
                .named(&method)
                .find(|o| o.places.contains(&Place::Method))
                .and_then(|o| registry().id(o));
            row.map_or(Target::Method(method), Target::Op)
        }
        Opcode::CallModule => Target::Module(name()?),
        Opcode::GetAttr => Target::Attr(name()?),
        Opcode::Placeholder => Target::Input(name()?),
        Opcode::Output => Target::Output,
    })
}

/// Reads node arguments: nodes by name, Python scalars and containers as
/// themselves, anything else as `format_arg` prints it.
struct ArgReader<'a> {
    node_class: PyObjectRef,
    format_arg: PyObjectRef,
    vm: &'a VirtualMachine,
}

impl ArgReader<'_> {
    fn read(&self, a: &PyObjectRef) -> PyResult<Arg> {
        let vm = self.vm;
        let items = |xs: &[PyObjectRef]| {
            xs.iter()
                .map(|x| self.read(x))
                .collect::<PyResult<Vec<_>>>()
        };
        if vm.is_none(a) {
            return Ok(Arg::None);
        }
        if a.is_instance(&self.node_class, vm)? {
            return Ok(Arg::Node(text(&a.get_attr("name", vm)?, vm)?));
        }
        let cls = a.class();
        if cls.is(vm.ctx.types.bool_type) {
            return Ok(Arg::Bool(a.clone().try_to_bool(vm)?));
        }
        if cls.is(vm.ctx.types.int_type)
            && let Some(i) = a
                .downcast_ref::<PyInt>()
                .and_then(|i| i64::try_from(i.as_bigint()).ok())
        {
            return Ok(Arg::Int(i));
        }
        if let Some(f) = a
            .downcast_ref::<PyFloat>()
            .filter(|_| cls.is(vm.ctx.types.float_type))
        {
            return Ok(Arg::Float(f.to_f64()));
        }
        if let Some(s) = a
            .downcast_ref::<PyStr>()
            .filter(|_| cls.is(vm.ctx.types.str_type))
        {
            return Ok(Arg::Str(s.to_string_lossy().into_owned()));
        }
        if let Some(t) = a.downcast_ref::<PyTuple>() {
            return Ok(Arg::Tuple(items(t.as_slice())?));
        }
        if let Some(l) = a.downcast_ref::<PyList>() {
            return Ok(Arg::List(items(&l.borrow_vec())?));
        }
        if let Some(d) = a.downcast_ref::<PyDict>() {
            return d
                .items_vec()
                .iter()
                .map(|(k, v)| Ok((text(k, vm)?, self.read(v)?)))
                .collect::<PyResult<_>>()
                .map(Arg::Dict);
        }
        Ok(Arg::Other(text(
            &self.format_arg.call((a.clone(),), vm)?,
            vm,
        )?))
    }
}

/// Reads `gm` (a GraphModule) into a [`Graph`].
pub(crate) fn read(gm: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Graph> {
    let fx = crate::host::module(vm, "torch.fx._native")?.get_attr("fx", vm)?;
    let args_of = ArgReader {
        node_class: fx.get_attr("Node", vm)?,
        format_arg: fx.get_attr("_format_arg", vm)?,
        vm,
    };
    let value = fx.get_attr("node_value", vm)?;
    let summary = fx.get_attr("value_summary", vm)?;
    let graph = gm.get_attr("graph", vm)?;
    let nodes = list(graph.get_attr("nodes", vm)?, vm)?;
    let mut out = Vec::with_capacity(nodes.len());
    for node in &nodes {
        let op: Opcode = text(&node.get_attr("op", vm)?, vm)?
            .parse()
            .map_err(|e: String| vm.new_value_error(e))?;
        let py_target = node.get_attr("target", vm)?;
        let target_name = if op == Opcode::CallFunction {
            text(
                &vm.call_method(node, "_pretty_print_target", (py_target.clone(),))?,
                vm,
            )?
        } else {
            text(&py_target, vm)?
        };
        let args: Vec<PyObjectRef> = node.get_attr("args", vm)?.try_to_value(vm)?;
        let args = args
            .iter()
            .map(|a| args_of.read(a))
            .collect::<PyResult<_>>()?;
        let kwargs = node.get_attr("kwargs", vm)?;
        let keys = list(vm.call_method(&kwargs, "keys", ())?, vm)?;
        let mut kw = Vec::with_capacity(keys.len());
        for k in keys {
            let v = kwargs.get_item(&*k, vm)?;
            kw.push((text(&k, vm)?, args_of.read(&v)?));
        }
        let summarised = summary.call((value.call((node.clone(),), vm)?,), vm)?;
        let shape = (!vm.is_none(&summarised))
            .then(|| text(&summarised, vm))
            .transpose()?;
        let meta = node.get_attr("meta", vm)?;
        let source = vm.call_method(&meta, "get", ("source_loc",))?;
        let source = (!vm.is_none(&source))
            .then(|| text(&source, vm))
            .transpose()?;
        out.push(Node {
            name: text(&node.get_attr("name", vm)?, vm)?,
            op,
            target: target(op, &py_target, &target_name, vm)?,
            target_name,
            args,
            kwargs: kw,
            inputs: names(node.get_attr("all_input_nodes", vm)?, vm)?,
            users: names(node.get_attr("users", vm)?, vm)?,
            shape,
            source,
        });
    }
    let guards = match gm.get_attr("shape_env", vm) {
        Ok(env) if !vm.is_none(&env) => text(&vm.call_method(&env, "format_guards", ())?, vm)?
            .lines()
            .map(|l| l.trim_start_matches([' ', '-']).to_owned())
            .filter(|l| !l.is_empty())
            .collect(),
        _ => vec![],
    };
    Ok(Graph {
        nodes: out,
        text: text(&graph, vm)?,
        code: text(&gm.get_attr("code", vm)?, vm)?,
        guards,
    })
}
