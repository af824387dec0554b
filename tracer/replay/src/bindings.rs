//! `torch._C._replay`: what the frozen `fxvm` package (`global_function`,
//! `torch.compile`, captured training steps) reaches of the replay
//! executor — plans, recorded steps (tapes), exact-call caches, profiling.

#[rustpython_vm::pymodule(name = "torch._C._replay")]
pub(crate) mod module {
    use fxvm_vm::binding;
    use rustpython_vm::builtins::{PyListRef, PyTypeRef};
    use rustpython_vm::class::PyClassImpl;
    use rustpython_vm::convert::ToPyObject;
    use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

    /// Turns per-step timing of replayed graphs on or off.
    #[pyfunction]
    fn set_replay_profiling(on: bool) {
        crate::set_profiling(on);
    }

    /// `[(what, calls, seconds)]` of replayed graphs dropped while profiling
    /// (their function reset or gone), for the profile report.
    #[pyfunction]
    fn retired_replay_timings(vm: &VirtualMachine) -> PyObjectRef {
        crate::retired_timings(vm)
    }

    /// Starts recording a step whose tensor arguments are `inputs` (see
    /// `fxvm_ops::tape`).
    #[pyfunction]
    fn tape_start(inputs: PyListRef, vm: &VirtualMachine) -> PyResult<()> {
        let inputs = inputs
            .borrow_vec()
            .iter()
            .map(|o| {
                binding::tensor_of(o)
                    .ok_or_else(|| vm.new_type_error("a step records tensor arguments"))
            })
            .collect::<PyResult<Vec<_>>>()?;
        fxvm_ops::tape::start(&inputs).map_err(|why| vm.new_runtime_error(why))
    }

    /// Ends the recording: `(Tape, None)`, or `(None, why it cannot
    /// replay)`; `calls` labels its call steps in profiles.
    #[pyfunction]
    fn tape_finish(
        outputs: PyListRef,
        calls: Vec<String>,
        vm: &VirtualMachine,
    ) -> PyResult<(PyObjectRef, PyObjectRef)> {
        let outputs: Vec<_> = outputs
            .borrow_vec()
            .iter()
            .filter_map(binding::tensor_of)
            .collect();
        Ok(match fxvm_ops::tape::finish(&outputs) {
            Ok(tape) => (
                crate::PyTape::new(tape, &calls).to_pyobject(vm),
                vm.ctx.none(),
            ),
            Err(why) => (vm.ctx.none(), vm.ctx.new_str(why).into()),
        })
    }

    #[pyfunction]
    fn tape_abort() {
        fxvm_ops::tape::abort();
    }

    #[pyattr(name = "Tape")]
    fn tape_type(_vm: &VirtualMachine) -> PyTypeRef {
        crate::PyTape::make_static_type()
    }

    #[pyattr(name = "Plan")]
    fn plan_type(_vm: &VirtualMachine) -> PyTypeRef {
        crate::PyPlan::make_static_type()
    }

    #[pyattr(name = "ExactCalls")]
    fn exact_calls_type(_vm: &VirtualMachine) -> PyTypeRef {
        crate::PyExactCalls::make_static_type()
    }

    /// `__call__` of a compiled function (see `exact`).
    #[pyfunction]
    fn compiled_call(vm: &VirtualMachine) -> PyObjectRef {
        crate::compiled_call(vm)
    }

    /// `__call__` of `OptimizedModule` (see `exact`).
    #[pyfunction]
    fn optimized_module_call(vm: &VirtualMachine) -> PyObjectRef {
        crate::optimized_module_call(vm)
    }
}
