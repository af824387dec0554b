//! Autograd's data, without the VM: each tensor's record (whether it
//! requires grad, the node that made it, its `.grad`, hooks), the nodes of
//! the backward graph, saved tensors with their version checks, and grad
//! mode. The engine that runs a backward pass and the derivative formulas
//! live with the op registry (`fxvm-ops`), since formulas are written in
//! registry ops.

mod mode;
mod node;
mod saved;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

pub use mode::{
    GradMode, is_anomaly_check_nan_enabled, is_anomaly_enabled, is_grad_enabled, is_inference_mode,
    records_history, set_anomaly_enabled, set_grad_enabled, set_inference_mode,
};
pub use node::{Backward, Ctx, Edge, Hook, Node, PostHook, PreHook, TensorInfo, hook_id};
pub use saved::Saved;

use crate::tensor::{Impl, Shared};
use crate::{DType, Result, Tensor, TensorError};

/// A tensor's autograd record, made on first need (most tensors never
/// require grad and never pay for one).
#[derive(Default)]
pub(crate) struct Slot(OnceLock<Arc<Record>>);

/// The record and, readable without its lock, whether the tensor requires
/// grad: every op of every call asks that of each input.
#[derive(Default)]
struct Record {
    requires_grad: AtomicBool,
    meta: Mutex<Meta>,
}

impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "Slot(..)"
        } else {
            "Slot"
        })
    }
}

#[derive(Default)]
struct Meta {
    /// A leaf's own flag (a non-leaf requires grad through its node).
    requires_grad: bool,
    grad_fn: Option<Arc<Node>>,
    output_nr: usize,
    grad: Option<Tensor>,
    retains_grad: bool,
    /// A leaf's accumulator, shared by every use of the leaf in a graph.
    accumulator: Weak<Node>,
    /// A leaf's `register_hook`s, run before accumulating.
    hooks: Vec<(u64, Hook)>,
    /// `register_post_accumulate_grad_hook`s, run after.
    post_accumulate: Vec<(u64, Hook)>,
    /// For a view made with history: the tensor owning the storage it
    /// reads (an in-place op on the view rewrites that tensor's history).
    view_of: Option<Tensor>,
}

/// A tensor that does not keep its storage alive (for `retain_grad`).
#[derive(Clone)]
pub struct WeakTensor {
    storage: Weak<Shared>,
    imp: Weak<Impl>,
    dtype: DType,
}

impl WeakTensor {
    pub fn upgrade(&self) -> Option<Tensor> {
        Some(Tensor::from_parts(
            self.storage.upgrade()?,
            self.imp.upgrade()?,
            self.dtype,
        ))
    }
}

impl Tensor {
    fn meta(&self) -> Option<MutexGuard<'_, Meta>> {
        self.imp
            .autograd
            .0
            .get()
            .map(|r| r.meta.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn meta_mut(&self) -> MutexGuard<'_, Meta> {
        self.imp
            .autograd
            .0
            .get_or_init(Default::default)
            .meta
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes whether the tensor requires grad (after `m` changed).
    fn publish(&self, m: &Meta) {
        if let Some(r) = self.imp.autograd.0.get() {
            let on = m.requires_grad || m.grad_fn.is_some();
            r.requires_grad.store(on, Ordering::Release);
        }
    }

    /// This tensor (its autograd record: `.grad`, history, hooks) over
    /// `data`'s storage and layout: `tensor.data = data`.
    pub fn with_data_of(&self, data: &Tensor) -> Tensor {
        let t = data.detach();
        if let Some(meta) = self.imp.autograd.0.get() {
            let _ = t.imp.autograd.0.set(meta.clone());
        }
        t
    }

    /// Whether this tensor reads `other`'s storage (a view of it, or it).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// Marks this tensor a view of `base` (of what `base` is a view of, if
    /// it is one).
    pub fn set_view_of(&self, base: &Tensor) {
        let root = base.view_base().unwrap_or_else(|| base.clone());
        self.meta_mut().view_of = Some(root);
    }

    /// The tensor this view reads, if it is a view made with history.
    pub fn view_base(&self) -> Option<Tensor> {
        self.meta().and_then(|m| m.view_of.clone())
    }

    /// Whether this handle and `other` are the same tensor (not two views).
    pub fn same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.imp, &other.imp)
    }

    pub(crate) fn downgrade(&self) -> WeakTensor {
        WeakTensor {
            storage: Arc::downgrade(&self.storage),
            imp: Arc::downgrade(&self.imp),
            dtype: self.dtype(),
        }
    }

    /// The same data as a new tensor without history (`detach`).
    pub fn detach(&self) -> Tensor {
        self.with_layout(self.layout().clone())
    }

    pub fn requires_grad(&self) -> bool {
        self.imp
            .autograd
            .0
            .get()
            .is_some_and(|r| r.requires_grad.load(Ordering::Acquire))
    }

    pub fn is_leaf(&self) -> bool {
        self.grad_fn().is_none()
    }

    pub fn grad_fn(&self) -> Option<Arc<Node>> {
        self.meta().and_then(|m| m.grad_fn.clone())
    }

    /// Which output of its node this tensor is.
    pub fn output_nr(&self) -> usize {
        self.meta().map_or(0, |m| m.output_nr)
    }

    /// `requires_grad_`: only leaves change, and only floating-point ones
    /// may require grad.
    pub fn set_requires_grad(&self, on: bool) -> Result<()> {
        if on && !self.dtype().is_float() {
            return Err(TensorError::runtime(
                "requires_grad_",
                "only Tensors of floating point dtype can require gradients",
            ));
        }
        if self.meta().is_none() && !on {
            return Ok(());
        }
        let mut m = self.meta_mut();
        if m.grad_fn.is_some() {
            if on {
                return Ok(());
            }
            return Err(TensorError::runtime(
                "requires_grad_",
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().",
            ));
        }
        m.requires_grad = on;
        self.publish(&m);
        Ok(())
    }

    /// `detach_()`: no history, and no longer requiring grad.
    pub fn clear_history(&self) {
        if let Some(mut m) = self.meta() {
            m.grad_fn = None;
            m.requires_grad = false;
            self.publish(&m);
        }
    }

    /// Makes this tensor output `output_nr` of `node` (an op's result, or an
    /// in-place op rebasing its input).
    pub fn set_history(&self, node: Arc<Node>, output_nr: usize) {
        let mut m = self.meta_mut();
        m.grad_fn = Some(node);
        m.output_nr = output_nr;
        m.requires_grad = false;
        self.publish(&m);
    }

    pub fn grad(&self) -> Option<Tensor> {
        self.meta().and_then(|m| m.grad.clone())
    }

    /// Sets `.grad`; a gradient must have this tensor's shape and dtype.
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad {
            if g.dtype() != self.dtype() {
                return Err(TensorError::runtime(
                    "grad",
                    format!(
                        "attempting to assign a gradient with dtype '{}' to a tensor with dtype '{}'. Please ensure that the gradient and the tensor have the same dtype",
                        g.dtype().cpp_name(),
                        self.dtype().cpp_name()
                    ),
                ));
            }
            if g.shape() != self.shape() {
                return Err(TensorError::runtime(
                    "grad",
                    format!(
                        "attempting to assign a gradient of size '{:?}' to a tensor of size '{:?}'. Please ensure that the gradient and the tensor are the same size",
                        g.shape(),
                        self.shape()
                    ),
                ));
            }
        }
        if grad.is_none() && self.meta().is_none() {
            return Ok(());
        }
        self.meta_mut().grad = grad;
        Ok(())
    }

    /// A leaf's accumulator, made on first use.
    fn accumulator(&self, make: impl FnOnce() -> Arc<Node>) -> Arc<Node> {
        let mut m = self.meta_mut();
        if let Some(node) = m.accumulator.upgrade() {
            return node;
        }
        let node = make();
        m.accumulator = Arc::downgrade(&node);
        node
    }

    /// Where this tensor's gradient goes: its node's input, or its
    /// accumulator for a leaf that requires grad (made by `make`, which
    /// runs with this tensor's record locked: it builds a node and touches
    /// no tensor's record).
    pub fn gradient_edge(&self, make: impl FnOnce() -> Arc<Node>) -> Option<Edge> {
        let m = self.meta()?;
        if let Some(node) = &m.grad_fn {
            return Some(Edge {
                node: node.clone(),
                input_nr: m.output_nr,
            });
        }
        if !m.requires_grad {
            return None;
        }
        drop(m);
        Some(Edge {
            node: self.accumulator(make),
            input_nr: 0,
        })
    }

    pub fn retains_grad(&self) -> bool {
        self.meta().is_some_and(|m| m.retains_grad)
    }

    /// `retain_grad()`: a non-leaf keeps its gradient in `.grad` (a leaf
    /// already does).
    pub fn retain_grad(&self) -> Result<()> {
        if !self.requires_grad() {
            return Err(TensorError::runtime(
                "retain_grad",
                "can't retain_grad on Tensor that has requires_grad=False",
            ));
        }
        let Some(node) = self.grad_fn() else {
            return Ok(());
        };
        let mut m = self.meta_mut();
        if m.retains_grad {
            return Ok(());
        }
        m.retains_grad = true;
        drop(m);
        node.retain_grad(self.output_nr(), self.downgrade());
        Ok(())
    }

    /// What `retain_grad` stores on each backward: the gradient, or the
    /// sum with the one already there.
    pub(crate) fn retain_grad_value(&self, g: &Tensor) {
        let mut m = self.meta_mut();
        m.grad = Some(match m.grad.take() {
            None => g.copy(),
            Some(old) => crate::ops::elementwise::binary(
                crate::ops::elementwise::Binary::Add,
                &old.into(),
                &g.clone().into(),
            )
            .unwrap_or_else(|_| g.clone()),
        });
    }

    /// `register_hook`: on a leaf, run before its gradient accumulates; on
    /// a non-leaf, on the gradient arriving at its node.
    pub fn register_hook(&self, hook: Hook) -> Result<u64> {
        if !self.requires_grad() {
            return Err(TensorError::runtime(
                "register_hook",
                "cannot register a hook on a tensor that doesn't require gradient",
            ));
        }
        match self.grad_fn() {
            Some(node) => Ok(node.add_tensor_hook(self.output_nr(), hook)),
            None => {
                let id = hook_id();
                self.meta_mut().hooks.push((id, hook));
                Ok(id)
            }
        }
    }

    pub fn register_post_accumulate_grad_hook(&self, hook: Hook) -> Result<u64> {
        if !self.requires_grad() {
            return Err(TensorError::runtime(
                "register_post_accumulate_grad_hook",
                "cannot register a hook on a tensor that doesn't require gradient",
            ));
        }
        if !self.is_leaf() {
            return Err(TensorError::runtime(
                "register_post_accumulate_grad_hook",
                "post accumulate grad hooks cannot be registered on non-leaf tensors",
            ));
        }
        let id = hook_id();
        self.meta_mut().post_accumulate.push((id, hook));
        Ok(id)
    }

    /// Removes a hook registered on this tensor (or on its node).
    pub fn remove_hook(&self, id: u64) {
        if let Some(node) = self.grad_fn() {
            node.remove_hook(id);
        }
        if let Some(mut m) = self.meta() {
            m.hooks.retain(|(i, _)| *i != id);
            m.post_accumulate.retain(|(i, _)| *i != id);
        }
    }

    /// A leaf's hooks, to run on its gradient before accumulation.
    pub fn leaf_hooks(&self) -> Vec<Hook> {
        self.meta()
            .map(|m| m.hooks.iter().map(|(_, h)| h.clone()).collect())
            .unwrap_or_default()
    }

    pub fn post_accumulate_hooks(&self) -> Vec<Hook> {
        self.meta()
            .map(|m| m.post_accumulate.iter().map(|(_, h)| h.clone()).collect())
            .unwrap_or_default()
    }
}
