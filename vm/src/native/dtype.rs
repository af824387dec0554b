//! `torch.dtype`: the dtypes tensors are stored in, and the ones PyTorch
//! names that fxvm stores no tensors of (complex, float8, wide unsigned,
//! sub-byte, quantized). Code names those at class or module level —
//! transformers' fp8 cache layers, dtype tables in checkpoint converters —
//! so they exist as objects with PyTorch's properties; making a tensor of
//! one raises NotImplementedError naming it.

use rustpython_vm::{AsObject, PyObjectRef, PyPayload, PyResult, VirtualMachine, pyclass};

use crate::tensor::DType;

/// Whether a dtype holds floats, complex numbers or neither.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Float,
    Complex,
    Other,
}

/// A dtype fxvm names but stores no tensors of, with the properties
/// `torch.dtype` reports for it.
#[derive(Debug)]
pub(crate) struct Unstored {
    pub name: &'static str,
    abbr: &'static str,
    itemsize: usize,
    class: Class,
    /// `None` where PyTorch's `is_signed` raises (bits and quantized types).
    signed: Option<bool>,
    /// `to_real()`'s name (itself unless complex).
    real: &'static str,
    /// The C++ scalar-type name PyTorch's errors use.
    scalar_type: &'static str,
}

const fn unstored(
    name: &'static str,
    abbr: &'static str,
    itemsize: usize,
    class: Class,
    signed: Option<bool>,
    real: &'static str,
    scalar_type: &'static str,
) -> Unstored {
    Unstored {
        name,
        abbr,
        itemsize,
        class,
        signed,
        real,
        scalar_type,
    }
}

/// PyTorch 2.15's dtypes beyond the stored ten, as `torch.<name>`.
pub(crate) const UNSTORED: &[Unstored] = &[
    unstored(
        "complex32",
        "c32",
        4,
        Class::Complex,
        Some(true),
        "float16",
        "ComplexHalf",
    ),
    unstored(
        "complex64",
        "c64",
        8,
        Class::Complex,
        Some(true),
        "float32",
        "ComplexFloat",
    ),
    unstored(
        "complex128",
        "c128",
        16,
        Class::Complex,
        Some(true),
        "float64",
        "ComplexDouble",
    ),
    unstored(
        "bcomplex32",
        "bc32",
        4,
        Class::Complex,
        Some(true),
        "bfloat16",
        "BComplex32",
    ),
    unstored(
        "float8_e4m3fn",
        "f8e4m3fn",
        1,
        Class::Float,
        Some(true),
        "float8_e4m3fn",
        "Float8_e4m3fn",
    ),
    unstored(
        "float8_e4m3fnuz",
        "f8e4m3fnuz",
        1,
        Class::Float,
        Some(true),
        "float8_e4m3fnuz",
        "Float8_e4m3fnuz",
    ),
    unstored(
        "float8_e5m2",
        "f8e5m2",
        1,
        Class::Float,
        Some(true),
        "float8_e5m2",
        "Float8_e5m2",
    ),
    unstored(
        "float8_e5m2fnuz",
        "f8e5m2fnuz",
        1,
        Class::Float,
        Some(true),
        "float8_e5m2fnuz",
        "Float8_e5m2fnuz",
    ),
    unstored(
        "float8_e8m0fnu",
        "f8e8m0fnu",
        1,
        Class::Float,
        Some(false),
        "float8_e8m0fnu",
        "Float8_e8m0fnu",
    ),
    unstored(
        "float4_e2m1fn_x2",
        "f4e2m1fnx2",
        1,
        Class::Float,
        Some(true),
        "float4_e2m1fn_x2",
        "Float4_e2m1fn_x2",
    ),
    unstored(
        "uint16",
        "u16",
        2,
        Class::Other,
        Some(false),
        "uint16",
        "UInt16",
    ),
    unstored(
        "uint32",
        "u32",
        4,
        Class::Other,
        Some(false),
        "uint32",
        "UInt32",
    ),
    unstored(
        "uint64",
        "u64",
        8,
        Class::Other,
        Some(false),
        "uint64",
        "UInt64",
    ),
    unstored(
        "uint1",
        "uint1",
        1,
        Class::Other,
        Some(false),
        "uint1",
        "UInt1",
    ),
    unstored(
        "uint2",
        "uint2",
        1,
        Class::Other,
        Some(false),
        "uint2",
        "UInt2",
    ),
    unstored(
        "uint3",
        "uint3",
        1,
        Class::Other,
        Some(false),
        "uint3",
        "UInt3",
    ),
    unstored(
        "uint4",
        "uint4",
        1,
        Class::Other,
        Some(false),
        "uint4",
        "UInt4",
    ),
    unstored(
        "uint5",
        "uint5",
        1,
        Class::Other,
        Some(false),
        "uint5",
        "UInt5",
    ),
    unstored(
        "uint6",
        "uint6",
        1,
        Class::Other,
        Some(false),
        "uint6",
        "UInt6",
    ),
    unstored(
        "uint7",
        "uint7",
        1,
        Class::Other,
        Some(false),
        "uint7",
        "UInt7",
    ),
    unstored("int1", "int1", 1, Class::Other, Some(true), "int1", "Int1"),
    unstored("int2", "int2", 1, Class::Other, Some(true), "int2", "Int2"),
    unstored("int3", "int3", 1, Class::Other, Some(true), "int3", "Int3"),
    unstored("int4", "int4", 1, Class::Other, Some(true), "int4", "Int4"),
    unstored("int5", "int5", 1, Class::Other, Some(true), "int5", "Int5"),
    unstored("int6", "int6", 1, Class::Other, Some(true), "int6", "Int6"),
    unstored("int7", "int7", 1, Class::Other, Some(true), "int7", "Int7"),
    unstored("qint8", "qint8", 1, Class::Other, None, "qint8", "QInt8"),
    unstored(
        "quint8",
        "quint8",
        1,
        Class::Other,
        None,
        "quint8",
        "QUInt8",
    ),
    unstored(
        "qint32",
        "qint32",
        4,
        Class::Other,
        None,
        "qint32",
        "QInt32",
    ),
    unstored(
        "quint4x2",
        "quint4x2",
        1,
        Class::Other,
        None,
        "quint4x2",
        "QUInt4x2",
    ),
    unstored(
        "quint2x4",
        "quint2x4",
        1,
        Class::Other,
        None,
        "quint2x4",
        "QUInt2x4",
    ),
    unstored(
        "bits1x8",
        "b1x8",
        1,
        Class::Other,
        None,
        "bits1x8",
        "Bits1x8",
    ),
    unstored(
        "bits2x4",
        "b2x4",
        1,
        Class::Other,
        None,
        "bits2x4",
        "Bits2x4",
    ),
    unstored(
        "bits4x2",
        "b4x2",
        1,
        Class::Other,
        None,
        "bits4x2",
        "Bits4x2",
    ),
    unstored("bits8", "b8x1", 1, Class::Other, None, "bits8", "Bits8"),
    unstored("bits16", "b16x1", 2, Class::Other, None, "bits16", "Bits16"),
];

/// What a `torch.dtype` object stands for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Stored(DType),
    Unstored(&'static Unstored),
}

/// The `torch.dtype` objects (`torch.float32`, `torch.complex64`, …).
#[pyclass(module = "torch", name = "dtype")]
#[derive(Debug, PyPayload)]
pub(crate) struct PyDType {
    pub kind: Kind,
}

impl PyDType {
    pub(crate) fn stored(dtype: DType) -> Self {
        PyDType {
            kind: Kind::Stored(dtype),
        }
    }

    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Stored(d) => d.name(),
            Kind::Unstored(u) => u.name,
        }
    }

    /// The stored dtype, or NotImplementedError naming an unstored one.
    pub(crate) fn dtype(&self, vm: &VirtualMachine) -> PyResult<DType> {
        match self.kind {
            Kind::Stored(d) => Ok(d),
            Kind::Unstored(u) => Err(vm.new_not_implemented_error(format!(
                "fxvm has no torch.{} tensors: its tensors are bool, uint8, int8/16/32/64, float16, bfloat16, float32 and float64",
                u.name
            ))),
        }
    }

    fn dtype_named(name: &'static str, vm: &VirtualMachine) -> PyResult {
        super::classes::attr("torch", name, vm)
    }
}

#[pyclass(with(rustpython_vm::types::Representable))]
impl PyDType {
    #[pygetset]
    fn is_floating_point(&self) -> bool {
        match self.kind {
            Kind::Stored(d) => d.is_float(),
            Kind::Unstored(u) => u.class == Class::Float,
        }
    }

    #[pygetset]
    fn is_complex(&self) -> bool {
        matches!(self.kind, Kind::Unstored(u) if u.class == Class::Complex)
    }

    #[pygetset]
    fn itemsize(&self) -> usize {
        match self.kind {
            Kind::Stored(d) => d.itemsize(),
            Kind::Unstored(u) => u.itemsize,
        }
    }

    #[pygetset]
    fn is_signed(&self, vm: &VirtualMachine) -> PyResult<bool> {
        match self.kind {
            Kind::Stored(d) => Ok(d.is_signed()),
            Kind::Unstored(u) => u.signed.ok_or_else(|| {
                let what = if u.name.starts_with('q') {
                    "isSignedType not supported for quantized types".to_owned()
                } else {
                    "Bits types are undefined".to_owned()
                };
                vm.new_runtime_error(what)
            }),
        }
    }

    #[pygetset]
    fn abbr(&self) -> &'static str {
        match self.kind {
            Kind::Stored(d) => match d {
                DType::Bool => "b8",
                DType::U8 => "u8",
                DType::I8 => "i8",
                DType::I16 => "i16",
                DType::I32 => "i32",
                DType::I64 => "i64",
                DType::F16 => "f16",
                DType::BF16 => "bf16",
                DType::F32 => "f32",
                DType::F64 => "f64",
            },
            Kind::Unstored(u) => u.abbr,
        }
    }

    /// The real dtype of a complex one; any other dtype itself.
    #[pymethod]
    fn to_real(&self, vm: &VirtualMachine) -> PyResult {
        match self.kind {
            Kind::Unstored(u) => Self::dtype_named(u.real, vm),
            Kind::Stored(d) => Self::dtype_named(d.name(), vm),
        }
    }

    /// The complex dtype of a floating one (or a complex one itself).
    #[pymethod]
    fn to_complex(&self, vm: &VirtualMachine) -> PyResult {
        let complex = match self.kind {
            Kind::Stored(DType::F16) => Some("complex32"),
            Kind::Stored(DType::BF16) => Some("bcomplex32"),
            Kind::Stored(DType::F32) => Some("complex64"),
            Kind::Stored(DType::F64) => Some("complex128"),
            Kind::Stored(_) => None,
            Kind::Unstored(u) => (u.class == Class::Complex).then_some(u.name),
        };
        match complex {
            Some(name) => Self::dtype_named(name, vm),
            None => {
                let scalar_type = match self.kind {
                    Kind::Stored(d) => crate::tensor::error::legacy_name(d).to_owned(),
                    Kind::Unstored(u) => u.scalar_type.to_owned(),
                };
                Err(vm.new_runtime_error(format!("Unknown Complex ScalarType for {scalar_type}")))
            }
        }
    }

    #[pymethod]
    fn __reduce__(&self) -> &'static str {
        self.name()
    }
}

impl rustpython_vm::types::Representable for PyDType {
    fn repr_str(zelf: &rustpython_vm::Py<Self>, _vm: &VirtualMachine) -> PyResult<String> {
        Ok(format!("torch.{}", zelf.name()))
    }
}

/// The interned dtype object for `dtype`, so `x.dtype is torch.float32` holds.
pub(crate) fn dtype_to_py(dtype: DType, vm: &VirtualMachine) -> PyResult {
    super::classes::attr("torch._C", dtype.name(), vm)
}

pub(crate) fn dtype_from_py(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<DType> {
    if let Some(d) = obj.downcast_ref::<PyDType>() {
        return d.dtype(vm);
    }
    // Python's own types stand for their default dtypes, as in PyTorch.
    if obj.is(vm.ctx.types.float_type) {
        return Ok(DType::F64);
    }
    if obj.is(vm.ctx.types.int_type) {
        return Ok(DType::I64);
    }
    if obj.is(vm.ctx.types.bool_type) {
        return Ok(DType::Bool);
    }
    Err(vm.new_type_error(format!(
        "dtype must be torch.dtype (got {})",
        obj.class().name()
    )))
}
