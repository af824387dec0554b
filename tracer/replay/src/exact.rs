//! The common call of a compiled function, natively: positional tensors
//! whose dtypes and sizes match a captured graph exactly go straight to its
//! replay. The Python path (signature binding, guards, recapture) was two
//! frames and a loop that cost more than replaying a small MLP (~15 µs of
//! ~24); anything else still takes it.

use std::sync::atomic::{AtomicU64, Ordering};

use fxvm_tensor::DType;
use fxvm_vm::{binding, module_state};
use rustpython_vm::common::lock::PyRwLock;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::object::{Traverse, TraverseFn};
use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

/// One graph whose every input is a tensor of fixed dtype and sizes.
struct Exact {
    inputs: Vec<(DType, Vec<usize>)>,
    /// What replays the graph (a `Plan`, or a backend's callable).
    run: PyObjectRef,
    /// The `CacheEntry`, whose `calls` counts replays.
    entry: PyObjectRef,
}

/// `torch._C._replay.ExactCalls`: a compiled function's graphs that a call can
/// match by its tensors' dtypes and sizes alone.
#[pyclass(module = "torch._C._replay", name = "ExactCalls", traverse = "manual")]
#[derive(PyPayload)]
pub(crate) struct PyExactCalls {
    graphs: PyRwLock<Vec<Exact>>,
    /// The module-state epoch at which Python last checked that these
    /// graphs still fit the module (its modes, its members); at any other
    /// epoch calls take the Python path, which checks again.
    checked_at: AtomicU64,
}

impl Default for PyExactCalls {
    fn default() -> Self {
        PyExactCalls {
            graphs: PyRwLock::default(),
            checked_at: AtomicU64::new(NEVER),
        }
    }
}

/// No epoch: a table not yet checked.
const NEVER: u64 = u64::MAX;

// SAFETY: `traverse` visits each object the table owns exactly once (each
// graph's replay and entry), and `clear` moves all of them out. A table is
// owned by its compiled function, so cycles through it must be collectable.
unsafe impl Traverse for PyExactCalls {
    fn traverse(&self, f: &mut TraverseFn<'_>) {
        // Nothing else holds the lock during a collection; if something
        // does, skipping only delays freeing.
        let Some(graphs) = self.graphs.try_read() else {
            return;
        };
        for g in graphs.iter() {
            g.run.traverse(f);
            g.entry.traverse(f);
        }
    }

    fn clear(&mut self, out: &mut Vec<PyObjectRef>) {
        for g in self.graphs.get_mut().drain(..) {
            out.push(g.run);
            out.push(g.entry);
        }
    }
}

impl std::fmt::Debug for PyExactCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ExactCalls({} graphs)", self.graphs.read().len())
    }
}

impl PyExactCalls {
    /// The replay of the first graph `args` match exactly, if any.
    fn run(&self, args: &[PyObjectRef], vm: &VirtualMachine) -> PyResult<Option<PyObjectRef>> {
        if self.checked_at.load(Ordering::Acquire) != module_state::epoch() {
            return Ok(None);
        }
        let (run, entry) = {
            let graphs = self.graphs.read();
            let found = graphs.iter().find(|g| {
                g.inputs.len() == args.len()
                    && g.inputs.iter().zip(args).all(|((dtype, shape), a)| {
                        binding::plain_tensor_of(a, vm)
                            .is_some_and(|t| t.dtype() == *dtype && t.shape() == shape.as_slice())
                    })
            });
            match found {
                Some(g) => (g.run.clone(), g.entry.clone()),
                None => return Ok(None),
            }
        };
        let calls = entry.get_attr("calls", vm)?;
        entry.set_attr("calls", vm._add(&calls, vm.ctx.new_int(1).as_object())?, vm)?;
        run.call(FuncArgs::from(args.to_vec()), vm).map(Some)
    }
}

#[pyclass]
impl PyExactCalls {
    #[pyslot]
    fn slot_new(
        cls: rustpython_vm::builtins::PyTypeRef,
        _args: FuncArgs,
        vm: &VirtualMachine,
    ) -> PyResult {
        PyExactCalls::default()
            .into_ref_with_type(vm, cls)
            .map(Into::into)
    }

    /// Adds a graph: `inputs` as `[(dtype, sizes)]` in parameter order.
    #[pymethod]
    fn add(
        &self,
        inputs: Vec<PyObjectRef>,
        run: PyObjectRef,
        entry: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let inputs = inputs
            .iter()
            .map(|pair| match binding::items(pair).as_deref() {
                Some([dtype, shape]) => Ok((
                    binding::dtype_from_py(dtype, vm)?,
                    shape.try_to_value::<Vec<usize>>(vm)?,
                )),
                _ => Err(vm.new_type_error("ExactCalls.add: inputs are (dtype, sizes) pairs")),
            })
            .collect::<PyResult<_>>()?;
        self.graphs.write().push(Exact { inputs, run, entry });
        Ok(())
    }

    /// Forgets every graph (the function was reset or runs eagerly now, or
    /// its module changed and the graphs that still fit are added again).
    #[pymethod]
    fn clear(&self) {
        self.graphs.write().clear();
        self.checked_at.store(NEVER, Ordering::Release);
    }

    /// Records that the graphs fit the module at module-state `epoch`.
    #[pymethod]
    fn checked(&self, epoch: u64) {
        self.checked_at.store(epoch, Ordering::Release);
    }
}

/// `__call__` for a compiled function: the exact match natively while
/// replays are not being profiled, else its Python `_call`.
pub(crate) fn compiled_call(vm: &VirtualMachine) -> PyObjectRef {
    let call = |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        let zelf = take_self(&mut args, vm)?;
        dispatch(&zelf, args, vm)
    };
    binding::method_descriptor(
        "__call__",
        "Replays the captured graph the arguments match, else captures.",
        call,
        vm,
    )
}

/// `__call__` for `OptimizedModule`: without forward hooks on the wrapper,
/// straight to its compiled function; with hooks, its Python `_call`.
pub(crate) fn optimized_module_call(vm: &VirtualMachine) -> PyObjectRef {
    let call = |mut args: FuncArgs, vm: &VirtualMachine| -> PyResult {
        let zelf = take_self(&mut args, vm)?;
        if binding::without_call_hooks(&zelf, vm)?
            && let Some(dict) = zelf.dict()
            && let Some(compiled) = dict.get_item_opt("_fxvm_compiled", vm)?
        {
            return dispatch(&compiled, args, vm);
        }
        vm.call_method(&zelf, "_call", args)
    };
    binding::method_descriptor(
        "__call__",
        "Calls the compiled module (through its hooks when it has any).",
        call,
        vm,
    )
}

/// A compiled function's call: its exact table first, then `_call`.
fn dispatch(compiled: &PyObjectRef, args: FuncArgs, vm: &VirtualMachine) -> PyResult {
    if args.kwargs.is_empty()
        && !super::profiling()
        && let Some(table) = compiled
            .dict()
            .and_then(|d| d.get_item_opt("_fxvm_exact", vm).ok().flatten())
        && let Some(table) = table.downcast_ref::<PyExactCalls>()
        && let Some(result) = table.run(&args.args, vm)?
    {
        return Ok(result);
    }
    vm.call_method(compiled, "_call", args)
}

fn take_self(args: &mut FuncArgs, vm: &VirtualMachine) -> PyResult<PyObjectRef> {
    if args.args.is_empty() {
        return Err(vm.new_type_error("descriptor '__call__' needs an argument"));
    }
    Ok(args.args.remove(0))
}
