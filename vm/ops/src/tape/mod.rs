//! Recording what a call computes as a tape of registry ops, to replay
//! without Python or autograd: a captured training step (`fxvm.global_function`
//! on a function that calls `backward()`).
//!
//! While a recording is on (this thread), every outermost row run — forward
//! ops from Python, the backward formulas the engine runs, ops composed of
//! rows count once — and the autograd effects that are not rows (a leaf's
//! gradient accumulated, `.grad` set, a subscript) become steps over slots.
//! Each tensor an op reads is resolved by its storage and layout: made by an
//! earlier step (a slot), a view of one (a re-striding step), a tensor that
//! existed before the recording (a parameter, a buffer, optimizer state —
//! the same handle every replay, so updates in place are seen), or a
//! constant a binding made from Python values. Anything else was computed
//! outside the registry, and the recording is refused, as it is when Python
//! reads a tensor's value (`item()`, `bool(t)`): a replay could not follow.
//! Python that must run at every replay (an optimizer's step) runs paused,
//! marked by a call step the replay hands back to its driver.

mod record;
mod replay;
#[cfg(test)]
mod tests;

use std::cell::{Cell, RefCell};

use fxvm_tensor::{Result, Tensor};

use crate::op::Op;
use crate::value::Value;
use record::Recorder;
pub use replay::{Segment, Tape};

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// Rows (or paused Python) running inside the outermost recorded one.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    static RECORDER: RefCell<Option<Recorder>> = const { RefCell::new(None) };
}

/// Whether this thread records, and the call is not nested in a recorded
/// op or paused.
fn recording_here() -> bool {
    ACTIVE.get() && DEPTH.get() == 0
}

fn with<R>(f: impl FnOnce(&mut Recorder) -> R) -> Option<R> {
    RECORDER.with_borrow_mut(|r| r.as_mut().map(f))
}

/// Whether a recording is on in this thread (what bindings check before
/// reporting a value read, so that the common path costs one load).
pub fn active() -> bool {
    ACTIVE.get()
}

/// Starts recording a call whose tensor arguments are `inputs`.
pub fn start(inputs: &[Tensor]) -> std::result::Result<(), String> {
    if ACTIVE.get() {
        return Err("a step is already being recorded".into());
    }
    RECORDER.set(Some(Recorder::new(inputs)));
    DEPTH.set(0);
    ACTIVE.set(true);
    Ok(())
}

/// Ends the recording: the tape, given the call's output tensors, or why
/// the call cannot replay.
pub fn finish(outputs: &[Tensor]) -> std::result::Result<Tape, String> {
    ACTIVE.set(false);
    let recorder = RECORDER.take().ok_or("no step is being recorded")?;
    recorder.finish(outputs)
}

/// Drops a recording (the call raised).
pub fn abort() {
    ACTIVE.set(false);
    RECORDER.set(None);
}

/// Marks the recording as one that cannot replay; the first reason stays.
pub fn refuse(reason: impl Into<String>) {
    if recording_here() {
        with(|r| r.refuse(reason.into()));
    }
}

/// Python read a tensor's value (`what`, where): a replay could not give
/// the Python that reads it the new value.
pub fn value_read(what: &str) {
    refuse(format!("it reads a tensor's value ({what})"));
}

/// Pauses the recording while Python that every replay must run again
/// runs (an optimizer step): returns the call step's number, or None when
/// nothing records here.
pub fn pause_for_call() -> Option<usize> {
    let call = if recording_here() {
        with(Recorder::call)
    } else {
        None
    };
    suspend();
    call
}

/// Marks the next op recorded as one whose keyword arguments the driver
/// gives anew at every replay (see [`Tape::live_ops`]): its number, or None
/// when nothing records here.
pub fn live_args() -> Option<usize> {
    if recording_here() {
        with(Recorder::live_args)
    } else {
        None
    }
}

/// Pauses the recording around work that is not the step's (a nested
/// capture tracing with fake values).
pub fn suspend() {
    if ACTIVE.get() {
        DEPTH.set(DEPTH.get() + 1);
    }
}

/// Ends a [`pause_for_call`] or [`suspend`].
pub fn resume() {
    if ACTIVE.get() {
        DEPTH.set(DEPTH.get().saturating_sub(1));
    }
}

/// Nesting below the outermost recorded call: dropped when it ends.
struct Nested;

impl Nested {
    fn enter() -> Nested {
        DEPTH.set(DEPTH.get() + 1);
        Nested
    }
}

impl Drop for Nested {
    fn drop(&mut self) {
        DEPTH.set(DEPTH.get() - 1);
    }
}

/// Runs `op` (through `run`), recording it when it is outermost.
pub(crate) fn run_op(
    op: &Op,
    values: Vec<Value>,
    run: impl FnOnce(Vec<Value>) -> Result<Value>,
) -> Result<Value> {
    // An op recording history as the rows it is made of records them: the
    // backward pass reads what they make.
    if DEPTH.get() > 0 || op.records_its_rows(&values) {
        return run(values);
    }
    let args = values.clone();
    let out = {
        let _nested = Nested::enter();
        run(values)?
    };
    with(|r| r.op(op, args, &out));
    Ok(out)
}

/// Runs `op`'s own kernel, recorded as one step when outermost (the part
/// of a decomposition that is the row itself, like dropout's mask).
pub(crate) fn run_plain(op: &Op, values: Vec<Value>) -> Result<Value> {
    if !ACTIVE.get() {
        return op.run_plain(values);
    }
    run_op(op, values, |values| op.run_plain(values))
}

/// Runs a subscript read `f` of `t`, recording it when outermost.
pub(crate) fn index_get(
    t: &Tensor,
    items: &[fxvm_tensor::ops::subscript::Index],
    f: impl FnOnce() -> Result<Tensor>,
) -> Result<Tensor> {
    if !recording_here() {
        return f();
    }
    let out = {
        let _nested = Nested::enter();
        f()?
    };
    with(|r| r.index_get(t, items, &out));
    Ok(out)
}

/// Runs a subscript write `f` of `src` into `t` (added in with
/// `accumulate`), recording it when outermost.
pub(crate) fn index_put(
    t: &Tensor,
    items: &[fxvm_tensor::ops::subscript::Index],
    src: &Tensor,
    accumulate: bool,
    f: impl FnOnce() -> Result<()>,
) -> Result<()> {
    if !recording_here() {
        return f();
    }
    {
        let _nested = Nested::enter();
        f()?;
    }
    with(|r| r.index_put(t, items, src, accumulate));
    Ok(())
}

/// A leaf's gradient `g` accumulated (by `accumulate`) into `var.grad`.
pub(crate) fn accumulate(
    var: &Tensor,
    g: Tensor,
    accumulate: impl FnOnce(Tensor) -> Result<()>,
) -> Result<()> {
    if !recording_here() {
        return accumulate(g);
    }
    with(|r| r.before_grad_change(var));
    let read = g.clone();
    {
        let _nested = Nested::enter();
        accumulate(g)?;
    }
    with(|r| r.accumulate(var, &read));
    Ok(())
}

/// `var.grad = grad`, as Python (`zero_grad`, `p.grad = None`) sets it.
pub fn set_grad(var: &Tensor, grad: Option<Tensor>) -> Result<()> {
    if !recording_here() {
        return var.set_grad(grad);
    }
    with(|r| r.before_grad_change(var));
    var.set_grad(grad.clone())?;
    with(|r| r.set_grad(var, grad.as_ref()));
    Ok(())
}

/// Marks the steps recorded until it drops as the backward pass's.
pub(crate) struct BackwardPass(bool);

impl BackwardPass {
    pub(crate) fn enter() -> BackwardPass {
        BackwardPass(with(|r| std::mem::replace(&mut r.in_backward, true)).unwrap_or(false))
    }
}

impl Drop for BackwardPass {
    fn drop(&mut self) {
        let was = self.0;
        with(|r| r.in_backward = was);
    }
}

/// A tensor a binding made from Python values (`x[m] = 0`'s zero): the
/// same constant at every replay.
pub fn constant(t: &Tensor) {
    if recording_here() {
        with(|r| r.constant(t));
    }
}
