//! A recorded tape and its replay: the steps run over slots with grad mode
//! off (the backward pass is on the tape as ordinary rows), each slot
//! dropped after its last use; a call step hands control back to the
//! driver, which runs its Python and resumes.

use fxvm_tensor::autograd::GradMode;
use fxvm_tensor::layout::Layout;
use fxvm_tensor::ops::subscript::{self, Index};
use fxvm_tensor::{DType, Result, Tensor, TensorError};

use crate::op::Op;
use crate::value::Value;

/// Where a step's tensor comes from.
#[derive(Clone, Debug)]
pub(crate) enum Ref {
    Slot(usize),
    /// The same handle at every replay: a tensor that existed before the
    /// recording, or a constant.
    Fixed(Tensor),
}

#[derive(Debug)]
pub(crate) enum Arg {
    Value(Value),
    Tensor(Ref),
    Tensors(Vec<Ref>),
}

#[derive(Debug)]
pub(crate) enum Step {
    /// A registry row; its result's tensors, in order, go to `outs`.
    Op {
        op: &'static Op,
        args: Vec<Arg>,
        outs: Vec<usize>,
        /// Run by the backward pass (for profiles).
        backward: bool,
        /// The live-argument set whose values replace the recorded ones.
        live: Option<usize>,
    },
    /// Another view of a slot's storage.
    View {
        of: usize,
        layout: Layout,
        out: usize,
    },
    Get {
        src: Ref,
        items: Vec<Index>,
        /// The tensor items' places and tensors.
        tensors: Vec<(usize, Ref)>,
        out: usize,
    },
    /// `dst[items] = src`, or `+=` with `accumulate`.
    Put {
        dst: Ref,
        items: Vec<Index>,
        tensors: Vec<(usize, Ref)>,
        src: Ref,
        accumulate: bool,
    },
    /// A gradient accumulated into a leaf's `.grad` (then in `out`).
    Accumulate {
        var: Ref,
        grad: Ref,
        out: usize,
    },
    SetGrad {
        var: Ref,
        grad: Option<Ref>,
    },
    /// Python the driver runs.
    Call(usize),
}

/// What a tensor argument must be for the tape to replay.
#[derive(Debug)]
pub(crate) struct InputGuard {
    slot: usize,
    dtype: DType,
    layout: Layout,
    requires_grad: bool,
}

impl InputGuard {
    pub(crate) fn of(t: &Tensor, slot: usize) -> InputGuard {
        InputGuard {
            slot,
            dtype: t.dtype(),
            layout: t.layout().clone(),
            requires_grad: t.requires_grad(),
        }
    }
}

/// What a leaf's gradient was when the recording first changed it: None
/// or a tensor — and which tensor, when the tape reads that one (held, so
/// its identity stays unique). Python decides on `p.grad is None`.
#[derive(Debug)]
pub(crate) struct GradGuard {
    var: Tensor,
    was: Option<Option<Tensor>>,
}

impl GradGuard {
    pub(crate) fn of(var: &Tensor) -> GradGuard {
        GradGuard {
            var: var.clone(),
            was: var.grad().map(Some),
        }
    }

    pub(crate) fn is(&self, var: &Tensor) -> bool {
        self.var.handle_id() == var.handle_id()
    }

    /// Keeps the old gradient's identity only if a step in `read` (the
    /// storages the tape holds fixed) reads it.
    pub(crate) fn settle(&mut self, read: &std::collections::HashSet<usize>) {
        if let Some(was) = &mut self.was
            && was
                .as_ref()
                .is_some_and(|g| !read.contains(&g.storage_id()))
        {
            *was = None;
        }
    }

    fn holds(&self) -> bool {
        match (self.var.grad(), &self.was) {
            (None, None) => true,
            (Some(now), Some(Some(was))) => now.handle_id() == was.handle_id(),
            (Some(_), Some(None)) => true,
            _ => false,
        }
    }
}

/// A tensor from before the recording (a parameter) and whether it
/// required grad: the backward pass on the tape is the one for that.
#[derive(Debug)]
pub(crate) struct FixedGuard {
    t: Tensor,
    requires_grad: bool,
}

impl FixedGuard {
    pub(crate) fn of(t: &Tensor) -> FixedGuard {
        FixedGuard {
            t: t.clone(),
            requires_grad: t.requires_grad(),
        }
    }
}

/// What a call must be for a tape to replay it.
#[derive(Debug)]
pub(crate) struct Guards {
    pub(crate) inputs: Vec<InputGuard>,
    pub(crate) grads: Vec<GradGuard>,
    pub(crate) fixed: Vec<FixedGuard>,
}

/// A recorded call, ready to replay.
#[derive(Debug)]
pub struct Tape {
    pub(crate) steps: Vec<Step>,
    pub(crate) slots: usize,
    pub(crate) guards: Guards,
    pub(crate) outputs: Vec<Ref>,
    pub(crate) calls: usize,
    pub(crate) lives: usize,
    /// Slots whose last use is each step.
    pub(crate) frees: Vec<Vec<usize>>,
}

/// Where a replay stopped.
pub enum Segment {
    /// At call `call` (tape step `step`): the driver runs it, then resumes.
    Call { call: usize, step: usize },
    /// The end: the call's output tensors.
    Done(Vec<Tensor>),
}

pub(crate) fn refs(step: &Step) -> Vec<&Ref> {
    match step {
        Step::Op { args, .. } => args
            .iter()
            .flat_map(|a| match a {
                Arg::Tensor(r) => vec![r],
                Arg::Tensors(rs) => rs.iter().collect(),
                Arg::Value(_) => vec![],
            })
            .collect(),
        Step::View { .. } | Step::Call(_) => vec![],
        Step::Get { src, tensors, .. } => std::iter::once(src)
            .chain(tensors.iter().map(|(_, r)| r))
            .collect(),
        Step::Put {
            dst, tensors, src, ..
        } => [dst, src]
            .into_iter()
            .chain(tensors.iter().map(|(_, r)| r))
            .collect(),
        Step::Accumulate { var, grad, .. } => vec![var, grad],
        Step::SetGrad { var, grad } => std::iter::once(var).chain(grad).collect(),
    }
}

/// The slots a step reads (a view reads its base).
fn reads(step: &Step) -> Vec<usize> {
    let mut slots: Vec<usize> = refs(step)
        .into_iter()
        .filter_map(|r| match r {
            Ref::Slot(s) => Some(*s),
            Ref::Fixed(_) => None,
        })
        .collect();
    if let Step::View { of, .. } = step {
        slots.push(*of);
    }
    slots
}

impl Tape {
    /// Marks each slot to be dropped after the step that uses it last
    /// (outputs never).
    pub(crate) fn free_after_last_use(mut self) -> Tape {
        let mut last = vec![None; self.slots];
        for (i, step) in self.steps.iter().enumerate() {
            for s in reads(step) {
                last[s] = Some(i);
            }
        }
        for r in &self.outputs {
            if let Ref::Slot(s) = r {
                last[*s] = None;
            }
        }
        self.frees = vec![Vec::new(); self.steps.len()];
        for (s, at) in last.into_iter().enumerate() {
            if let Some(i) = at {
                self.frees[i].push(s);
            }
        }
        self
    }

    /// How many call steps the driver runs.
    pub fn calls(&self) -> usize {
        self.calls
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The op of each live-argument set, in order: what the driver's
    /// values are converted for.
    pub fn live_ops(&self) -> Vec<&'static Op> {
        let mut ops = vec![None; self.lives];
        for step in &self.steps {
            if let Step::Op {
                op, live: Some(k), ..
            } = step
            {
                ops[*k] = Some(*op);
            }
        }
        ops.into_iter().flatten().collect()
    }

    /// The call number of step `i`, if it is a call step.
    pub fn call_at(&self, i: usize) -> Option<usize> {
        match self.steps.get(i) {
            Some(Step::Call(k)) => Some(*k),
            _ => None,
        }
    }

    /// What step `i` runs, as a profile names it.
    pub fn label(&self, i: usize) -> String {
        match &self.steps[i] {
            Step::Op {
                op,
                backward: false,
                ..
            } => op.name().to_owned(),
            Step::Op {
                op, backward: true, ..
            } => format!("{} (backward)", op.name()),
            Step::View { .. } => "view".into(),
            Step::Get { .. } => "getitem".into(),
            Step::Put { .. } => "setitem".into(),
            Step::Accumulate { .. } => "accumulate grad".into(),
            Step::SetGrad { .. } => "set grad".into(),
            Step::Call(_) => "python".into(),
        }
    }

    /// Why the call with tensor arguments `inputs` cannot replay the tape,
    /// or None.
    pub fn violation(&self, inputs: &[Tensor]) -> Option<String> {
        if inputs.len() != self.guards.inputs.len() {
            return Some(format!(
                "{} tensor arguments were recorded, {} given",
                self.guards.inputs.len(),
                inputs.len()
            ));
        }
        for (i, (g, t)) in self.guards.inputs.iter().zip(inputs).enumerate() {
            if t.dtype() != g.dtype {
                return Some(format!(
                    "tensor argument {i} was {} when recorded, now {}",
                    g.dtype.name(),
                    t.dtype().name()
                ));
            }
            if t.layout() != &g.layout {
                return Some(format!(
                    "tensor argument {i} had shape {:?} (strides {:?}) when recorded, now {:?} ({:?})",
                    g.layout.shape,
                    g.layout.strides,
                    t.shape(),
                    t.strides()
                ));
            }
            if t.requires_grad() != g.requires_grad {
                return Some(format!("tensor argument {i}'s requires_grad changed"));
            }
        }
        if let Some(g) = self
            .guards
            .fixed
            .iter()
            .find(|g| g.t.requires_grad() != g.requires_grad)
        {
            return Some(format!(
                "a tensor of shape {:?} the step reads {} requires grad",
                g.t.shape(),
                if g.requires_grad { "no longer" } else { "now" }
            ));
        }
        if self.guards.grads.iter().any(|g| !g.holds()) {
            return Some(
                "a parameter's .grad is not what it was when recorded (None or another tensor)"
                    .into(),
            );
        }
        None
    }

    /// A replay with these tensor arguments (checked by [`Tape::violation`])
    /// and, per live-argument set, `(parameter, value)` replacements.
    pub fn replay(&self, inputs: Vec<Tensor>, live: Vec<Vec<(usize, Value)>>) -> Replay<'_> {
        let mut slots = vec![None; self.slots];
        for (g, t) in self.guards.inputs.iter().zip(inputs) {
            slots[g.slot] = Some(t);
        }
        Replay {
            tape: self,
            slots,
            live,
            next: 0,
        }
    }
}

/// A tape being replayed.
pub struct Replay<'a> {
    tape: &'a Tape,
    slots: Vec<Option<Tensor>>,
    live: Vec<Vec<(usize, Value)>>,
    next: usize,
}

fn diverged(what: &str) -> TensorError {
    TensorError::runtime("replay", format!("the recorded step diverged: {what}"))
}

impl Replay<'_> {
    fn get(&self, r: &Ref) -> Result<Tensor> {
        match r {
            Ref::Fixed(t) => Ok(t.clone()),
            Ref::Slot(s) => self.slots[*s]
                .clone()
                .ok_or_else(|| diverged("a value was read after it was dropped")),
        }
    }

    fn put(&mut self, slot: usize, t: Tensor) {
        self.slots[slot] = Some(t);
    }

    /// Runs up to the next call step or the end; `timed(step, nanos)` is
    /// told each step's time when given.
    pub fn resume(&mut self, mut timed: Option<&mut dyn FnMut(usize, u64)>) -> Result<Segment> {
        let _off = GradMode::set(false);
        while self.next < self.tape.steps.len() {
            let i = self.next;
            self.next += 1;
            let t0 = timed.is_some().then(std::time::Instant::now);
            if let Step::Call(call) = self.tape.steps[i] {
                return Ok(Segment::Call { call, step: i });
            }
            self.step(i)?;
            for &s in &self.tape.frees[i] {
                self.slots[s] = None;
            }
            if let (Some(f), Some(t0)) = (timed.as_mut(), t0) {
                f(i, t0.elapsed().as_nanos() as u64);
            }
        }
        let outs = self
            .tape
            .outputs
            .iter()
            .map(|r| self.get(r))
            .collect::<Result<_>>()?;
        Ok(Segment::Done(outs))
    }

    fn items(&self, items: &[Index], tensors: &[(usize, Ref)]) -> Result<Vec<Index>> {
        let mut items = items.to_vec();
        for (i, r) in tensors {
            items[*i] = Index::Tensor(self.get(r)?);
        }
        Ok(items)
    }

    fn step(&mut self, i: usize) -> Result<()> {
        match &self.tape.steps[i] {
            Step::Op {
                op,
                args,
                outs,
                live,
                ..
            } => {
                let mut values = args
                    .iter()
                    .map(|a| {
                        Ok(match a {
                            Arg::Value(v) => v.clone(),
                            Arg::Tensor(r) => Value::Tensor(self.get(r)?),
                            Arg::Tensors(rs) => Value::Tensors(
                                rs.iter().map(|r| self.get(r)).collect::<Result<_>>()?,
                            ),
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                if let Some(set) = live.and_then(|k| self.live.get(k)) {
                    for (i, v) in set {
                        values[*i] = v.clone();
                    }
                }
                let out = op.run_plain(values)?;
                let mut made = Vec::with_capacity(outs.len());
                flatten(&out, &mut made);
                if made.len() != outs.len() {
                    return Err(diverged(&format!(
                        "{} made {} tensors, {} when recorded",
                        op.name(),
                        made.len(),
                        outs.len()
                    )));
                }
                for (&slot, t) in outs.iter().zip(made) {
                    self.put(slot, t);
                }
            }
            Step::View { of, layout, out } => {
                let base = self.get(&Ref::Slot(*of))?;
                let view = base.as_strided(&layout.shape, &layout.strides, layout.offset)?;
                self.put(*out, view);
            }
            Step::Get {
                src,
                items,
                tensors,
                out,
            } => {
                let picked = subscript::get(&self.get(src)?, &self.items(items, tensors)?)?;
                self.put(*out, picked);
            }
            Step::Put {
                dst,
                items,
                tensors,
                src,
                accumulate,
            } => {
                let (dst, items, src) =
                    (self.get(dst)?, self.items(items, tensors)?, self.get(src)?);
                if *accumulate {
                    subscript::put(&dst, &items, &src, true)?;
                } else {
                    subscript::set(&dst, &items, &src)?;
                }
            }
            Step::Accumulate { var, grad, out } => {
                let var = self.get(var)?;
                // The gradient's last use: handed over, so it can become
                // `.grad` itself rather than a copy.
                let g = match grad {
                    Ref::Slot(s) if self.tape.frees[i].contains(s) => self.slots[*s]
                        .take()
                        .ok_or_else(|| diverged("a gradient was dropped"))?,
                    r => self.get(r)?,
                };
                crate::autograd::accumulate_into(&var, g)?;
                let now = var
                    .grad()
                    .ok_or_else(|| diverged("a gradient accumulated into nothing"))?;
                self.put(*out, now);
            }
            Step::SetGrad { var, grad } => {
                let grad = grad.as_ref().map(|r| self.get(r)).transpose()?;
                self.get(var)?.set_grad(grad)?;
            }
            // Handed to the driver by `resume`.
            Step::Call(_) => {}
        }
        Ok(())
    }
}

/// A result's tensors, in the order the recorder numbered them.
pub(crate) fn flatten(out: &Value, into: &mut Vec<Tensor>) {
    match out {
        Value::Tensor(t) => into.push(t.clone()),
        Value::Tensors(ts) => into.extend(ts.iter().cloned()),
        Value::Tuple(vs) | Value::ReturnType(_, vs) => vs.iter().for_each(|v| flatten(v, into)),
        _ => {}
    }
}
