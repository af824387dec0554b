//! Element types, Python scalars, and PyTorch's type-promotion rules.

use std::fmt;

/// A tensor element type, ordered by category (bool < integer < floating)
/// and width within it; [`DType::promote`] is PyTorch's lattice over them.
/// The 16-bit floats and the 8/16-bit integers are storage types: kernels
/// compute them in float32 and int32 (as PyTorch's opmath does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    U8,
    I8,
    I16,
    I32,
    I64,
    F16,
    BF16,
    F32,
    F64,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];

    /// The name after `torch.`: `float32`, `int64`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// The C++ element type PyTorch names in fill-value overflow errors.
    pub fn cpp_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8_t",
            DType::I8 => "int8_t",
            DType::I16 => "int16_t",
            DType::I32 => "int",
            DType::I64 => "int64_t",
            DType::F16 => "c10::Half",
            DType::BF16 => "c10::BFloat16",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }

    /// The C++ type name a `caffe2::TypeMeta` prints (`expected dtype long
    /// int for `end``): the compiler's spelling of each element type.
    pub fn type_meta_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "unsigned char",
            DType::I8 => "signed char",
            DType::I16 => "short int",
            DType::I32 => "int",
            DType::I64 => "long int",
            DType::F16 => "c10::Half",
            DType::BF16 => "c10::BFloat16",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }

    pub fn is_float(self) -> bool {
        self.category() == Category::Float
    }

    /// Whether the dtype holds negative values (`torch.dtype.is_signed`).
    pub fn is_signed(self) -> bool {
        !matches!(self, DType::Bool | DType::U8)
    }

    /// Stored narrower than kernels compute it (see [`DType::compute`]).
    pub fn is_narrow(self) -> bool {
        self.compute() != self
    }

    /// The dtype kernels compute a narrow dtype in: float32 for the 16-bit
    /// floats, int32 for the 8/16-bit integers; itself otherwise.
    pub fn compute(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            DType::U8 | DType::I8 | DType::I16 => DType::I32,
            d => d,
        }
    }

    /// The largest finite value of a floating dtype (`finfo(d).max`).
    pub fn max_finite(self) -> f64 {
        match self {
            DType::F16 => 65504.0,
            DType::BF16 => 3.389_531_389_251_535_5e38,
            DType::F32 => f32::MAX as f64,
            _ => f64::MAX,
        }
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => Category::Int,
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => Category::Float,
        }
    }

    /// The dtype of `a op b` for two dimensioned tensors: the higher
    /// category wins; within one, the wider type — except that uint8 and
    /// int8 meet at int16, and float16 and bfloat16 at float32.
    pub fn promote(a: DType, b: DType) -> DType {
        use DType::*;
        if a.category() != b.category() {
            return if a.category() > b.category() { a } else { b };
        }
        match (a, b) {
            (U8, I8) | (I8, U8) => I16,
            (F16, BF16) | (BF16, F16) => F32,
            _ => a.max(b),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "torch.{}", self.name())
    }
}

/// A dtype's kind, which decides whether a lower-priority operand (a
/// zero-dim tensor or a Python scalar) can change the result type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Bool,
    Int,
    Float,
}

impl Category {
    /// The dtype a Python scalar of this kind becomes on its own.
    pub fn default_dtype(self) -> DType {
        match self {
            Category::Bool => DType::Bool,
            Category::Int => DType::I64,
            Category::Float => default_float(),
        }
    }
}

/// `torch.get_default_dtype()`, as an index into [`DType::ALL`]: process-wide,
/// as PyTorch's is.
static DEFAULT_FLOAT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(8);

thread_local! {
    /// A thread's own default (see [`own_thread_default_float`]).
    static THREAD_DEFAULT_FLOAT: std::cell::Cell<Option<u8>> = const { std::cell::Cell::new(None) };
}

/// The dtype float data and float-making ops default to (float32 unless
/// [`set_default_float`] changed it).
pub fn default_float() -> DType {
    let index = THREAD_DEFAULT_FLOAT
        .get()
        .unwrap_or_else(|| DEFAULT_FLOAT.load(std::sync::atomic::Ordering::Relaxed));
    DType::ALL[index as usize]
}

/// Gives the calling thread a default float dtype of its own (float32), so
/// that interpreters running side by side on their own threads (the workers
/// of `fxvm check`) do not see each other's `torch.set_default_dtype`.
pub fn own_thread_default_float() {
    THREAD_DEFAULT_FLOAT.set(Some(index_of(DType::F32)));
}

fn index_of(dtype: DType) -> u8 {
    DType::ALL
        .iter()
        .position(|&d| d == dtype)
        .expect("every dtype is in ALL") as u8
}

/// Sets [`default_float`] (`torch.set_default_dtype`); only floating dtypes
/// can be the default.
pub fn set_default_float(dtype: DType) -> crate::Result<()> {
    if !dtype.is_float() {
        return Err(crate::TensorError::Argument {
            op: "set_default_dtype",
            message: "only floating-point types are supported as the default type".into(),
        });
    }
    let index = index_of(dtype);
    if THREAD_DEFAULT_FLOAT.get().is_some() {
        THREAD_DEFAULT_FLOAT.set(Some(index));
    } else {
        DEFAULT_FLOAT.store(index, std::sync::atomic::Ordering::Relaxed);
    }
    Ok(())
}

/// A Python number on its way into or out of a tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    Float(f64),
}

impl Scalar {
    pub fn category(self) -> Category {
        match self {
            Scalar::Bool(_) => Category::Bool,
            Scalar::Int(_) => Category::Int,
            Scalar::Float(_) => Category::Float,
        }
    }

    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::Float(x) => x,
        }
    }

    pub fn to_i64(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::Float(x) => x as i64,
        }
    }

    /// Whether `self` converts to `dtype` without overflow, as PyTorch checks
    /// fill values and `torch.tensor` data: integers must be in range, floats
    /// truncate into an integer range (NaN never does), finite floats stay
    /// finite in float32; bool takes anything.
    pub fn fits(self, dtype: DType) -> bool {
        let (lo, hi) = match dtype {
            DType::Bool | DType::F64 => return true,
            DType::F32 => {
                return match self {
                    Scalar::Float(x) => !x.is_finite() || (x as f32).is_finite(),
                    _ => true,
                };
            }
            DType::F16 | DType::BF16 => {
                let x = self.to_f64();
                return !x.is_finite() || self.narrow_float(dtype).is_finite();
            }
            DType::U8 => (0, u8::MAX as i64),
            DType::I8 => (i8::MIN as i64, i8::MAX as i64),
            DType::I16 => (i16::MIN as i64, i16::MAX as i64),
            DType::I32 => (i32::MIN as i64, i32::MAX as i64),
            DType::I64 => (i64::MIN, i64::MAX),
        };
        match self {
            Scalar::Bool(_) => true,
            Scalar::Int(i) => (lo..=hi).contains(&i),
            // `hi + 1` is exact in f64 for both ranges; truncation toward zero
            // keeps anything strictly inside (lo - 1, hi + 1).
            Scalar::Float(x) => x > lo as f64 - 1.0 && x < hi as f64 + 1.0,
        }
    }

    /// The value rounded to a 16-bit float type (through float32, as
    /// PyTorch converts), back as a double.
    fn narrow_float(self, dtype: DType) -> f64 {
        let x = self.to_f64() as f32;
        match dtype {
            DType::BF16 => half::bf16::from_f32(x).to_f64(),
            _ => half::f16::from_f32(x).to_f64(),
        }
    }

    pub fn to_bool(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::Int(i) => i != 0,
            Scalar::Float(x) => x != 0.0,
        }
    }
}

/// One operand's say in [`result_type`]: dimensioned tensors outrank
/// zero-dim tensors, which outrank Python scalars — but only within a
/// category; a higher category always lifts the result.
#[derive(Clone, Copy, Debug)]
pub enum Operand {
    Tensor(DType),
    ZeroDim(DType),
    Scalar(Category),
}

/// PyTorch's `torch.result_type` over any number of operands.
pub fn result_type(operands: &[Operand]) -> DType {
    let mut dim: Option<DType> = None;
    let mut zero: Option<DType> = None;
    let mut scalar: Option<Category> = None;
    for op in operands {
        match *op {
            Operand::Tensor(d) => dim = Some(dim.map_or(d, |x| DType::promote(x, d))),
            Operand::ZeroDim(d) => zero = Some(zero.map_or(d, |x| DType::promote(x, d))),
            Operand::Scalar(c) => scalar = Some(scalar.map_or(c, |x| x.max(c))),
        }
    }
    let lift = |base: DType, other: Option<DType>| match other {
        Some(o) if o.category() > base.category() => o,
        _ => base,
    };
    let mut out = match (dim, zero) {
        (Some(d), z) => lift(d, z),
        (None, Some(z)) => z,
        (None, None) => scalar.map_or(default_float(), Category::default_dtype),
    };
    if let Some(c) = scalar
        && c > out.category()
    {
        out = c.default_dtype();
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_with_its_own_default_float_leaves_the_process_alone() {
        let before = default_float();
        std::thread::spawn(|| {
            own_thread_default_float();
            assert_eq!(default_float(), DType::F32);
            set_default_float(DType::F64).unwrap();
            assert_eq!(default_float(), DType::F64);
        })
        .join()
        .unwrap();
        assert_eq!(default_float(), before);
    }

    use super::*;
    use DType::*;
    use Operand::*;

    #[test]
    fn tensor_tensor_promotion_follows_pytorchs_lattice() {
        assert_eq!(DType::promote(I64, F32), F32);
        assert_eq!(DType::promote(Bool, I32), I32);
        assert_eq!(DType::promote(F32, F64), F64);
        assert_eq!(DType::promote(U8, I8), I16);
        assert_eq!(DType::promote(U8, I32), I32);
        assert_eq!(DType::promote(I8, I16), I16);
        assert_eq!(DType::promote(F16, BF16), F32);
        assert_eq!(DType::promote(I64, F16), F16);
        assert_eq!(DType::promote(BF16, F64), F64);
        assert_eq!(DType::promote(Bool, U8), U8);
    }

    #[test]
    fn narrow_fill_values_are_range_checked() {
        assert!(
            super::Scalar::Int(255).fits(U8)
                && !super::Scalar::Int(256).fits(U8)
                && !super::Scalar::Int(-1).fits(U8)
        );
        assert!(super::Scalar::Int(-128).fits(I8) && !super::Scalar::Int(128).fits(I8));
        assert!(super::Scalar::Float(65504.0).fits(F16) && !super::Scalar::Float(1e5).fits(F16));
        assert!(
            super::Scalar::Float(1e38).fits(BF16) && super::Scalar::Float(f64::INFINITY).fits(F16)
        );
    }

    #[test]
    fn scalars_only_lift_across_categories() {
        assert_eq!(result_type(&[Tensor(I32), Scalar(Category::Int)]), I32);
        assert_eq!(result_type(&[Tensor(I64), Scalar(Category::Float)]), F32);
        assert_eq!(result_type(&[Tensor(F64), Scalar(Category::Float)]), F64);
        assert_eq!(result_type(&[Tensor(Bool), Scalar(Category::Int)]), I64);
    }

    #[test]
    fn zero_dim_tensors_rank_between_tensors_and_scalars() {
        assert_eq!(result_type(&[Tensor(F32), ZeroDim(F64)]), F32);
        assert_eq!(result_type(&[Tensor(I32), ZeroDim(F64)]), F64);
        assert_eq!(result_type(&[ZeroDim(I32), Scalar(Category::Float)]), F32);
        assert_eq!(result_type(&[ZeroDim(I32), ZeroDim(I64)]), I64);
    }
}
