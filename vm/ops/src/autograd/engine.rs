//! The backward pass: from the roots' gradients, each node runs once all
//! nodes that feed it have (later-created nodes first among those ready,
//! as PyTorch orders them); gradients reaching one input are summed;
//! leaves accumulate into `.grad`, or the pass hands back the gradients of
//! chosen inputs (`torch.autograd.grad`).

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use fxvm_tensor::autograd::{Ctx, Edge, GradMode, Node};
use fxvm_tensor::{Result, Tensor, TensorError};

use super::ops;
use super::record::edge;

/// How a pass runs.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep saved tensors for another pass.
    pub retain_graph: bool,
    /// Record the pass itself, for higher derivatives.
    pub create_graph: bool,
}

fn key(node: &Arc<Node>) -> usize {
    Arc::as_ptr(node) as usize
}

/// The edge a root's gradient enters through; PyTorch's error if none.
fn root_edge(t: &Tensor, i: usize) -> Result<Edge> {
    edge(t).ok_or_else(|| {
        TensorError::runtime(
            "backward",
            format!("element {i} of tensors does not require grad and does not have a grad_fn"),
        )
    })
}

/// The gradient of root `i`: given, or ones for a one-element output.
fn root_grad(t: &Tensor, given: Option<Tensor>, i: usize) -> Result<Tensor> {
    match given {
        Some(g) => {
            if g.shape() != t.shape() {
                return Err(TensorError::runtime(
                    "backward",
                    format!(
                        "Mismatch in shape: grad_output[{i}] has a shape of {} and output[{i}] has a shape of {}.",
                        fxvm_tensor::error::torch_size(g.shape()),
                        fxvm_tensor::error::torch_size(t.shape())
                    ),
                ));
            }
            Ok(g)
        }
        None if t.numel() == 1 => ops::full(t.shape(), fxvm_tensor::Scalar::Float(1.0), t.dtype()),
        None => Err(TensorError::runtime(
            "backward",
            "grad can be implicitly created only for scalar outputs",
        )),
    }
}

/// `tensors[i].backward(grads[i])` for all `i` at once; with `inputs`,
/// only those accumulate.
pub fn backward(
    tensors: &[Tensor],
    grads: Vec<Option<Tensor>>,
    inputs: Option<&[Tensor]>,
    opts: Options,
) -> Result<()> {
    let _pass = crate::tape::BackwardPass::enter();
    let roots = roots(tensors, grads)?;
    match inputs {
        None => {
            run(roots, &[], opts, true)?;
        }
        Some(inputs) => {
            let targets = target_edges(inputs);
            let got = run(roots, &targets, opts, true)?;
            // Non-leaf inputs take their gradient as `.grad`.
            for ((t, g), e) in inputs.iter().zip(got).zip(&targets) {
                if let (Some(g), Some(_)) = (g, e)
                    && !t.is_leaf()
                {
                    let g = match t.grad() {
                        Some(old) => ops::add(&old, &g)?,
                        None => g,
                    };
                    t.set_grad(Some(g))?;
                }
            }
        }
    }
    Ok(())
}

/// `torch.autograd.grad`: the gradients of `outputs` with respect to
/// `inputs`, without touching `.grad`.
pub fn grad(
    outputs: &[Tensor],
    grad_outputs: Vec<Option<Tensor>>,
    inputs: &[Tensor],
    opts: Options,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
    for (i, t) in inputs.iter().enumerate() {
        if !t.requires_grad() {
            return Err(TensorError::runtime(
                "grad",
                format!("One of the differentiated Tensors does not require grad (input {i})"),
            ));
        }
    }
    let _pass = crate::tape::BackwardPass::enter();
    let roots = roots(outputs, grad_outputs)?;
    let targets = target_edges(inputs);
    let got = run(roots, &targets, opts, false)?;
    if !allow_unused && let Some(i) = got.iter().position(Option::is_none) {
        return Err(TensorError::runtime(
            "grad",
            format!(
                "The differentiated Tensor at index {i} appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior."
            ),
        ));
    }
    Ok(got)
}

fn roots(tensors: &[Tensor], grads: Vec<Option<Tensor>>) -> Result<Vec<(Edge, Tensor)>> {
    tensors
        .iter()
        .zip(grads.into_iter().chain(std::iter::repeat(None)))
        .enumerate()
        .map(|(i, (t, g))| Ok((root_edge(t, i)?, root_grad(t, g, i)?)))
        .collect()
}

fn target_edges(inputs: &[Tensor]) -> Vec<Option<Edge>> {
    inputs.iter().map(edge).collect()
}

/// One pass. `targets`: the edges whose incoming gradients are returned
/// (empty: every node reachable runs). `accumulate`: leaf accumulators
/// among the targets run (`backward(inputs=)`) rather than being read.
fn run(
    roots: Vec<(Edge, Tensor)>,
    targets: &[Option<Edge>],
    opts: Options,
    accumulate: bool,
) -> Result<Vec<Option<Tensor>>> {
    let _mode = GradMode::set(opts.create_graph);
    // The graph reachable from the roots.
    let mut nodes: HashMap<usize, Arc<Node>> = HashMap::new();
    let mut stack: Vec<Arc<Node>> = roots.iter().map(|(e, _)| e.node.clone()).collect();
    while let Some(n) = stack.pop() {
        if nodes.insert(key(&n), n.clone()).is_some() {
            continue;
        }
        for e in n.next_edges().iter().flatten() {
            if !nodes.contains_key(&key(&e.node)) {
                stack.push(e.node.clone());
            }
        }
    }
    // With targets, only nodes on a path to one run.
    let target_nodes: HashSet<usize> = targets.iter().flatten().map(|e| key(&e.node)).collect();
    let runs: HashSet<usize> = if targets.is_empty() {
        nodes.keys().copied().collect()
    } else {
        let mut leads: HashMap<usize, bool> = HashMap::new();
        fn reaches(
            n: &Arc<Node>,
            target_nodes: &HashSet<usize>,
            memo: &mut HashMap<usize, bool>,
        ) -> bool {
            if let Some(&r) = memo.get(&key(n)) {
                return r;
            }
            memo.insert(key(n), false);
            let r = n.next_edges().iter().flatten().any(|e| {
                target_nodes.contains(&key(&e.node)) || reaches(&e.node, target_nodes, memo)
            });
            memo.insert(key(n), r);
            r
        }
        let mut runs = HashSet::new();
        for n in nodes.values() {
            let is_accumulator = n.variable().is_some();
            let target = target_nodes.contains(&key(n));
            if reaches(n, &target_nodes, &mut leads) || (accumulate && target && is_accumulator) {
                runs.insert(key(n));
            }
        }
        runs
    };
    // How many edges from running nodes each node waits for.
    let mut deps: HashMap<usize, usize> = HashMap::new();
    for k in &runs {
        for e in nodes[k].next_edges().iter().flatten() {
            *deps.entry(key(&e.node)).or_default() += 1;
        }
    }
    let mut buffers: HashMap<usize, Vec<Option<Tensor>>> = HashMap::new();
    let mut captured: Vec<Option<Tensor>> = vec![None; targets.len()];
    for (e, g) in roots {
        put(&mut buffers, &e, g)?;
    }
    // Ready nodes, latest first.
    let mut ready: BinaryHeap<(u64, usize)> = BinaryHeap::new();
    let mut queued: HashSet<usize> = HashSet::new();
    for (k, n) in &nodes {
        if deps.get(k).copied().unwrap_or(0) == 0 && buffers.contains_key(k) {
            ready.push((n.sequence_nr(), *k));
            queued.insert(*k);
        }
    }
    while let Some((_, k)) = ready.pop() {
        let node = nodes[&k].clone();
        let mut grads = buffers
            .remove(&k)
            .unwrap_or_else(|| vec![None; node.outputs().len()]);
        grads.resize(node.outputs().len().max(grads.len()), None);
        node.run_pre_hooks(&mut grads)?;
        for (slot, t) in captured.iter_mut().zip(targets) {
            if let Some(t) = t
                && key(&t.node) == k
                && let Some(Some(g)) = grads.get(t.input_nr)
            {
                *slot = Some(g.clone());
            }
        }
        if !runs.contains(&k) {
            continue;
        }
        let mut out = {
            let mut backward = node.backward();
            if backward.materializes() {
                for (g, info) in grads.iter_mut().zip(node.outputs()) {
                    if g.is_none() {
                        *g = Some(ops::zeros(&info.shape, info.dtype)?);
                    }
                }
            }
            let ctx = Ctx {
                node: &node,
                create_graph: opts.create_graph,
            };
            let out = backward
                .apply(grads.clone(), &ctx)
                .map_err(|e| anomaly(&node, e))?;
            if !opts.retain_graph {
                backward.release();
            }
            out
        };
        validate(&node, &mut out)?;
        if fxvm_tensor::autograd::is_anomaly_enabled() {
            check_anomaly(&node, &out).map_err(|e| anomaly(&node, e))?;
        }
        node.run_post_hooks(&mut out, &grads)?;
        for (e, g) in node.next_edges().iter().zip(out) {
            let Some(e) = e else { continue };
            let ek = key(&e.node);
            if let Some(g) = g {
                put(&mut buffers, e, g)?;
            }
            let left = deps.get_mut(&ek).expect("counted");
            *left -= 1;
            if *left == 0 && queued.insert(ek) {
                ready.push((e.node.sequence_nr(), ek));
            }
        }
    }
    Ok(captured)
}

/// Adds `g` into the buffer of `e`'s input.
fn put(buffers: &mut HashMap<usize, Vec<Option<Tensor>>>, e: &Edge, g: Tensor) -> Result<()> {
    let slots = buffers
        .entry(key(&e.node))
        .or_insert_with(|| vec![None; e.node.outputs().len().max(e.input_nr + 1)]);
    let slot = &mut slots[e.input_nr];
    *slot = Some(match slot.take() {
        None => g,
        Some(old) => ops::add(&old, &g)?,
    });
    Ok(())
}

/// Checks what a node returned against its inputs: a gradient broadcast
/// past its input's shape is summed back, another dtype converted, and a
/// shape that cannot be is PyTorch's error.
pub(crate) fn validate(node: &Node, out: &mut [Option<Tensor>]) -> Result<()> {
    if out.len() != node.next_edges().len() {
        return Err(TensorError::runtime(
            "backward",
            format!(
                "function {} returned an incorrect number of gradients (expected {}, got {})",
                node.name(),
                node.next_edges().len(),
                out.len()
            ),
        ));
    }
    for (i, (g, info)) in out.iter_mut().zip(node.inputs()).enumerate() {
        let Some(t) = g else { continue };
        if t.shape() != info.shape.as_slice() {
            let reducible = t.ndim() >= info.shape.len()
                && info
                    .shape
                    .iter()
                    .zip(&t.shape()[t.ndim() - info.shape.len()..])
                    .all(|(&want, &got)| want == got || want == 1);
            if !reducible {
                return Err(TensorError::runtime(
                    "backward",
                    format!(
                        "Function {} returned an invalid gradient at index {i} - got {:?} but expected shape compatible with {:?}",
                        node.name(),
                        t.shape(),
                        info.shape
                    ),
                ));
            }
            *t = ops::sum_to(t, &info.shape)?;
        }
        if t.dtype() != info.dtype {
            *t = ops::to_dtype(t, info.dtype)?;
        }
    }
    Ok(())
}

/// With anomaly detection on, a node's failure carries the node and the
/// forward call that made it (the binding reports them as PyTorch warns).
fn anomaly(node: &Node, e: TensorError) -> TensorError {
    if !fxvm_tensor::autograd::is_anomaly_enabled() || matches!(e, TensorError::Anomaly { .. }) {
        return e;
    }
    TensorError::Anomaly {
        node: node.name().to_owned(),
        trace: node.forward_trace().map(str::to_owned),
        error: Box::new(e),
    }
}

/// Anomaly detection: a node that returned NaN in a gradient fails the pass
/// with PyTorch's message.
fn check_anomaly(node: &Node, out: &[Option<Tensor>]) -> Result<()> {
    if !fxvm_tensor::autograd::is_anomaly_check_nan_enabled() {
        return Ok(());
    }
    for (k, g) in out.iter().enumerate() {
        let Some(g) = g else { continue };
        if g.dtype().is_float()
            && g.to_dtype(fxvm_tensor::DType::F64)
                .to_vec::<f64>()
                .iter()
                .any(|v| v.is_nan())
        {
            return Err(TensorError::runtime(
                "backward",
                format!(
                    "Function '{}' returned nan values in its {k}th output.",
                    node.name()
                ),
            ));
        }
    }
    Ok(())
}
