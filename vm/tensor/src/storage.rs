//! Typed element buffers, and the trait that lets kernels be generic over dtype.

use super::dtype::{DType, Scalar};

/// The elements behind one or more tensors (views share a storage).
#[derive(Clone, Debug)]
pub enum Storage {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// Runs `$body` with `$v` bound to the storage's typed vector, and `$T` to its element type.
macro_rules! with_storage {
    ($storage:expr, $v:ident, $T:ident => $body:expr) => {
        match $storage {
            $crate::storage::Storage::Bool($v) => {
                #[allow(dead_code)]
                type $T = bool;
                $body
            }
            $crate::storage::Storage::I32($v) => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            $crate::storage::Storage::I64($v) => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            $crate::storage::Storage::F32($v) => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            $crate::storage::Storage::F64($v) => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_storage;

/// Runs `$body` with `$T` bound to the element type of a dtype.
macro_rules! with_dtype {
    ($dtype:expr, $T:ident => $body:expr) => {
        match $dtype {
            $crate::dtype::DType::Bool => {
                #[allow(dead_code)]
                type $T = bool;
                $body
            }
            $crate::dtype::DType::I32 => {
                #[allow(dead_code)]
                type $T = i32;
                $body
            }
            $crate::dtype::DType::I64 => {
                #[allow(dead_code)]
                type $T = i64;
                $body
            }
            $crate::dtype::DType::F32 => {
                #[allow(dead_code)]
                type $T = f32;
                $body
            }
            $crate::dtype::DType::F64 => {
                #[allow(dead_code)]
                type $T = f64;
                $body
            }
        }
    };
}
pub(crate) use with_dtype;

impl Storage {
    pub fn dtype(&self) -> DType {
        with_storage!(self, _v, T => T::DTYPE)
    }

    pub fn len(&self) -> usize {
        with_storage!(self, v, _T => v.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn zeros(dtype: DType, len: usize) -> Storage {
        with_dtype!(dtype, T => {
            crate::alloc::ensure::<T>(len);
            T::wrap(vec![T::default(); len])
        })
    }
}

/// An element type a kernel can be instantiated at.
pub trait Element: Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static {
    const DTYPE: DType;
    fn to_f64(self) -> f64;
    fn from_f64(x: f64) -> Self;
    fn to_i64(self) -> i64;
    fn from_i64(x: i64) -> Self;
    fn to_bool(self) -> bool;
    fn from_bool(b: bool) -> Self;
    fn to_scalar(self) -> Scalar;
    fn slice(storage: &Storage) -> Option<&[Self]>;
    fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]>;
    fn wrap(v: Vec<Self>) -> Storage;

    fn from_scalar(s: Scalar) -> Self {
        match s {
            Scalar::Bool(b) => Self::from_bool(b),
            Scalar::Int(i) => Self::from_i64(i),
            Scalar::Float(x) => Self::from_f64(x),
        }
    }

    /// `self + other` in the element type (integers wrap, bools or), for
    /// ops that add into a destination (`index_put_(accumulate=True)`).
    fn accumulate(self, other: Self) -> Self {
        match Self::DTYPE {
            DType::Bool => Self::from_bool(self.to_bool() || other.to_bool()),
            // A double sum rounds to the same float as a float sum would.
            d if d.is_float() => Self::from_f64(self.to_f64() + other.to_f64()),
            _ => Self::from_i64(self.to_i64().wrapping_add(other.to_i64())),
        }
    }

    /// Converts between element types with C-cast semantics, as `.to(dtype)` does.
    fn cast<U: Element>(self) -> U {
        match U::DTYPE {
            DType::Bool => U::from_bool(self.to_bool()),
            DType::I32 | DType::I64 if !Self::DTYPE.is_float() => U::from_i64(self.to_i64()),
            _ => U::from_f64(self.to_f64()),
        }
    }
}

macro_rules! element {
    ($T:ty, $variant:ident, $scalar:expr) => {
        impl Element for $T {
            const DTYPE: DType = DType::$variant;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $T
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn from_i64(x: i64) -> Self {
                x as $T
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self != (0 as $T)
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                b as u8 as $T
            }
            fn to_scalar(self) -> Scalar {
                $scalar(self)
            }
            fn slice(storage: &Storage) -> Option<&[Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]> {
                match storage {
                    Storage::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap(v: Vec<Self>) -> Storage {
                Storage::$variant(v)
            }
        }
    };
}

element!(i32, I32, |x: i32| Scalar::Int(x as i64));
element!(i64, I64, Scalar::Int);
element!(f32, F32, |x: f32| Scalar::Float(x as f64));
element!(f64, F64, Scalar::Float);

impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        x != 0.0
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn from_i64(x: i64) -> Self {
        x != 0
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self
    }
    #[inline(always)]
    fn from_bool(b: bool) -> Self {
        b
    }
    fn to_scalar(self) -> Scalar {
        Scalar::Bool(self)
    }
    fn slice(storage: &Storage) -> Option<&[Self]> {
        match storage {
            Storage::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]> {
        match storage {
            Storage::Bool(v) => Some(v),
            _ => None,
        }
    }
    fn wrap(v: Vec<Self>) -> Storage {
        Storage::Bool(v)
    }
}
