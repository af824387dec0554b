//! `torch._C._replay.Tape`: a recorded step (see `fxvm_ops::tape`) as Python
//! replays it — the tape runs natively, and at each call step the driver's
//! Python callable for it runs (an optimizer's `step`).

use fxvm_ops::tape::{Segment, Tape};
use fxvm_vm::binding;
use rustpython_vm::builtins::PyListRef;
use rustpython_vm::{PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use super::profile::{Timings, profiling};
use super::timing_rows;

#[pyclass(module = "torch._C._replay", name = "Tape")]
#[derive(PyPayload)]
pub(crate) struct PyTape {
    tape: Tape,
    /// The op of each live-argument set (see `Tape::live_ops`).
    live_ops: Vec<&'static fxvm_ops::Op>,
    timings: Timings,
}

impl std::fmt::Debug for PyTape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Tape({} steps)", self.tape.len())
    }
}

/// The tensors of a Python list (anything else refused).
fn tensors(list: &PyListRef, vm: &VirtualMachine) -> PyResult<Vec<fxvm_tensor::Tensor>> {
    list.borrow_vec()
        .iter()
        .map(|o| {
            binding::tensor_of(o).ok_or_else(|| vm.new_type_error("a tape takes and gives tensors"))
        })
        .collect()
}

impl PyTape {
    /// A tape whose call steps are labelled `calls` in profiles.
    pub(crate) fn new(tape: Tape, calls: &[String]) -> PyTape {
        let labels = (0..tape.len())
            .map(|i| match tape.call_at(i) {
                Some(k) => calls.get(k).cloned().unwrap_or_else(|| "python".into()),
                None => tape.label(i),
            })
            .collect();
        PyTape {
            live_ops: tape.live_ops(),
            tape,
            timings: Timings::new(labels),
        }
    }
}

impl PyTape {
    /// Each live op's keyword arguments, from its provider, as values of
    /// its parameters' types.
    fn live_values(
        &self,
        providers: &PyListRef,
        vm: &VirtualMachine,
    ) -> PyResult<Vec<Vec<(usize, fxvm_ops::Value)>>> {
        let providers = providers.borrow_vec().to_vec();
        let ops = &self.live_ops;
        if providers.len() != ops.len() {
            return Err(vm.new_type_error(format!(
                "the tape has {} live ops, {} providers given",
                ops.len(),
                providers.len()
            )));
        }
        ops.iter()
            .zip(providers)
            .map(|(op, provider)| {
                let kwargs = binding::kwargs(&provider.call((), vm)?, vm);
                kwargs
                    .into_iter()
                    .map(|(name, obj)| {
                        let i = op.schema.position(&name).ok_or_else(|| {
                            vm.new_type_error(format!("{}() has no argument '{name}'", op.name()))
                        })?;
                        let value = binding::convert(&op.schema.params[i].ty, &obj, vm)?
                            .ok_or_else(|| {
                                vm.new_type_error(format!(
                                    "{}(): argument '{name}' has the wrong type",
                                    op.name()
                                ))
                            })?;
                        Ok((i, value))
                    })
                    .collect()
            })
            .collect()
    }
}

#[pyclass]
impl PyTape {
    /// Why a call with these tensor arguments cannot replay, or None.
    #[pymethod]
    fn violation(&self, inputs: PyListRef, vm: &VirtualMachine) -> PyResult<Option<String>> {
        Ok(self.tape.violation(&tensors(&inputs, vm)?))
    }

    /// Replays with these tensor arguments (checked by `violation`),
    /// calling `calls[k]()` at call step `k`, the live ops taking the
    /// keyword arguments `live[k]()` gives: the output tensors.
    #[pymethod]
    fn run(
        &self,
        inputs: PyListRef,
        calls: PyListRef,
        live: PyListRef,
        vm: &VirtualMachine,
    ) -> PyResult<Vec<PyObjectRef>> {
        let calls = calls.borrow_vec().to_vec();
        if calls.len() != self.tape.calls() {
            return Err(vm.new_type_error(format!(
                "the tape makes {} calls, {} given",
                self.tape.calls(),
                calls.len()
            )));
        }
        let mut replay = self
            .tape
            .replay(tensors(&inputs, vm)?, self.live_values(&live, vm)?);
        let timed = profiling();
        let mut record = |i: usize, nanos: u64| self.timings.record(i, nanos);
        loop {
            let segment = if timed {
                replay.resume(Some(&mut record))
            } else {
                replay.resume(None)
            };
            match segment.map_err(|e| binding::error_to_py(e, vm))? {
                Segment::Call { call, step } => {
                    let t0 = timed.then(std::time::Instant::now);
                    calls[call].call((), vm)?;
                    if let Some(t0) = t0 {
                        self.timings.record(step, t0.elapsed().as_nanos() as u64);
                    }
                }
                Segment::Done(outs) => {
                    return Ok(outs
                        .into_iter()
                        .map(|t| binding::wrap_tensor(t, vm))
                        .collect());
                }
            }
        }
    }

    /// `[(step, what, calls, seconds)]` per step timed while profiling.
    #[pymethod]
    fn timings(&self, vm: &VirtualMachine) -> PyObjectRef {
        timing_rows(&self.timings, |i| i.to_string(), vm)
    }

    /// The steps, one line each, as profiles name them.
    #[pymethod]
    fn describe(&self) -> String {
        self.timings.labels().join("\n")
    }

    /// How many steps the tape has.
    #[pygetset]
    fn steps(&self) -> usize {
        self.tape.len()
    }
}
