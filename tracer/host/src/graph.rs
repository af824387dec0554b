//! A traced graph as plain Rust data: each node's name, opcode, target,
//! arguments, inputs, users, value shape and source line, read once from
//! the torch.fx Graph so a host walks it without touching Python.

use std::fmt;

use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

/// One node of a traced graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    pub name: String,
    /// `placeholder`, `get_attr`, `call_function`, `call_method`,
    /// `call_module` or `output`.
    pub op: String,
    /// What it calls, as torch.fx prints it (`torch.relu`, `layer1.0.conv1`,
    /// `view`, `operator.add`).
    pub target: String,
    /// Positional arguments as torch.fx prints them (`%x`, `1`, `[%a, %b]`).
    pub args: Vec<String>,
    pub kwargs: Vec<(String, String)>,
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
    pub fn nodes_of<'a>(&'a self, op: &'a str) -> impl Iterator<Item = &'a Node> + 'a {
        self.nodes.iter().filter(move |n| n.op == op)
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

/// Reads `gm` (a GraphModule) into a [`Graph`].
pub(crate) fn read(gm: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Graph> {
    let fx = crate::host::module(vm, "torch.fx._native")?.get_attr("fx", vm)?;
    let format_arg = fx.get_attr("_format_arg", vm)?;
    let value = fx.get_attr("node_value", vm)?;
    let summary = fx.get_attr("value_summary", vm)?;
    let graph = gm.get_attr("graph", vm)?;
    let nodes = list(graph.get_attr("nodes", vm)?, vm)?;
    let mut out = Vec::with_capacity(nodes.len());
    for node in &nodes {
        let op = text(&node.get_attr("op", vm)?, vm)?;
        let target = node.get_attr("target", vm)?;
        let target = if op == "call_function" {
            text(
                &vm.call_method(node, "_pretty_print_target", (target,))?,
                vm,
            )?
        } else {
            text(&target, vm)?
        };
        let args: Vec<PyObjectRef> = node.get_attr("args", vm)?.try_to_value(vm)?;
        let args = args
            .iter()
            .map(|a| text(&format_arg.call((a.clone(),), vm)?, vm))
            .collect::<PyResult<_>>()?;
        let kwargs = node.get_attr("kwargs", vm)?;
        let keys = list(vm.call_method(&kwargs, "keys", ())?, vm)?;
        let mut kw = Vec::with_capacity(keys.len());
        for k in keys {
            let v = kwargs.get_item(&*k, vm)?;
            kw.push((text(&k, vm)?, text(&format_arg.call((v,), vm)?, vm)?));
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
            target,
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
