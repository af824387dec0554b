//! Graph passes in Rust. They edit through the same operations the Python
//! `Graph` methods use (`PyGraph::node_vec`, `PyGraph::erase`, a node's
//! users and inputs), so a pass behaves the same whichever language calls it.

use rustpython_vm::{Py, PyResult, VirtualMachine};

use super::graph::PyGraph;
use super::node::{NodeRef, PyNode};

/// Which unused nodes must stay (a node's side effects), when a caller decides.
pub(crate) type Purity<'a> = &'a dyn Fn(&NodeRef) -> PyResult<bool>;

/// Erases every node whose value nothing uses and that has no side effect
/// (`is_impure`, else the node's own `is_impure()`), walking from the end so
/// that a chain of dead nodes goes in one pass; whether anything was erased.
pub(crate) fn eliminate_dead_code(
    graph: &Py<PyGraph>,
    is_impure: Option<Purity<'_>>,
    vm: &VirtualMachine,
) -> PyResult<bool> {
    let mut changed = false;
    for node in PyGraph::node_vec(graph, vm).into_iter().rev() {
        if node.users_len() > 0 {
            continue;
        }
        let impure = match is_impure {
            Some(f) => f(&node)?,
            None => PyNode::impure(&node, true, vm)?,
        };
        if !impure {
            PyGraph::erase(graph, node, vm)?;
            changed = true;
        }
    }
    Ok(changed)
}
