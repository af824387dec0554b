//! A tensor saved for backward, checked against in-place changes.

use std::sync::Arc;

use super::{Node, is_grad_enabled};
use crate::{Result, Tensor, TensorError};

pub struct Saved {
    data: Tensor,
    version: u64,
    /// `Some(n)`: output `n` of the node that saves it, kept without its
    /// history (it would point back at the node: a cycle), which unpacking
    /// restores.
    output_nr: Option<usize>,
    /// The node and output the tensor came from, for the error message.
    origin: Option<(String, usize)>,
}

impl Saved {
    /// An input of the op: kept as it is (its history is needed for a
    /// gradient of the gradient).
    pub fn input(t: &Tensor) -> Saved {
        Saved {
            data: t.clone(),
            version: t.version(),
            output_nr: None,
            origin: t.grad_fn().map(|n| (n.name().to_owned(), t.output_nr())),
        }
    }

    /// Output `output_nr` of the node that saves it.
    pub fn output(t: &Tensor, output_nr: usize, node_name: &str) -> Saved {
        Saved {
            data: t.detach(),
            version: t.version(),
            output_nr: Some(output_nr),
            origin: Some((node_name.to_owned(), output_nr)),
        }
    }

    /// The tensor, if it has not been modified in place since it was saved;
    /// when gradients are recorded, with its history.
    pub fn unpack(&self, node: &Arc<Node>) -> Result<Tensor> {
        let version = self.data.version();
        if version != self.version {
            return Err(TensorError::SavedModified {
                dtype: self.data.dtype(),
                shape: self.data.shape().to_vec(),
                origin: self.origin.clone(),
                version,
                expected: self.version,
            });
        }
        Ok(match self.output_nr {
            // Integer outputs (indices) never have history.
            Some(n) if is_grad_enabled() && self.data.dtype().is_float() => {
                let t = self.data.detach();
                t.set_history(node.clone(), n);
                t
            }
            _ => self.data.clone(),
        })
    }
}
