//! Typed element buffers, and the trait that lets kernels be generic over dtype.

use std::ops::Range;

use half::{bf16, f16};

use super::buffer::{Buffer, SharedBytes};
use super::dtype::{Category, DType, Scalar};

/// The elements behind one or more tensors (views share a storage).
#[derive(Clone, Debug)]
pub enum Storage {
    Bool(Buffer<bool>),
    U8(Buffer<u8>),
    I8(Buffer<i8>),
    I16(Buffer<i16>),
    I32(Buffer<i32>),
    I64(Buffer<i64>),
    F16(Buffer<f16>),
    BF16(Buffer<bf16>),
    F32(Buffer<f32>),
    F64(Buffer<f64>),
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
            $crate::storage::Storage::U8($v) => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            $crate::storage::Storage::I8($v) => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            $crate::storage::Storage::I16($v) => {
                #[allow(dead_code)]
                type $T = i16;
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
            $crate::storage::Storage::F16($v) => {
                #[allow(dead_code)]
                type $T = half::f16;
                $body
            }
            $crate::storage::Storage::BF16($v) => {
                #[allow(dead_code)]
                type $T = half::bf16;
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
            $crate::dtype::DType::U8 => {
                #[allow(dead_code)]
                type $T = u8;
                $body
            }
            $crate::dtype::DType::I8 => {
                #[allow(dead_code)]
                type $T = i8;
                $body
            }
            $crate::dtype::DType::I16 => {
                #[allow(dead_code)]
                type $T = i16;
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
            $crate::dtype::DType::F16 => {
                #[allow(dead_code)]
                type $T = half::f16;
                $body
            }
            $crate::dtype::DType::BF16 => {
                #[allow(dead_code)]
                type $T = half::bf16;
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
    /// The elements to write (borrowed ones are copied out first).
    fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]>;
    fn wrap(v: Vec<Self>) -> Storage;
    /// A storage reading `bytes[range]` in place as elements in native byte
    /// order; None when they do not fit (see `Buffer::borrow`) or the type
    /// has invalid bit patterns (bool).
    fn borrow(_bytes: &SharedBytes, _range: Range<usize>) -> Option<Storage> {
        None
    }

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
        match U::DTYPE.category() {
            Category::Bool => U::from_bool(self.to_bool()),
            Category::Int if Self::DTYPE.is_float() => {
                U::from_i64(float_to_int(self.to_f64(), U::DTYPE))
            }
            Category::Int => U::from_i64(self.to_i64()),
            Category::Float => U::from_f64(self.to_f64()),
        }
    }
}

/// C's float-to-integer cast as x86 computes it, which is what PyTorch's
/// `.to` and numpy's `astype` give there: truncation toward zero, and for
/// NaN or a value outside the target's range the "integer indefinite" (the
/// type's minimum). Types narrower than 32 bits convert through int32 and
/// keep its low bits (300.5 → int8 44, 3e9 → int16 0). Written as a range
/// test and an unchecked conversion, which vectorises (a saturating `as`
/// does not).
fn float_to_int(x: f64, to: DType) -> i64 {
    const I64_END: f64 = 9_223_372_036_854_775_808.0;
    const I32_END: f64 = 2_147_483_648.0;
    if to == DType::I64 {
        if (-I64_END..I64_END).contains(&x) {
            // SAFETY: `x` is not NaN and truncates into i64's range.
            unsafe { x.to_int_unchecked::<i64>() }
        } else {
            i64::MIN
        }
    } else if (-I32_END..I32_END).contains(&x) {
        // SAFETY: `x` is not NaN and truncates into i32's range.
        i64::from(unsafe { x.to_int_unchecked::<i32>() })
    } else {
        i64::from(i32::MIN)
    }
}

/// The accessors every element type shares, for its storage variant.
macro_rules! storage_access {
    ($variant:ident) => {
        fn slice(storage: &Storage) -> Option<&[Self]> {
            match storage {
                Storage::$variant(v) => Some(v),
                _ => None,
            }
        }
        fn slice_mut(storage: &mut Storage) -> Option<&mut [Self]> {
            match storage {
                Storage::$variant(v) => Some(v.make_mut()),
                _ => None,
            }
        }
        fn wrap(v: Vec<Self>) -> Storage {
            Storage::$variant(Buffer::Owned(v))
        }
    };
    ($variant:ident, borrowable) => {
        storage_access!($variant);
        fn borrow(bytes: &SharedBytes, range: Range<usize>) -> Option<Storage> {
            Buffer::borrow(bytes, range).map(Storage::$variant)
        }
    };
}

macro_rules! element {
    ($T:ty, $variant:ident, $scalar:expr, |$x:ident| $from_f64:expr) => {
        impl Element for $T {
            const DTYPE: DType = DType::$variant;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn from_f64($x: f64) -> Self {
                $from_f64
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
            storage_access!($variant, borrowable);
        }
    };
}

// Floats convert to the narrow integers through int64, so out-of-range
// values wrap as PyTorch's C casts do rather than saturate.
element!(u8, U8, |x: u8| Scalar::Int(x as i64), |x| x as i64 as u8);
element!(i8, I8, |x: i8| Scalar::Int(x as i64), |x| x as i64 as i8);
element!(i16, I16, |x: i16| Scalar::Int(x as i64), |x| x as i64
    as i16);
element!(i32, I32, |x: i32| Scalar::Int(x as i64), |x| x as i32);
element!(i64, I64, Scalar::Int, |x| x as i64);
element!(f32, F32, |x: f32| Scalar::Float(x as f64), |x| x as f32);
element!(f64, F64, Scalar::Float, |x| x);

/// The 16-bit floats: doubles narrow through float32 (PyTorch's
/// conversions), integers through float32 too.
macro_rules! half_element {
    ($T:ty, $variant:ident) => {
        impl Element for $T {
            const DTYPE: DType = DType::$variant;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.to_f64()
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                <$T>::from_f32(x as f32)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.to_f32() as i64
            }
            #[inline(always)]
            fn from_i64(x: i64) -> Self {
                <$T>::from_f32(x as f32)
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self.to_f32() != 0.0
            }
            #[inline(always)]
            fn from_bool(b: bool) -> Self {
                if b { <$T>::ONE } else { <$T>::ZERO }
            }
            fn to_scalar(self) -> Scalar {
                Scalar::Float(self.to_f64())
            }
            storage_access!($variant, borrowable);
        }
    };
}

half_element!(f16, F16);
half_element!(bf16, BF16);

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
    storage_access!(Bool);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Out-of-range floats and NaN become the type's minimum (int64,
    /// int32) or int32's low bits (narrower types), as x86 computes C's
    /// cast; in-range values truncate toward zero.
    #[test]
    fn float_to_int_casts_follow_x86s_c_cast() {
        let cases: [(f64, i64, i32, i16, i8, u8); 7] = [
            (300.5, 300, 300, 300, 44, 44),
            (-300.5, -300, -300, -300, -44, 212),
            (3e9, 3_000_000_000, i32::MIN, 0, 0, 0),
            (1e20, i64::MIN, i32::MIN, 0, 0, 0),
            (f64::NAN, i64::MIN, i32::MIN, 0, 0, 0),
            (f64::NEG_INFINITY, i64::MIN, i32::MIN, 0, 0, 0),
            (-0.9, 0, 0, 0, 0, 0),
        ];
        for (x, w, d, h, b, u) in cases {
            assert_eq!(x.cast::<i64>(), w, "{x} as int64");
            assert_eq!((x as f32).cast::<i32>(), d, "{x} as int32");
            assert_eq!(x.cast::<i16>(), h, "{x} as int16");
            assert_eq!(x.cast::<i8>(), b, "{x} as int8");
            assert_eq!(x.cast::<u8>(), u, "{x} as uint8");
        }
        assert_eq!((-(2.0f64.powi(63))).cast::<i64>(), i64::MIN);
        assert_eq!(2.0f64.powi(31).cast::<i32>(), i32::MIN);
        assert_eq!((2.0f64.powi(31) - 1.0).cast::<i32>(), i32::MAX);
    }
}
