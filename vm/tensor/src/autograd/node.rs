//! A node of the backward graph: what one differentiable op (or a leaf's
//! gradient accumulator) does with the gradients of its outputs, and where
//! the gradients of its inputs go.

use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::WeakTensor;
use crate::{DType, Result, Tensor};

/// A hook on one gradient: may return a replacement.
pub type Hook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;
/// A hook before a node runs, on the gradients of its outputs.
pub type PreHook =
    Arc<dyn Fn(&[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>> + Send + Sync>;
/// A hook after a node ran: (gradients of its inputs, of its outputs).
pub type PostHook = Arc<
    dyn Fn(&[Option<Tensor>], &[Option<Tensor>]) -> Result<Option<Vec<Option<Tensor>>>>
        + Send
        + Sync,
>;

/// Where a gradient goes: input `input_nr` of `node`.
#[derive(Clone)]
pub struct Edge {
    pub node: Arc<Node>,
    pub input_nr: usize,
}

/// A tensor's shape and dtype, kept instead of the tensor.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorInfo {
    pub shape: Vec<usize>,
    pub dtype: DType,
}

impl TensorInfo {
    pub fn of(t: &Tensor) -> TensorInfo {
        TensorInfo {
            shape: t.shape().to_vec(),
            dtype: t.dtype(),
        }
    }
}

/// What a running backward pass tells a node.
pub struct Ctx<'a> {
    pub node: &'a Arc<Node>,
    /// Whether the gradients computed are themselves recorded.
    pub create_graph: bool,
}

/// The computation of a node: gradients of the forward outputs in, one
/// gradient per next edge out (`None` where nothing flows).
pub trait Backward: Send + Sync {
    fn apply(&mut self, grads: Vec<Option<Tensor>>, ctx: &Ctx<'_>) -> Result<Vec<Option<Tensor>>>;
    /// Frees what was saved for the pass (after it, unless the graph is retained).
    fn release(&mut self) {}
    /// A leaf accumulator's variable.
    fn variable(&self) -> Option<Tensor> {
        None
    }
    /// Whether missing output gradients arrive as zeros (else as `None`).
    fn materializes(&self) -> bool {
        true
    }
}

#[derive(Default)]
struct Hooks {
    /// `Tensor.register_hook` on output `n`: (n, id, hook).
    tensor: Vec<(usize, u64, Hook)>,
    /// `Tensor.retain_grad` on output `n`.
    retain: Vec<(usize, WeakTensor)>,
    pre: Vec<(u64, PreHook)>,
    post: Vec<(u64, PostHook)>,
}

pub struct Node {
    name: Cow<'static, str>,
    seq: u64,
    next: Vec<Option<Edge>>,
    /// The forward inputs behind `next`, one each: what their gradients must fit.
    inputs: Vec<TensorInfo>,
    /// The forward outputs: zeros for those no gradient reached.
    outputs: Vec<TensorInfo>,
    backward: Mutex<Box<dyn Backward>>,
    hooks: Mutex<Hooks>,
    /// Anomaly mode: where the forward call that made the node was written.
    forward_trace: OnceLock<String>,
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);
static HOOK_IDS: AtomicU64 = AtomicU64::new(0);

/// A fresh id for a hook (handles remove by it).
pub fn hook_id() -> u64 {
    HOOK_IDS.fetch_add(1, Ordering::Relaxed)
}

impl Node {
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        next: Vec<Option<Edge>>,
        inputs: Vec<TensorInfo>,
        outputs: Vec<TensorInfo>,
        backward: Box<dyn Backward>,
    ) -> Arc<Node> {
        debug_assert_eq!(next.len(), inputs.len());
        Arc::new(Node {
            name: name.into(),
            seq: SEQUENCE.fetch_add(1, Ordering::Relaxed),
            next,
            inputs,
            outputs,
            backward: Mutex::new(backward),
            hooks: Mutex::default(),
            forward_trace: OnceLock::new(),
        })
    }

    /// Records where the forward call that made this node was written (the
    /// embedding program's stack; the first record stays), for anomaly
    /// detection's report.
    pub fn set_forward_trace(&self, trace: String) {
        let _ = self.forward_trace.set(trace);
    }

    pub fn forward_trace(&self) -> Option<&str> {
        self.forward_trace.get().map(String::as_str)
    }

    /// PyTorch's class name (`AddmmBackward0`, `AccumulateGrad`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Creation order: later nodes run first when several are ready.
    pub fn sequence_nr(&self) -> u64 {
        self.seq
    }

    pub fn next_edges(&self) -> &[Option<Edge>] {
        &self.next
    }

    pub fn inputs(&self) -> &[TensorInfo] {
        &self.inputs
    }

    pub fn outputs(&self) -> &[TensorInfo] {
        &self.outputs
    }

    pub fn backward(&self) -> MutexGuard<'_, Box<dyn Backward>> {
        self.backward.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn variable(&self) -> Option<Tensor> {
        self.backward().variable()
    }

    fn hooks(&self) -> MutexGuard<'_, Hooks> {
        self.hooks.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn add_tensor_hook(&self, output_nr: usize, hook: Hook) -> u64 {
        let id = hook_id();
        self.hooks().tensor.push((output_nr, id, hook));
        id
    }

    pub(crate) fn retain_grad(&self, output_nr: usize, t: WeakTensor) {
        self.hooks().retain.push((output_nr, t));
    }

    pub fn add_pre_hook(&self, hook: PreHook) -> u64 {
        let id = hook_id();
        self.hooks().pre.push((id, hook));
        id
    }

    pub fn add_post_hook(&self, hook: PostHook) -> u64 {
        let id = hook_id();
        self.hooks().post.push((id, hook));
        id
    }

    /// Removes the hook `id` of any kind; whether there was one.
    pub fn remove_hook(&self, id: u64) -> bool {
        let mut h = self.hooks();
        let before = h.tensor.len() + h.pre.len() + h.post.len();
        h.tensor.retain(|(_, i, _)| *i != id);
        h.pre.retain(|(i, _)| *i != id);
        h.post.retain(|(i, _)| *i != id);
        before != h.tensor.len() + h.pre.len() + h.post.len()
    }

    /// Runs the tensor hooks, then `retain_grad`, then the node's pre-hooks
    /// on the gradients arriving for its outputs, as PyTorch orders them.
    pub fn run_pre_hooks(&self, grads: &mut [Option<Tensor>]) -> Result<()> {
        let (tensor, retain, pre) = {
            let h = self.hooks();
            (h.tensor.clone(), h.retain.clone(), h.pre.clone())
        };
        for (n, _, hook) in tensor {
            if let Some(g) = grads.get(n).and_then(Clone::clone)
                && let Some(new) = hook(&g)?
            {
                grads[n] = Some(new);
            }
        }
        for (n, t) in retain {
            if let (Some(t), Some(Some(g))) = (t.upgrade(), grads.get(n)) {
                t.retain_grad_value(g);
            }
        }
        for (_, hook) in pre {
            if let Some(new) = hook(grads)? {
                for (slot, g) in grads.iter_mut().zip(new) {
                    *slot = g;
                }
            }
        }
        Ok(())
    }

    /// Runs the post-hooks on what the node computed.
    pub fn run_post_hooks(
        &self,
        grad_inputs: &mut [Option<Tensor>],
        grad_outputs: &[Option<Tensor>],
    ) -> Result<()> {
        let post = self.hooks().post.clone();
        for (_, hook) in post {
            if let Some(new) = hook(grad_inputs, grad_outputs)? {
                for (slot, g) in grad_inputs.iter_mut().zip(new) {
                    *slot = g;
                }
            }
        }
        Ok(())
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} #{}>", self.name, self.seq)
    }
}
