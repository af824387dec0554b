//! One op: its schema, where PyTorch exposes it, and its kernel.

use std::sync::Arc;

use fxvm_tensor::{Result, TensorError};

use crate::autograd::Derivative;
use crate::schema::Schema;
use crate::value::{FromArgs, IntoValue, Value};

/// Where PyTorch exposes an op, which also decides its `__module__` (graphs
/// print call targets by module and name) and, for functions PyTorch
/// writes in Python, the form in which `__torch_function__` receives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// `torch.X`, a builtin whose `__module__` is `torch`.
    Torch,
    /// `torch.X` written in Python in `torch/functional.py`; graphs print
    /// `torch.functional.X`. The first `n` parameters reach
    /// `__torch_function__` positionally, the others by keyword.
    TorchFunctional(usize),
    /// `Tensor.X`.
    Method,
    /// `torch.nn.functional.X` is the very object `torch.X`.
    FunctionalIsTorch,
    /// `torch.nn.functional.X` is a builtin of `torch._C._nn`.
    FunctionalNative,
    /// `torch.nn.functional.<alias>` is this op's `torch._C._nn` builtin
    /// under another name (`F.logsigmoid` is `torch._C._nn.log_sigmoid`).
    FunctionalNativeAs(&'static str),
    /// `torch.linalg.X`, the builtin `torch._C._linalg.linalg_X` (graphs
    /// print that name).
    Linalg,
    /// `torch.nn.functional.X` is written in Python in
    /// `torch/nn/functional.py`: the first `n` parameters reach
    /// `__torch_function__` positionally, the others by keyword with their
    /// defaults filled in (traced graphs record exactly this form).
    Functional(usize),
}

impl Place {
    /// The module that defines the function at this place (`None` for methods).
    pub fn module(self) -> Option<&'static str> {
        match self {
            Place::Torch | Place::FunctionalIsTorch => Some("torch"),
            Place::TorchFunctional(_) => Some("torch.functional"),
            Place::Method => None,
            Place::FunctionalNative | Place::FunctionalNativeAs(_) => Some("torch._C._nn"),
            Place::Linalg => Some("torch._C._linalg"),
            Place::Functional(_) => Some("torch.nn.functional"),
        }
    }

    /// How many parameters a Python-level function passes positionally to
    /// `__torch_function__` (`None`: builtins pass the call as made).
    pub fn python_form(self) -> Option<usize> {
        match self {
            Place::TorchFunctional(n) | Place::Functional(n) => Some(n),
            _ => None,
        }
    }

    pub fn is_torch(self) -> bool {
        matches!(self, Place::Torch | Place::TorchFunctional(_))
    }

    pub fn is_functional(self) -> bool {
        matches!(
            self,
            Place::FunctionalIsTorch
                | Place::FunctionalNative
                | Place::FunctionalNativeAs(_)
                | Place::Functional(_)
        )
    }
}

/// Common exposures.
pub const T: &[Place] = &[Place::Torch];
pub const M: &[Place] = &[Place::Method];
pub const TM: &[Place] = &[Place::Torch, Place::Method];
pub const NN: &[Place] = &[Place::FunctionalNative];

pub type Kernel = Arc<dyn Fn(Vec<Value>) -> Result<Value> + Send + Sync>;

pub struct Op {
    pub schema: Schema,
    pub places: &'static [Place],
    /// Works on every dtype as stored (views, indexing, conversions,
    /// creation); other ops compute narrow dtypes wide (see `narrow`).
    dtype_generic: bool,
    kernel: Kernel,
    /// How the output's sizes follow from the inputs' (see `meta`).
    pub(crate) meta: Option<crate::meta::Rule>,
    /// How gradients flow back through the op (`None`: not declared yet;
    /// a backward through it raises PyTorch's "not implemented").
    pub(crate) derivative: Option<Derivative>,
    /// Outputs that never require grad though they are floating point
    /// (PyTorch's `output_differentiability`: attention's log-sum-exp).
    pub(crate) nondiff_outputs: &'static [usize],
    /// A creation op's `requires_grad=` parameter.
    requires_grad: Option<usize>,
    /// The dtypes PyTorch's kernel takes, when not all (see `kernels`).
    kernel_dtypes: Option<crate::kernels::KernelDTypes>,
    /// What PyTorch's Python-written function reads of its arguments, in
    /// order, before it calls the kernel (`target.size()`): a non-tensor
    /// there is its AttributeError.
    pub python_reads: Vec<PythonRead>,
}

/// One attribute read of [`Op::python_reads`].
#[derive(Clone, Copy, Debug)]
pub struct PythonRead {
    /// The parameter whose argument is read.
    pub param: usize,
    pub attr: &'static str,
    /// Made only when this parameter's argument is None (or not given).
    pub when_none: Option<usize>,
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Op")
            .field("name", &self.schema.name)
            .field("places", &self.places)
            .finish()
    }
}

/// A row: the declaration, where it appears, and a kernel over the typed
/// parameters (a tuple in schema order). Panics if the tuple does not match
/// the declaration — the table is static, and building it is tested.
pub fn op<A: FromArgs + 'static, R: IntoValue + 'static>(
    decl: &'static str,
    places: &'static [Place],
    kernel: impl Fn(A) -> Result<R> + Send + Sync + 'static,
) -> Op {
    let schema = Schema::parse(decl);
    if let Err(why) = A::check(&schema) {
        panic!("{decl}: the kernel's arguments do not match the declaration: {why}");
    }
    Op {
        requires_grad: schema.position("requires_grad"),
        schema,
        places,
        dtype_generic: false,
        meta: None,
        derivative: None,
        nondiff_outputs: &[],
        kernel_dtypes: None,
        python_reads: Vec::new(),
        kernel: Arc::new(move |values| kernel(A::from_args(values)).map(IntoValue::into_value)),
    }
}

impl Op {
    pub fn name(&self) -> &'static str {
        self.schema.name
    }

    /// Marks an op that works on every dtype as stored.
    pub(crate) fn dtype_generic(mut self) -> Op {
        self.dtype_generic = true;
        self
    }

    /// Gives the op its shape rule.
    pub(crate) fn meta(mut self, rule: crate::meta::Rule) -> Op {
        self.meta = Some(rule);
        self
    }

    /// Gives the op its derivative.
    pub(crate) fn grad(mut self, d: Derivative) -> Op {
        self.derivative = Some(d);
        self
    }

    /// Marks outputs that never require grad (see `Op::nondiff_outputs`).
    pub(crate) fn nondiff_outputs(mut self, outputs: &'static [usize]) -> Op {
        self.nondiff_outputs = outputs;
        self
    }

    /// Gives the op its derivative, if it has one.
    pub(crate) fn grad_opt(self, d: Option<Derivative>) -> Op {
        match d {
            Some(d) => self.grad(d),
            None => self,
        }
    }

    /// Marks an op whose kernel calls rows (through `autograd::ops`): it
    /// records as they do, and each row narrows dtypes for itself.
    pub(crate) fn composite(mut self) -> Op {
        self.dtype_generic = true;
        self.grad(Derivative::Composite)
    }

    /// Refuses calls that give every parameter of `given` and none of
    /// `missing` (see `Schema::refused`).
    pub(crate) fn refuses(mut self, given: &[&str], missing: &[&str]) -> Op {
        let positions = |names: &[&str]| -> Vec<usize> {
            names.iter().map(|name| self.param_index(name)).collect()
        };
        let refused = crate::schema::Refused {
            given: positions(given),
            missing: positions(missing),
        };
        self.schema.refused.push(refused);
        self
    }

    /// Takes only `dtypes` (by its first tensor argument), as PyTorch's
    /// `kernel` does; other dtypes raise its NotImplementedError.
    pub(crate) fn kernel_dtypes(
        mut self,
        kernel: &'static str,
        dtypes: &'static [fxvm_tensor::DType],
    ) -> Op {
        self.kernel_dtypes = Some(crate::kernels::KernelDTypes { kernel, dtypes });
        self
    }

    /// The attributes PyTorch's Python function reads of its arguments
    /// first, in order (see `Op::python_reads`).
    pub(crate) fn python_reads(mut self, reads: &[(&str, &'static str)]) -> Op {
        for &(param, attr) in reads {
            let param = self.param_index(param);
            self.python_reads.push(PythonRead {
                param,
                attr,
                when_none: None,
            });
        }
        self
    }

    /// A read PyTorch's Python function makes only when the argument
    /// `when_none` is None (`input.dim()` when softmax's `dim` is not given).
    pub(crate) fn python_read_when_none(
        mut self,
        when_none: &str,
        param: &str,
        attr: &'static str,
    ) -> Op {
        let read = PythonRead {
            param: self.param_index(param),
            attr,
            when_none: Some(self.param_index(when_none)),
        };
        self.python_reads.push(read);
        self
    }

    /// The index of a parameter a row's builder names; the table is static,
    /// so a name the declaration lacks is a bug.
    fn param_index(&self, name: &str) -> usize {
        self.schema
            .position(name)
            .unwrap_or_else(|| panic!("{}: no parameter {name}", self.schema.decl))
    }

    /// Marks an op whose outputs never require grad.
    pub(crate) fn nondiff(self) -> Op {
        self.grad(Derivative::None)
    }

    /// The op's derivative, if declared.
    pub fn derivative(&self) -> Option<&Derivative> {
        self.derivative.as_ref()
    }

    /// Runs the kernel on values bound to every parameter, in order, each
    /// of its declared type (bindings guarantee it); with grad mode on and
    /// an input that requires grad, the outputs get their history.
    pub fn run(&self, values: Vec<Value>) -> Result<Value> {
        if let Some(refused) = self.kernel_dtypes.and_then(|k| k.check(&values).err()) {
            // PyTorch validates the arguments before it dispatches on the
            // dtype: a bad argument's own error comes first. An op that
            // writes into its input is refused before it writes.
            if self.schema.mutated().is_some() {
                return Err(refused);
            }
            self.run_checked(values)?;
            return Err(refused);
        }
        self.run_checked(values)
    }

    /// [`Op::run`] once the dtype is known to have a kernel.
    fn run_checked(&self, values: Vec<Value>) -> Result<Value> {
        if crate::tape::active() {
            return crate::tape::run_op(self, values, |values| self.run_recorded(values));
        }
        self.run_recorded(values)
    }

    /// [`Op::run`] below a tape: with history when the inputs want it.
    fn run_recorded(&self, values: Vec<Value>) -> Result<Value> {
        let wants_grad = self
            .requires_grad
            .is_some_and(|i| matches!(values[i], Value::Bool(true)));
        let out = if crate::autograd::recording(&values) {
            crate::autograd::record(self, values)?
        } else if let Some(base) = crate::autograd::view_candidate(self, &values) {
            let out = self.run_plain(values)?;
            crate::autograd::mark_views(&base, &out);
            out
        } else {
            self.run_plain(values)?
        };
        if wants_grad && let Value::Tensor(t) = &out {
            t.set_requires_grad(true)?;
        }
        Ok(out)
    }

    /// Whether this call records history as the rows the op is made of
    /// (a decomposed or composite op with an input requiring grad).
    pub(crate) fn records_its_rows(&self, values: &[Value]) -> bool {
        matches!(
            self.derivative,
            Some(Derivative::Decompose(_) | Derivative::Composite)
        ) && crate::autograd::recording(values)
    }

    /// Runs the kernel without recording history.
    pub(crate) fn run_plain(&self, values: Vec<Value>) -> Result<Value> {
        fxvm_tensor::threads::keep_warm();
        if self.dtype_generic {
            return (self.kernel)(values);
        }
        crate::narrow::run(&self.schema, values, |wide| (self.kernel)(wide))
    }

    /// Calls the op from Rust: positional values, then keywords; omitted
    /// parameters take their defaults; every value is checked against its
    /// declared type.
    pub fn call(&self, positional: Vec<Value>, keywords: Vec<(&str, Value)>) -> Result<Value> {
        let params = &self.schema.params;
        let op = self.schema.name;
        let mut slots: Vec<Option<Value>> = vec![None; params.len()];
        let max_positional = params.iter().filter(|p| !p.kw_only).count();
        if positional.len() > max_positional {
            return Err(TensorError::Argument {
                op,
                message: format!(
                    "takes {max_positional} positional arguments but {} were given",
                    positional.len()
                ),
            });
        }
        for (slot, v) in slots.iter_mut().zip(positional) {
            *slot = Some(v);
        }
        for (name, v) in keywords {
            let Some(i) = self.schema.position(name) else {
                return Err(TensorError::Argument {
                    op,
                    message: format!("got an unexpected keyword argument '{name}'"),
                });
            };
            slots[i] = Some(v);
        }
        if let Some(message) = self.schema.combination_error(|i| slots[i].is_some()) {
            return Err(TensorError::Argument { op, message });
        }
        let mut values = Vec::with_capacity(params.len());
        for (p, slot) in params.iter().zip(slots) {
            let v = match slot.or_else(|| p.default_value()) {
                Some(v) => v,
                None => {
                    return Err(TensorError::Argument {
                        op,
                        message: format!("missing required argument '{}'", p.name),
                    });
                }
            };
            let none_ok = matches!(v, Value::None) && p.optional;
            if !none_ok && !v.fits(&p.ty) {
                return Err(TensorError::Argument {
                    op,
                    message: format!(
                        "argument '{}' must be {}, not {}",
                        p.name,
                        p.ty.describe(),
                        v.type_name()
                    ),
                });
            }
            values.push(v);
        }
        self.run(values)
    }
}
