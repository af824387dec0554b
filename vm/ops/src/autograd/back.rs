//! What a formula reads and writes: the gradients of the op's outputs,
//! its saved inputs and outputs, its other arguments, and one gradient per
//! parameter.

use std::sync::Arc;

use fxvm_tensor::autograd::{Node, Saved, TensorInfo};
use fxvm_tensor::{Result, Scalar, Tensor, TensorError};

use crate::value::Value;

/// One parameter as the backward node keeps it.
pub(crate) enum Param {
    /// Not a tensor: kept as given.
    Value(Value),
    /// A number where a tensor may stand (`x + 1`): an input without an
    /// edge, as PyTorch's wrapped numbers.
    Number(Value),
    /// A tensor, saved if the formula asked; its shape and dtype always.
    Tensor {
        saved: Option<Saved>,
        info: TensorInfo,
    },
    Tensors {
        saved: Option<Vec<Saved>>,
        infos: Vec<TensorInfo>,
    },
}

impl Param {
    /// How many inputs of the node (edges) the parameter is.
    pub(crate) fn edges(&self) -> usize {
        match self {
            Param::Tensor { .. } | Param::Number(_) => 1,
            Param::Tensors { infos, .. } => infos.len(),
            Param::Value(_) => 0,
        }
    }
}

pub struct Back<'a> {
    pub(crate) op: &'static str,
    pub(crate) node: &'a Arc<Node>,
    pub(crate) grads: Vec<Option<Tensor>>,
    pub(crate) params: &'a [Param],
    pub(crate) outputs: &'a [Option<Saved>],
    /// Whether the saved tensors were freed by an earlier pass.
    pub(crate) released: bool,
    /// Which parameters need a gradient.
    pub(crate) needs: Vec<bool>,
    /// The gradients set, per parameter (one per tensor of a list).
    pub(crate) out: Vec<Option<Vec<Option<Tensor>>>>,
}

impl Back<'_> {
    fn missing(&self, what: String) -> TensorError {
        if self.released {
            TensorError::SavedFreed
        } else {
            TensorError::runtime(
                "backward",
                format!("{}: {what} was not saved for backward", self.op),
            )
        }
    }

    /// The gradient of output 0.
    pub fn grad(&self) -> Result<Tensor> {
        self.grad_n(0).ok_or_else(|| {
            TensorError::runtime("backward", format!("{}: a gradient is missing", self.op))
        })
    }

    /// The gradient of output `n`, if one is defined.
    pub fn grad_n(&self, n: usize) -> Option<Tensor> {
        self.grads.get(n).cloned().flatten()
    }

    /// The gradient of output `n`, zeros when none came.
    pub fn grad_or_zeros(&self, n: usize) -> Result<Tensor> {
        match self.grad_n(n) {
            Some(g) => Ok(g),
            None => {
                let info = &self.node.outputs()[n];
                super::ops::zeros(&info.shape, info.dtype)
            }
        }
    }

    /// Saved tensor parameter `i`.
    pub fn input(&self, i: usize) -> Result<Tensor> {
        match &self.params[i] {
            Param::Tensor { saved: Some(s), .. } => s.unpack(self.node),
            _ => Err(self.missing(format!("input {i}"))),
        }
    }

    /// Saved tensor parameter `i`, `None` when the caller passed none.
    pub fn opt_input(&self, i: usize) -> Result<Option<Tensor>> {
        match &self.params[i] {
            Param::Value(Value::None) => Ok(None),
            _ => self.input(i).map(Some),
        }
    }

    /// Saved tensor-list parameter `i`.
    pub fn list(&self, i: usize) -> Result<Vec<Tensor>> {
        match &self.params[i] {
            Param::Tensors { saved: Some(s), .. } => {
                s.iter().map(|s| s.unpack(self.node)).collect()
            }
            _ => Err(self.missing(format!("input {i}"))),
        }
    }

    /// Saved output `n`.
    pub fn output(&self, n: usize) -> Result<Tensor> {
        match self.outputs.get(n) {
            Some(Some(s)) => s.unpack(self.node),
            _ => Err(self.missing(format!("output {n}"))),
        }
    }

    /// Non-tensor parameter `i` (`None` for tensors and past the last).
    pub fn value(&self, i: usize) -> &Value {
        match self.params.get(i) {
            Some(Param::Value(v) | Param::Number(v)) => v,
            _ => &Value::None,
        }
    }

    pub fn int(&self, i: usize) -> i64 {
        match self.value(i) {
            Value::Int(n) => *n,
            Value::Scalar(s) => s.to_i64(),
            Value::Bool(b) => *b as i64,
            _ => 0,
        }
    }

    pub fn opt_int(&self, i: usize) -> Option<i64> {
        match self.value(i) {
            Value::None => None,
            _ => Some(self.int(i)),
        }
    }

    pub fn ints(&self, i: usize) -> Vec<i64> {
        match self.value(i) {
            Value::Ints(v) => v.clone(),
            Value::Int(n) => vec![*n],
            _ => vec![],
        }
    }

    pub fn float(&self, i: usize) -> f64 {
        match self.value(i) {
            Value::Float(f) => *f,
            Value::Int(n) => *n as f64,
            Value::Scalar(s) => s.to_f64(),
            _ => 0.0,
        }
    }

    pub fn scalar(&self, i: usize) -> Scalar {
        match self.value(i) {
            Value::Scalar(s) => *s,
            Value::Int(n) => Scalar::Int(*n),
            Value::Float(f) => Scalar::Float(*f),
            Value::Bool(b) => Scalar::Bool(*b),
            _ => Scalar::Int(0),
        }
    }

    pub fn bool(&self, i: usize) -> bool {
        matches!(self.value(i), Value::Bool(true))
    }

    /// Whether parameter `i` was given a tensor (a `Tensor|Scalar` may be a number).
    pub fn is_tensor(&self, i: usize) -> bool {
        matches!(self.params[i], Param::Tensor { .. })
    }

    /// The forward shape of tensor parameter `i`.
    pub fn shape(&self, i: usize) -> &[usize] {
        match &self.params[i] {
            Param::Tensor { info, .. } => &info.shape,
            _ => &[],
        }
    }

    /// The forward shapes of list parameter `i`.
    pub fn shapes(&self, i: usize) -> Vec<Vec<usize>> {
        match &self.params[i] {
            Param::Tensors { infos, .. } => infos.iter().map(|t| t.shape.clone()).collect(),
            _ => vec![],
        }
    }

    /// Whether parameter `i` (any tensor of a list) needs a gradient.
    pub fn needs(&self, i: usize) -> bool {
        self.needs[i]
    }

    /// The gradient of tensor parameter `i`.
    pub fn set(&mut self, i: usize, g: Tensor) {
        if self.needs[i] {
            self.out[i] = Some(vec![Some(g)]);
        }
    }

    /// Adds `g` to the gradient of tensor parameter `i` (a parameter that
    /// reaches several outputs).
    pub fn add(&mut self, i: usize, g: Tensor) -> Result<()> {
        if !self.needs[i] {
            return Ok(());
        }
        let sum = match self.out[i].take().and_then(|mut v| v.pop().flatten()) {
            Some(old) => super::ops::add(&old, &g)?,
            None => g,
        };
        self.out[i] = Some(vec![Some(sum)]);
        Ok(())
    }

    /// The gradients of list parameter `i`, one per tensor.
    pub fn set_list(&mut self, i: usize, g: Vec<Option<Tensor>>) {
        if self.needs[i] {
            self.out[i] = Some(g);
        }
    }
}
