//! `_fxvm_numpy`: the native half of the frozen `numpy` package — numpy's
//! legacy random engine (`RandomState`'s streams) and the shortest digits
//! its printing starts from. Arrays cross as `torch.Tensor`s: the package's
//! `ndarray` keeps one over the same storage.

pub(crate) use _numpy::module_def;

use rustpython_vm::builtins::PyType;
use rustpython_vm::types::Constructor;
use rustpython_vm::{Py, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};
use std::sync::Mutex;

use fxvm_numpy::distributions::Dist;
use fxvm_numpy::legacy::{IntWidth, RandomState};
use fxvm_tensor::random::mt19937::WORDS;

use super::tensor::{PyTensor, wrap};
use crate::tensor::Tensor;

/// The engine behind one `numpy.random.RandomState`.
#[pyclass(module = "_fxvm_numpy", name = "MT19937")]
#[derive(Debug, PyPayload)]
struct PyMt19937 {
    state: Mutex<RandomState>,
}

impl PyMt19937 {
    fn lock(&self) -> std::sync::MutexGuard<'_, RandomState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A seed: an int in `[0, 2**32)` (`init_genrand`) or a list of such
/// ints (`init_by_array`); the Python side checks ranges and messages.
fn seeded(seed: &PyObjectRef, vm: &VirtualMachine) -> PyResult<RandomState> {
    if let Ok(words) = seed.try_to_value::<Vec<u32>>(vm) {
        return Ok(RandomState::from_key(&words));
    }
    Ok(RandomState::new(seed.try_to_value::<u32>(vm)?))
}

impl Constructor for PyMt19937 {
    type Args = PyObjectRef;

    fn py_new(_cls: &Py<PyType>, seed: PyObjectRef, vm: &VirtualMachine) -> PyResult<Self> {
        Ok(PyMt19937 {
            state: Mutex::new(seeded(&seed, vm)?),
        })
    }
}

fn width(bits: u32, vm: &VirtualMachine) -> PyResult<IntWidth> {
    Ok(match bits {
        1 => IntWidth::Bool,
        8 => IntWidth::W8,
        16 => IntWidth::W16,
        32 => IntWidth::W32,
        64 => IntWidth::W64,
        _ => return Err(vm.new_value_error(format!("no {bits}-bit integer draws"))),
    })
}

#[pyclass(with(Constructor))]
impl PyMt19937 {
    #[pymethod]
    fn seed(&self, seed: PyObjectRef, vm: &VirtualMachine) -> PyResult<()> {
        *self.lock() = seeded(&seed, vm)?;
        Ok(())
    }

    /// `n` doubles in [0, 1), a float64 tensor.
    #[pymethod]
    fn doubles(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        wrap(Tensor::from_vec(self.lock().doubles(n), &[n]), vm)
    }

    /// `n` standard normal samples (the polar method, with its cache).
    #[pymethod]
    fn gaussians(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        wrap(Tensor::from_vec(self.lock().gaussians(n), &[n]), vm)
    }

    /// `n` offsets uniform in `[0, range]` drawn at `bits` (1, 8, 16, 32
    /// or 64), as an int64 tensor holding their bits (the caller adds the
    /// low bound in wrapping int64 arithmetic).
    #[pymethod]
    fn bounded(&self, range: u64, n: usize, bits: u32, vm: &VirtualMachine) -> PyResult {
        let draws = self.lock().bounded(range, n, width(bits, vm)?);
        let bits: Vec<i64> = draws.into_iter().map(|k| k as i64).collect();
        Ok(wrap(Tensor::from_vec(bits, &[n]), vm))
    }

    /// `n` samples of numpy's distribution `kind` (its `RandomState`
    /// method name), as float64; `params` holds each parameter as one value
    /// or `n` values (already broadcast).
    #[pymethod]
    fn sample(
        &self,
        kind: String,
        params: Vec<Vec<f64>>,
        n: usize,
        vm: &VirtualMachine,
    ) -> PyResult {
        if params
            .iter()
            .any(|p| p.is_empty() || (p.len() != 1 && p.len() != n))
        {
            return Err(vm.new_value_error("each parameter needs one value or one per sample"));
        }
        let at = |i: usize| -> Vec<f64> {
            params
                .iter()
                .map(|p| if p.len() == 1 { p[0] } else { p[i] })
                .collect()
        };
        // Parsed up front, so an unknown name or arity fails even for n = 0,
        // and again per sample only when a parameter varies.
        let first = Dist::parse(&kind, &at(0)).map_err(|e| vm.new_value_error(e))?;
        let varies = params.iter().any(|p| p.len() > 1);
        let mut rs = self.lock();
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let dist = if varies {
                Dist::parse(&kind, &at(i)).map_err(|e| vm.new_value_error(e))?
            } else {
                first
            };
            out.push(rs.sample(dist));
        }
        Ok(wrap(Tensor::from_vec(out, &[n]), vm))
    }

    /// `count` multinomial samples of `n` trials over `pvals`, an int64
    /// tensor `[count, len(pvals)]`.
    #[pymethod]
    fn multinomial(
        &self,
        n: i64,
        pvals: Vec<f64>,
        count: usize,
        vm: &VirtualMachine,
    ) -> PyObjectRef {
        let d = pvals.len();
        let mut rs = self.lock();
        let rows: Vec<i64> = (0..count).flat_map(|_| rs.multinomial(n, &pvals)).collect();
        wrap(Tensor::from_vec(rows, &[count, d]), vm)
    }

    /// The order a legacy `shuffle` of `n` items leaves them in: item `k`
    /// of the result is the index of the item that lands at `k`.
    #[pymethod]
    fn shuffled_order(&self, n: usize, vm: &VirtualMachine) -> PyObjectRef {
        let mut order: Vec<i64> = (0..n as i64).collect();
        let swaps = self.lock().shuffle_swaps(n);
        for (i, j) in (1..n).rev().zip(swaps) {
            order.swap(i, j);
        }
        wrap(Tensor::from_vec(order, &[n]), vm)
    }

    /// `(key, pos, gauss)`: the 624 words as a uint32-valued int64 tensor,
    /// the read position, and the cached normal sample or None.
    #[pymethod]
    fn get_state(&self, vm: &VirtualMachine) -> PyObjectRef {
        let rs = self.lock();
        let (words, pos, gauss) = rs.state();
        let key: Vec<i64> = words.iter().map(|&w| w as i64).collect();
        let key = wrap(Tensor::from_vec(key, &[WORDS]), vm);
        vm.new_tuple((key, pos, gauss)).into()
    }

    #[pymethod]
    fn set_state(
        &self,
        key: rustpython_vm::PyRef<PyTensor>,
        pos: usize,
        gauss: Option<f64>,
        vm: &VirtualMachine,
    ) -> PyResult<()> {
        let t = key.tensor();
        let words: Vec<i64> = t.to_dtype(crate::tensor::DType::I64).to_vec::<i64>();
        let words: [u32; WORDS] = words
            .iter()
            .map(|&w| w as u32)
            .collect::<Vec<_>>()
            .try_into()
            .map_err(|_| vm.new_value_error("state must be 624 elements"))?;
        if pos > WORDS {
            return Err(vm.new_value_error("pos must be in [0, 624]"));
        }
        *self.lock() = RandomState::from_state(words, pos, gauss);
        Ok(())
    }
}

/// `numpy.<name>` when numpy is already imported (an object cannot be a
/// numpy value otherwise, so torch never imports numpy to ask).
fn numpy_class(name: &'static str, vm: &VirtualMachine) -> Option<PyObjectRef> {
    let modules = vm.sys_module.get_attr("modules", vm).ok()?;
    // A miss is answered without raising (and discarding) a KeyError.
    let numpy = modules
        .downcast_ref::<rustpython_vm::builtins::PyDict>()?
        .get_item_opt("numpy", vm)
        .ok()??;
    numpy.get_attr(name, vm).ok()
}

/// Whether `obj` is an instance of a Python-defined class that is a
/// subclass of `numpy.<name>`. Builtins and tensors are answered without a
/// look-up, so torch's hot paths pay nothing for this.
fn is_numpy(obj: &PyObjectRef, name: &'static str, vm: &VirtualMachine) -> bool {
    let class = obj.class();
    if !class
        .slots
        .flags
        .has_feature(rustpython_vm::types::PyTypeFlags::HEAPTYPE)
        || obj.downcast_ref::<PyTensor>().is_some()
    {
        return false;
    }
    numpy_class(name, vm)
        .and_then(|c| c.downcast::<PyType>().ok())
        .is_some_and(|c| class.fast_issubclass(&c))
}

/// A numpy scalar (`np.float32(1.5)`, `np.int64(3)`) as the number PyTorch
/// reads it as; None for anything else.
pub(crate) fn scalar_of(obj: &PyObjectRef, vm: &VirtualMachine) -> Option<crate::tensor::Scalar> {
    if !is_numpy(obj, "generic", vm) {
        return None;
    }
    let value = vm.call_method(obj, "item", ()).ok()?;
    super::convert::scalar(&value, vm)
}

/// The tensor over a numpy array's elements (shared, as
/// `torch.from_numpy` gives it); None when `obj` is not an array.
pub(crate) fn array_tensor(obj: &PyObjectRef, vm: &VirtualMachine) -> Option<PyResult<Tensor>> {
    if !is_numpy(obj, "ndarray", vm) {
        return None;
    }
    Some(vm.call_method(obj, "__fxvm_tensor__", ()).and_then(
        |t| match t.downcast_ref::<PyTensor>() {
            Some(t) => Ok(t.tensor()),
            None => Err(vm.new_type_error("ndarray.__fxvm_tensor__ must return a tensor")),
        },
    ))
}

#[rustpython_vm::pymodule(name = "_fxvm_numpy")]
mod _numpy {
    use rustpython_vm::VirtualMachine;
    use rustpython_vm::class::PyClassImpl;

    use fxvm_numpy::digits::{Width, shortest};

    #[pyattr(name = "MT19937")]
    fn mt19937_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        // Its methods return tensors, even before `torch` is imported.
        crate::native::tensor::PyTensor::make_static_type();
        super::PyMt19937::make_static_type()
    }

    #[pyattr(name = "PCG64")]
    fn pcg64_type(_vm: &VirtualMachine) -> rustpython_vm::builtins::PyTypeRef {
        crate::native::tensor::PyTensor::make_static_type();
        crate::native::numpy_pcg64::PyPcg64::make_static_type()
    }

    /// The elements of `t` in row-major order as little-endian bytes
    /// (`ndarray.tobytes`, the body of a `.npy` file).
    #[pyfunction]
    fn tensor_bytes(
        t: rustpython_vm::PyRef<crate::native::tensor::PyTensor>,
        vm: &VirtualMachine,
    ) -> rustpython_vm::PyObjectRef {
        // `contiguous` owns exactly the view's elements, in order.
        vm.ctx
            .new_bytes(t.tensor().contiguous().storage_bytes())
            .into()
    }

    /// The values of `t` sorted along `dim`, NaN last (`np.sort`): the
    /// values without the indices `torch.sort` also computes.
    #[pyfunction]
    fn sort_values(
        t: rustpython_vm::PyRef<crate::native::tensor::PyTensor>,
        dim: i64,
        vm: &VirtualMachine,
    ) -> rustpython_vm::PyResult {
        use crate::native::convert::IntoPy;
        let sorted = crate::tensor::ops::sort::sort_values(&t.tensor(), dim).py(vm)?;
        Ok(crate::native::tensor::wrap(sorted, vm))
    }

    /// A 1-d tensor of `dtype` decoded from `data` (a copy; `big_endian`
    /// for `>` byte orders).
    #[pyfunction]
    fn tensor_from_bytes(
        data: rustpython_vm::function::ArgBytesLike,
        dtype: rustpython_vm::PyRef<crate::native::dtype::PyDType>,
        big_endian: bool,
        vm: &VirtualMachine,
    ) -> rustpython_vm::PyResult {
        use crate::native::convert::IntoPy;
        let dtype = dtype.dtype(vm)?;
        let t = data
            .with_ref(|b| crate::tensor::Tensor::from_bytes(dtype, b, big_endian))
            .py(vm)?;
        Ok(crate::native::tensor::wrap(t, vm))
    }

    /// `count` elements of `dtype` at byte `offset` of the file at `path`,
    /// read in place from a private map of it (`np.memmap` in modes `r`
    /// and `c`: pages load as touched; writes copy, never reach the file).
    /// `count` None takes the rest of the file. The host's file policy
    /// decides whether the file may be read.
    #[pyfunction]
    fn map_file(
        path: String,
        dtype: rustpython_vm::PyRef<crate::native::dtype::PyDType>,
        offset: usize,
        count: Option<usize>,
        vm: &VirtualMachine,
    ) -> rustpython_vm::PyResult {
        use crate::native::convert::IntoPy;
        let dtype = dtype.dtype(vm)?;
        crate::policy::check_read(vm, "numpy.memmap", &path)?;
        let io_error = |e: std::io::Error| vm.new_os_error(format!("{path}: {e}"));
        let file = std::fs::File::open(&path).map_err(io_error)?;
        let data = fxvm_checkpoint::source::map(&file).map_err(io_error)?;
        let len = (*data).as_ref().len();
        let size = dtype.itemsize();
        let available = len.saturating_sub(offset);
        let count = match count {
            Some(n) => n,
            None if available % size != 0 => {
                return Err(vm.new_value_error(
                    "Size of available data is not a multiple of the data-type size.",
                ));
            }
            None => available / size,
        };
        let end = count.checked_mul(size).and_then(|n| n.checked_add(offset));
        if offset > len || end.is_none_or(|end| end > len) {
            return Err(vm.new_value_error("mmap length is greater than file size"));
        }
        let t = match crate::tensor::Tensor::borrow_bytes(dtype, &data, offset, count) {
            Some(t) => t,
            // Misaligned or bool elements are decoded into a buffer instead.
            None => {
                let bytes = &(*data).as_ref()[offset..offset + count * size];
                crate::tensor::Tensor::from_bytes(dtype, bytes, false).py(vm)?
            }
        };
        Ok(crate::native::tensor::wrap(t, vm))
    }

    /// The shortest scientific digits of `x` that read back as the same
    /// float of `bits` (16, 32 or 64) bits: `1.5e-3`.
    #[pyfunction]
    fn shortest_digits(x: f64, bits: u32, vm: &VirtualMachine) -> rustpython_vm::PyResult<String> {
        let width = match bits {
            16 => Width::F16,
            32 => Width::F32,
            64 => Width::F64,
            _ => return Err(vm.new_value_error(format!("no {bits}-bit floats"))),
        };
        Ok(shortest(x, width))
    }
}
