//! Anomaly detection's report, as PyTorch gives it: with detection on, each
//! backward node remembers the Python stack of the forward call that made
//! it; when a node fails, a UserWarning names the node and shows that
//! stack, then the error is raised.

use fxvm_ops::Value;
use rustpython_vm::VirtualMachine;

use crate::tensor::Tensor;

/// Records the user's stack on the nodes of `result`'s tensors (called
/// after each op while anomaly detection is on).
pub(crate) fn stamp_forward_trace(result: &Value, vm: &VirtualMachine) {
    let mut nodes = Vec::new();
    collect(result, &mut |t: &Tensor| nodes.extend(t.grad_fn()));
    if nodes.iter().all(|n| n.forward_trace().is_some()) {
        return;
    }
    let Some(trace) = user_stack(vm) else {
        return;
    };
    for node in nodes {
        node.set_forward_trace(trace.clone());
    }
}

fn collect(v: &Value, f: &mut impl FnMut(&Tensor)) {
    match v {
        Value::Tensor(t) => f(t),
        Value::Tensors(ts) => ts.iter().for_each(f),
        Value::Tuple(items) | Value::ReturnType(_, items) => {
            items.iter().for_each(|i| collect(i, f));
        }
        _ => {}
    }
}

/// `traceback.format_stack()` without fxvm's own frozen modules.
fn user_stack(vm: &VirtualMachine) -> Option<String> {
    let frames = vm
        .import("traceback", 0)
        .and_then(|m| m.get_attr("format_stack", vm))
        .and_then(|f| f.call((), vm))
        .ok()?;
    let frames: Vec<String> = frames.try_into_value(vm).ok()?;
    let user: Vec<String> = frames
        .into_iter()
        .filter(|f| !(f.contains("File \"torch") || f.contains("File \"<frozen")))
        .collect();
    Some(user.concat())
}

/// PyTorch's warning for a failed node under anomaly detection.
pub(crate) fn warn_anomaly(node: &str, trace: Option<&str>, vm: &VirtualMachine) {
    let message = match trace {
        Some(trace) => format!(
            "Error detected in {node}. Traceback of forward call that caused the error:\n{trace}"
        ),
        None => format!(
            "Error detected in {node}. No forward pass information available. Enable detect anomaly during forward pass for more information."
        ),
    };
    // A warning filter turning it into an error leaves the node's own
    // error to be raised.
    let _ = vm
        .import("warnings", 0)
        .and_then(|m| m.get_attr("warn", vm))
        .and_then(|warn| warn.call((message,), vm));
}
