//! The recorder: resolves each tensor a step reads to where it comes from,
//! and turns the calls it is told of into [`Step`]s.

use std::collections::{HashMap, HashSet};

use fxvm_tensor::layout::Layout;
use fxvm_tensor::ops::subscript::Index;
use fxvm_tensor::{DType, Tensor};

use super::replay::{Arg, FixedGuard, GradGuard, Guards, InputGuard, Ref, Step, Tape, refs};
use crate::op::Op;
use crate::value::Value;

/// A subscript's items, and its tensor items' places and sources.
type Items = (Vec<Index>, Vec<(usize, Ref)>);

/// A tensor's value identity: its storage, layout and dtype (a detached
/// handle, a saved tensor, `.data` all read the same values as the tensor).
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    storage: usize,
    layout: Layout,
    dtype: DType,
}

impl Key {
    fn of(t: &Tensor) -> Key {
        Key {
            storage: t.storage_id(),
            layout: t.layout().clone(),
            dtype: t.dtype(),
        }
    }
}

pub(crate) struct Recorder {
    steps: Vec<Step>,
    slots: usize,
    inputs: Vec<InputGuard>,
    /// Where each tensor seen comes from.
    keys: HashMap<Key, Ref>,
    /// A slot holding each storage made by a step (for views of it).
    storages: HashMap<usize, usize>,
    /// A handle of every tensor resolved: no storage seen is freed (and its
    /// address reused) while recording. Detached: a view's record holds its
    /// base, which is not the recorder's to keep.
    held: Vec<Tensor>,
    /// Storages made from here on were made during the recording.
    first_serial: u64,
    /// The gradient each leaf had before the recording changed it.
    grad_guards: Vec<GradGuard>,
    /// Whether each tensor from before the recording required grad.
    fixed_guards: Vec<FixedGuard>,
    calls: usize,
    /// Live-argument sets so far, and the one the next op takes.
    lives: usize,
    pending_live: Option<usize>,
    refused: Option<String>,
    /// Whether the engine is running a backward pass.
    pub(crate) in_backward: bool,
}

impl Recorder {
    pub(crate) fn new(inputs: &[Tensor]) -> Recorder {
        let mut r = Recorder {
            steps: Vec::new(),
            slots: 0,
            inputs: Vec::new(),
            keys: HashMap::new(),
            storages: HashMap::new(),
            held: Vec::new(),
            first_serial: Tensor::next_storage_serial(),
            grad_guards: Vec::new(),
            fixed_guards: Vec::new(),
            calls: 0,
            lives: 0,
            pending_live: None,
            refused: None,
            in_backward: false,
        };
        for t in inputs {
            let slot = r.define(t);
            r.inputs.push(InputGuard::of(t, slot));
        }
        r
    }

    pub(crate) fn refuse(&mut self, reason: String) {
        self.refused.get_or_insert(reason);
    }

    /// A new slot holding `t` from now on.
    fn define(&mut self, t: &Tensor) -> usize {
        let slot = self.slots;
        self.slots += 1;
        self.keys.insert(Key::of(t), Ref::Slot(slot));
        self.storages.entry(t.storage_id()).or_insert(slot);
        self.held.push(t.detach());
        slot
    }

    /// Where `t` comes from, or None (recording refused) when it was made
    /// outside the registry during the recording.
    fn resolve(&mut self, t: &Tensor, reader: &str) -> Option<Ref> {
        let key = Key::of(t);
        if let Some(r) = self.keys.get(&key) {
            return Some(r.clone());
        }
        if let Some(&base) = self.storages.get(&t.storage_id()) {
            let slot = self.define(t);
            self.steps.push(Step::View {
                of: base,
                layout: t.layout().clone(),
                out: slot,
            });
            return Some(Ref::Slot(slot));
        }
        if t.storage_serial() < self.first_serial {
            self.held.push(t.detach());
            self.fixed_guards.push(FixedGuard::of(t));
            let r = Ref::Fixed(t.detach());
            self.keys.insert(key, r.clone());
            return Some(r);
        }
        self.refuse(format!(
            "{reader} reads a tensor (shape {:?}) computed outside the op registry",
            t.shape()
        ));
        None
    }

    pub(crate) fn constant(&mut self, t: &Tensor) {
        self.held.push(t.detach());
        self.keys.insert(Key::of(t), Ref::Fixed(t.detach()));
    }

    fn arg(&mut self, v: &Value, reader: &str) -> Option<Arg> {
        Some(match v {
            Value::Tensor(t) => Arg::Tensor(self.resolve(t, reader)?),
            Value::Tensors(ts) => Arg::Tensors(
                ts.iter()
                    .map(|t| self.resolve(t, reader))
                    .collect::<Option<_>>()?,
            ),
            v => Arg::Value(v.clone()),
        })
    }

    /// The tensors of an op's result, in order; `Input(i)` results are the
    /// argument itself and define nothing new.
    fn outputs(&mut self, out: &Value, into: &mut Vec<usize>) -> Option<()> {
        match out {
            Value::Tensor(t) => into.push(self.define(t)),
            Value::Tensors(ts) => ts.iter().for_each(|t| into.push(self.define(t))),
            Value::Tuple(vs) | Value::ReturnType(_, vs) => {
                for v in vs {
                    self.outputs(v, into)?;
                }
            }
            Value::Input(_) | Value::None | Value::Int(_) | Value::Ints(_) => {}
            v => {
                self.refuse(format!(
                    "an op returned a {} computed from tensor values",
                    v.type_name()
                ));
                return None;
            }
        }
        Some(())
    }

    pub(crate) fn op(&mut self, op: &Op, args: Vec<Value>, out: &Value) {
        if self.refused.is_some() {
            return;
        }
        let Some(op) = crate::registry().row(op) else {
            return self.refuse(format!("{} is not a registry row", op.name()));
        };
        let Some(args) = args
            .iter()
            .map(|v| self.arg(v, op.name()))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        let mut outs = Vec::new();
        if self.outputs(out, &mut outs).is_some() {
            self.steps.push(Step::Op {
                op,
                args,
                outs,
                backward: self.in_backward,
                live: self.pending_live.take(),
            });
        }
    }

    /// The items with their tensors resolved (the tensors' places kept
    /// apart, as a replay puts its own in).
    fn items(&mut self, items: &[Index]) -> Option<Items> {
        let mut tensors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if let Index::Tensor(t) = item {
                tensors.push((i, self.resolve(t, "a subscript")?));
            }
        }
        Some((items.to_vec(), tensors))
    }

    pub(crate) fn index_get(&mut self, t: &Tensor, items: &[Index], out: &Tensor) {
        let (Some(src), Some((items, tensors))) =
            (self.resolve(t, "a subscript"), self.items(items))
        else {
            return;
        };
        let out = self.define(out);
        self.steps.push(Step::Get {
            src,
            items,
            tensors,
            out,
        });
    }

    pub(crate) fn index_put(
        &mut self,
        t: &Tensor,
        items: &[Index],
        src: &Tensor,
        accumulate: bool,
    ) {
        let (Some(dst), Some(src), Some((items, tensors))) = (
            self.resolve(t, "a subscript assignment"),
            self.resolve(src, "a subscript assignment"),
            self.items(items),
        ) else {
            return;
        };
        self.steps.push(Step::Put {
            dst,
            items,
            tensors,
            src,
            accumulate,
        });
    }

    /// Remembers the gradient a leaf that existed before the recording had
    /// before its first change: what a replay requires it to have again.
    pub(crate) fn before_grad_change(&mut self, var: &Tensor) {
        if var.storage_serial() >= self.first_serial || self.grad_guards.iter().any(|g| g.is(var)) {
            return;
        }
        self.grad_guards.push(GradGuard::of(var));
    }

    /// The leaf itself (its gradient lives on this handle, not its values).
    fn var(&mut self, var: &Tensor) -> Option<Ref> {
        if var.storage_serial() < self.first_serial {
            self.held.push(var.clone());
            return Some(Ref::Fixed(var.clone()));
        }
        self.resolve(var, "a gradient")
    }

    pub(crate) fn accumulate(&mut self, var: &Tensor, g: &Tensor) {
        let (Some(v), Some(grad)) = (self.var(var), self.resolve(g, "a gradient accumulation"))
        else {
            return;
        };
        let Some(now) = var.grad() else {
            return self.refuse("a gradient accumulated into nothing".into());
        };
        let out = self.define(&now);
        self.steps.push(Step::Accumulate { var: v, grad, out });
    }

    pub(crate) fn set_grad(&mut self, var: &Tensor, grad: Option<&Tensor>) {
        let Some(v) = self.var(var) else { return };
        let grad = match grad {
            Some(g) => match self.resolve(g, ".grad =") {
                Some(r) => Some(r),
                None => return,
            },
            None => None,
        };
        self.steps.push(Step::SetGrad { var: v, grad });
    }

    pub(crate) fn live_args(&mut self) -> usize {
        let k = self.lives;
        self.lives += 1;
        self.pending_live = Some(k);
        k
    }

    pub(crate) fn call(&mut self) -> usize {
        let k = self.calls;
        self.calls += 1;
        self.steps.push(Step::Call(k));
        k
    }

    pub(crate) fn finish(mut self, outputs: &[Tensor]) -> Result<Tape, String> {
        if let Some(why) = self.refused.take() {
            return Err(why);
        }
        let outs = outputs
            .iter()
            .map(|t| self.resolve(t, "the result"))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| self.refused.take().unwrap_or_default())?;
        self.check_escapes(outputs)?;
        let fixed: HashSet<usize> = self
            .steps
            .iter()
            .flat_map(refs)
            .filter_map(|r| match r {
                Ref::Fixed(t) => Some(t.storage_id()),
                Ref::Slot(_) => None,
            })
            .collect();
        self.grad_guards.iter_mut().for_each(|g| g.settle(&fixed));
        Ok(Tape {
            steps: self.steps,
            slots: self.slots,
            guards: Guards {
                inputs: self.inputs,
                grads: self.grad_guards,
                fixed: self.fixed_guards,
            },
            outputs: outs,
            calls: self.calls,
            lives: self.lives,
            frees: Vec::new(),
        }
        .free_after_last_use())
    }

    /// Refuses a recording whose computed tensors outlive the call other
    /// than as its outputs or gradients (kept in an attribute or a list): a
    /// replay would not update them.
    fn check_escapes(&self, outputs: &[Tensor]) -> Result<(), String> {
        let mut explained: HashMap<usize, usize> = HashMap::new();
        for t in &self.held {
            *explained.entry(t.storage_id()).or_default() += 1;
        }
        // An output: the caller's handle and ours.
        for t in outputs {
            *explained.entry(t.storage_id()).or_default() += 2;
        }
        // A gradient: the leaf's handle and the one read here (once per
        // leaf, however many steps set it).
        let mut leaves = HashSet::new();
        let grads: Vec<Tensor> = self
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Accumulate {
                    var: Ref::Fixed(v), ..
                }
                | Step::SetGrad {
                    var: Ref::Fixed(v), ..
                } if leaves.insert(v.handle_id()) => v.grad(),
                _ => None,
            })
            .collect();
        for g in &grads {
            *explained.entry(g.storage_id()).or_default() += 2;
        }
        for t in &self.held {
            if t.storage_serial() < self.first_serial {
                continue;
            }
            let id = t.storage_id();
            if t.storage_handles() > explained.get(&id).copied().unwrap_or(0) {
                return Err(format!(
                    "a tensor of shape {:?} computed in it is kept after it returns (in an attribute, a list, ...)",
                    t.shape()
                ));
            }
        }
        Ok(())
    }
}
