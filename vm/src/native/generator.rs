//! `torch.Generator`: a Python handle on one of the tensor core's random
//! generators; `torch.default_generator` is the process-wide one.

use rustpython_vm::builtins::PyType;
use rustpython_vm::function::FuncArgs;
use rustpython_vm::types::{Constructor, Representable};
use rustpython_vm::{
    AsObject, Py, PyObjectRef, PyPayload, PyRef, PyResult, VirtualMachine, pyclass,
};

use crate::tensor::random::Generator;
use crate::text::Utf8;

#[pyclass(module = "torch._C", name = "Generator")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyGenerator {
    pub generator: Generator,
}

impl PyGenerator {
    pub(crate) fn wrap(generator: Generator, vm: &VirtualMachine) -> PyObjectRef {
        PyGenerator { generator }.into_ref(&vm.ctx).into()
    }
}

/// A seed as PyTorch takes it: any int in uint64's range, negative ones
/// wrapping around as in C.
fn seed_from_py(seed: &PyObjectRef, vm: &VirtualMachine) -> PyResult<u64> {
    let int = seed.try_index(vm)?;
    let v = int.as_bigint();
    let wrapped = u64::try_from(v)
        .ok()
        .or_else(|| i64::try_from(v).ok().map(|i| i as u64));
    wrapped.ok_or_else(|| vm.new_value_error("Overflow when unpacking long long"))
}

#[pyclass(with(Constructor, Representable))]
impl PyGenerator {
    /// Reseeds and returns the generator itself, so calls chain.
    #[pymethod]
    fn manual_seed(
        zelf: PyRef<Self>,
        seed: PyObjectRef,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        zelf.generator.manual_seed(seed_from_py(&seed, vm)?);
        Ok(zelf)
    }

    #[pymethod]
    fn seed(&self) -> u64 {
        self.generator.seed()
    }

    #[pymethod]
    fn initial_seed(&self) -> u64 {
        self.generator.initial_seed()
    }

    /// The generator's state as PyTorch lays it out, a uint8 tensor.
    #[pymethod]
    fn get_state(&self, vm: &VirtualMachine) -> PyObjectRef {
        let bytes = self.generator.get_state();
        let n = bytes.len();
        super::tensor::wrap(crate::tensor::Tensor::from_vec(bytes, &[n]), vm)
    }

    /// Restores a state from `get_state` (fxvm's or PyTorch's) and returns
    /// the generator.
    #[pymethod]
    fn set_state(
        zelf: PyRef<Self>,
        state: PyRef<super::tensor::PyTensor>,
        vm: &VirtualMachine,
    ) -> PyResult<PyRef<Self>> {
        let t = state.tensor();
        if t.dtype() != crate::tensor::DType::U8 {
            return Err(vm.new_type_error("RNG state must be a torch.ByteTensor"));
        }
        use super::convert::IntoPy;
        zelf.generator.set_state(&t.to_vec::<u8>()).py(vm)?;
        Ok(zelf)
    }

    #[pygetset]
    fn device(&self, vm: &VirtualMachine) -> PyResult {
        super::classes::attr("torch", "device", vm)?.call(("cpu",), vm)
    }
}

impl Constructor for PyGenerator {
    type Args = FuncArgs;

    /// `torch.Generator(device='cpu')`: a new generator at PyTorch's default seed.
    fn py_new(_cls: &Py<PyType>, args: FuncArgs, vm: &VirtualMachine) -> PyResult<Self> {
        let device = args
            .args
            .first()
            .or_else(|| args.kwargs.get("device"))
            .map(|d| Ok(d.str(vm)?.text(vm)?.to_owned()))
            .transpose()?;
        if let Some(d) = device.filter(|d| d != "cpu") {
            return Err(vm.new_runtime_error(format!(
                "Device type {} is not supported for torch.Generator() api.",
                d.to_uppercase()
            )));
        }
        Ok(PyGenerator {
            generator: Generator::new(crate::tensor::random::generator::DEFAULT_SEED),
        })
    }
}

impl Representable for PyGenerator {
    fn repr_str(zelf: &Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!(
            "<torch._C.Generator object at {:#x}>",
            zelf.as_object().get_id()
        ))
    }
}
