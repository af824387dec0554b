//! Element types, Python scalars, and PyTorch's type-promotion rules.

use std::fmt;

/// A tensor element type. The order is PyTorch's promotion lattice within
/// and across categories (bool < integer < floating), so promotion of two
/// tensor dtypes is `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl DType {
    /// The name after `torch.`: `float32`, `int64`, `bool`.
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// The C++ element type PyTorch names in fill-value overflow errors.
    pub fn cpp_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::I32 => "int",
            DType::I64 => "int64_t",
            DType::F32 => "float",
            DType::F64 => "double",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    pub fn itemsize(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    pub fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::I32 | DType::I64 => Category::Int,
            DType::F32 | DType::F64 => Category::Float,
        }
    }

    /// The dtype of `a op b` for two dimensioned tensors.
    pub fn promote(a: DType, b: DType) -> DType {
        a.max(b)
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
            Category::Float => DType::F32,
        }
    }
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
            Operand::Tensor(d) => dim = Some(dim.map_or(d, |x| x.max(d))),
            Operand::ZeroDim(d) => zero = Some(zero.map_or(d, |x| x.max(d))),
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
        (None, None) => scalar.map_or(DType::F32, Category::default_dtype),
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
    use super::*;
    use DType::*;
    use Operand::*;

    #[test]
    fn tensor_tensor_promotion_is_the_lattice_max() {
        assert_eq!(DType::promote(I64, F32), F32);
        assert_eq!(DType::promote(Bool, I32), I32);
        assert_eq!(DType::promote(F32, F64), F64);
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
