//! Autograd over the registry: each differentiable row declares its
//! derivative ([`Derivative`]: the backward node's name, what it saves, a
//! formula written in registry ops); [`record`] runs a row and, when an
//! input requires grad, links a node for it into the backward graph; the
//! [`engine`] runs backward passes. Formulas call rows through [`ops`], so
//! with `create_graph` the backward pass records itself (double backward
//! needs no second set of formulas).

mod back;
pub mod engine;
pub mod index;
pub mod ops;
mod record;
#[cfg(test)]
mod tests;
mod views;

use std::sync::Arc;

pub use back::Back;
use fxvm_tensor::Result;
pub(crate) use record::accumulate_into;
pub use record::{edge, record, recording};
pub(crate) use record::{mark_views, view_candidate};

/// A value the forward saves for the formula.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Save {
    /// Parameter `i` (every tensor of a list parameter).
    In(usize),
    /// Output `n`.
    Out(usize),
}

/// Runs a row (given, for its own kernel) as a composition of rows.
pub type Decomposition = Arc<
    dyn Fn(&crate::op::Op, Vec<crate::value::Value>) -> Result<crate::value::Value> + Send + Sync,
>;

pub type Formula = Arc<dyn Fn(&mut Back<'_>) -> Result<()> + Send + Sync>;

/// How an op's outputs relate to its inputs' gradients.
#[derive(Clone)]
pub enum Derivative {
    /// A formula: PyTorch's node name (`MulBackward0`), what the forward
    /// saves, and the gradients of the inputs from those of the outputs.
    Formula {
        name: Name,
        saves: &'static [Save],
        formula: Formula,
    },
    /// Run with history as this composition of rows (each records its
    /// own node), as PyTorch records its composite ops.
    Decompose(Decomposition),
    /// The kernel is written in rows (as PyTorch's composite ops): run
    /// with grad mode on, each row it calls records its own node.
    Composite,
    /// The outputs never require grad (creation, sampling, comparisons).
    None,
}

/// The backward node's class name: fixed, or chosen by the call (PyTorch
/// names a node by the overload that ran: `SumBackward0` for `sum(x)`,
/// `SumBackward1` for `sum(x, dim)`).
#[derive(Clone, Copy)]
pub enum Name {
    Fixed(&'static str),
    Pick(fn(&[crate::value::Value]) -> &'static str),
}

impl Name {
    pub fn of(self, values: &[crate::value::Value]) -> &'static str {
        match self {
            Name::Fixed(n) => n,
            Name::Pick(f) => f(values),
        }
    }
}

impl From<&'static str> for Name {
    fn from(n: &'static str) -> Name {
        Name::Fixed(n)
    }
}

impl From<fn(&[crate::value::Value]) -> &'static str> for Name {
    fn from(f: fn(&[crate::value::Value]) -> &'static str) -> Name {
        Name::Pick(f)
    }
}

/// A derivative formula row.
pub fn derivative(
    name: impl Into<Name>,
    saves: &'static [Save],
    formula: impl Fn(&mut Back<'_>) -> Result<()> + Send + Sync + 'static,
) -> Derivative {
    Derivative::Formula {
        name: name.into(),
        saves,
        formula: Arc::new(formula),
    }
}

/// Every registry row with what its backward is: the node PyTorch names
/// (`MulBackward0`; `by call` when the overload decides), `decomposed`
/// (recorded as the rows it runs), `composite` (its kernel calls rows),
/// `no gradient` (creation, sampling,
/// comparisons), or `not implemented` (a backward through it raises).
pub fn coverage() -> String {
    let ops = crate::registry().ops();
    let mut lines = Vec::with_capacity(ops.len());
    let (mut formula, mut none, mut missing) = (0, 0, 0);
    for op in ops {
        let what = match op.derivative() {
            Some(Derivative::Formula {
                name: Name::Fixed(n),
                ..
            }) => {
                formula += 1;
                (*n).to_owned()
            }
            Some(Derivative::Formula { .. }) => {
                formula += 1;
                "by call".to_owned()
            }
            Some(Derivative::Decompose(_)) => {
                formula += 1;
                "decomposed".to_owned()
            }
            Some(Derivative::Composite) => {
                formula += 1;
                "composite".to_owned()
            }
            Some(Derivative::None) => {
                none += 1;
                "no gradient".to_owned()
            }
            None => {
                missing += 1;
                "not implemented".to_owned()
            }
        };
        let places: Vec<String> = op.places.iter().map(|p| format!("{p:?}")).collect();
        lines.push(format!("{} [{}]: {what}", op.name(), places.join(", ")));
    }
    lines.sort();
    format!(
        "{} rows: {formula} with a derivative, {none} without a gradient, {missing} not implemented\n{}\n",
        ops.len(),
        lines.join("\n")
    )
}
