//! `_fxvm_numpy.PCG64`: the engine behind `numpy.random.default_rng()`'s
//! `Generator` (its draws are bit-exact in `fxvm_numpy::pcg64`; the
//! package's `numpy/random/_generator.py` gives them numpy's API).

use rustpython_vm::builtins::PyType;
use rustpython_vm::types::Constructor;
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};
use std::sync::Mutex;

use fxvm_numpy::pcg64::{Pcg64, SeedSequence};

use super::tensor::wrap;
use crate::tensor::Tensor;

#[pyclass(module = "_fxvm_numpy", name = "PCG64")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyPcg64 {
    rng: Mutex<Pcg64>,
}

impl PyPcg64 {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pcg64> {
        self.rng.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn draw<T: fxvm_tensor::storage::Element>(
        &self,
        n: usize,
        mut one: impl FnMut(&mut Pcg64) -> T,
        vm: &VirtualMachine,
    ) -> PyObjectRef {
        let mut rng = self.lock();
        let values: Vec<T> = (0..n).map(|_| one(&mut rng)).collect();
        wrap(Tensor::from_vec(values, &[n]), vm)
    }
}

impl Constructor for PyPcg64 {
    /// The seed sequence's entropy words and spawn key words.
    type Args = (Vec<u32>, Vec<u32>);

    fn py_new(
        _cls: &Py<PyType>,
        (entropy, spawn_key): Self::Args,
        _vm: &VirtualMachine,
    ) -> PyResult<Self> {
        Ok(PyPcg64 {
            rng: Mutex::new(Pcg64::new(&SeedSequence::new(&entropy, &spawn_key))),
        })
    }
}

#[pyclass(with(Constructor))]
impl PyPcg64 {
    /// `n` doubles in [0, 1), a float64 tensor.
    #[pymethod]
    fn doubles(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        self.draw(n, Pcg64::next_double, vm)
    }

    /// `n` floats in [0, 1), a float32 tensor.
    #[pymethod]
    fn floats(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        self.draw(n, Pcg64::next_float, vm)
    }

    /// `n` standard normal samples (the ziggurat), a float64 tensor.
    #[pymethod]
    fn normals(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        self.draw(n, Pcg64::standard_normal, vm)
    }

    /// `n` integers `low + [0, range]`, an int64 tensor (two's complement
    /// covers a range spanning all of int64).
    #[pymethod]
    fn bounded(&self, low: i64, range: u64, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        self.draw(n, |rng| low.wrapping_add(rng.bounded(range) as i64), vm)
    }

    /// `n` raw 64-bit draws (`random_raw`), as Python ints.
    #[pymethod]
    fn raw(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        let mut rng = self.lock();
        let values = (0..n)
            .map(|_| vm.ctx.new_int(rng.next_u64()).into())
            .collect();
        vm.ctx.new_list(values).into()
    }

    /// The order `permutation(n)` puts `0..n` in, an int64 tensor.
    #[pymethod]
    fn shuffled_order(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        let order = self.lock().shuffled_order(n);
        wrap(Tensor::from_vec(order, &[n]), vm)
    }

    /// `choice(population, n, replace=False, shuffle=shuffle)`'s indices.
    #[pymethod]
    fn sample(&self, population: u64, n: usize, shuffle: bool, vm: &VirtualMachine) -> PyObjectRef {
        let picks = self
            .lock()
            .sample_without_replacement(population, n, shuffle);
        wrap(Tensor::from_vec(picks, &[n]), vm)
    }

    /// `(state, inc, buffered 32-bit half or None)`.
    #[pymethod]
    fn get_state(&self, vm: &VirtualMachine) -> PyObjectRef {
        let (state, inc, buffered) = self.lock().state();
        let buffered = buffered.map_or_else(|| vm.ctx.none(), |b| vm.ctx.new_int(b).into());
        vm.ctx
            .new_tuple(vec![
                vm.ctx.new_int(state).into(),
                vm.ctx.new_int(inc).into(),
                buffered,
            ])
            .into()
    }

    #[pymethod]
    fn set_state(&self, state: u128, inc: u128, buffered: Option<u32>) {
        *self.lock() = Pcg64::from_state(state, inc, buffered);
    }
}
