//! Elementwise unary and binary ops with broadcasting and type promotion.

use std::mem::MaybeUninit;

use num_traits::Float;
use rayon::prelude::*;

use crate::dtype::{DType, Operand, Scalar, result_type};
use crate::error::{Result, TensorError};
use crate::layout::broadcast_shapes;
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::PARALLEL_MIN;

/// How an op's output dtype follows from its input dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Transcendental: integer and bool inputs compute in float32.
    Float,
    /// Keeps the input dtype (bool rejected where meaningless).
    Same,
}

macro_rules! unary_ops {
    ($( $variant:ident, $name:literal, $kind:ident, |$x:ident| $float:expr, $int:expr; )*) => {
        /// Elementwise unary operations.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Unary { $($variant),* }

        impl Unary {
            pub const ALL: &'static [Unary] = &[$(Unary::$variant),*];

            pub fn name(self) -> &'static str {
                match self { $(Unary::$variant => $name),* }
            }

            fn kind(self) -> Kind {
                match self { $(Unary::$variant => Kind::$kind),* }
            }

            /// `map` with this op's float kernel, instantiated per op so that
            /// each loop is straight-line code the compiler can vectorise.
            fn map_float<F: Float + FloatExt + Element>(self, t: &Tensor) -> Tensor {
                match self { $(Unary::$variant => map(t, |$x: F| -> F { $float })),* }
            }

            /// The float kernel applied where the elements lie, per op as
            /// [`Unary::map_float`].
            fn map_float_in_place<F: Float + FloatExt + Element>(self, xs: &mut [F]) {
                match self { $(Unary::$variant => rewrite(xs, |$x: F| -> F { $float })),* }
            }

            /// The integer kernel, for `Same` ops on integer tensors.
            #[inline(always)]
            #[allow(unused_variables)]
            fn int(self, x: i64) -> Option<i64> {
                match self { $(Unary::$variant => (|$x: i64| $int)(x)),* }
            }
        }
    };
}

unary_ops! {
    Neg, "neg", Same, |x| -x, Some(x.wrapping_neg());
    Abs, "abs", Same, |x| x.abs(), Some(x.wrapping_abs());
    // `x < 0` is false for NaN and -0.0, which pass through as in PyTorch.
    Relu, "relu", Same, |x| if x < F::zero() { F::zero() } else { x }, Some(x.max(0));
    Sign, "sign", Same, |x| if x > F::zero() { F::one() } else if x < F::zero() { -F::one() } else { F::zero() }, Some(x.signum());
    Floor, "floor", Same, |x| x.floor(), Some(x);
    Ceil, "ceil", Same, |x| x.ceil(), Some(x);
    Round, "round", Same, |x| x.round_half_even(), Some(x);
    Trunc, "trunc", Same, |x| x.trunc(), Some(x);
    Square, "square", Same, |x| x * x, Some(x.wrapping_mul(x));
    Exp, "exp", Float, |x| x.exp(), None;
    Expm1, "expm1", Float, |x| x.exp_m1(), None;
    Log, "log", Float, |x| x.ln(), None;
    Log2, "log2", Float, |x| x.log2(), None;
    Log10, "log10", Float, |x| x.log10(), None;
    Log1p, "log1p", Float, |x| x.ln_1p(), None;
    Sqrt, "sqrt", Float, |x| x.sqrt(), None;
    Rsqrt, "rsqrt", Float, |x| x.sqrt().recip(), None;
    Reciprocal, "reciprocal", Float, |x| x.recip(), None;
    Sin, "sin", Float, |x| x.sin(), None;
    Cos, "cos", Float, |x| x.cos(), None;
    Tan, "tan", Float, |x| x.tan(), None;
    Asin, "asin", Float, |x| x.asin(), None;
    Acos, "acos", Float, |x| x.acos(), None;
    Atan, "atan", Float, |x| x.atan(), None;
    Asinh, "asinh", Float, |x| x.asinh(), None;
    Acosh, "acosh", Float, |x| x.acosh(), None;
    Atanh, "atanh", Float, |x| x.atanh(), None;
    Exp2, "exp2", Float, |x| x.exp2(), None;
    Erfc, "erfc", Float, |x| x.erfc(), None;
    Lgamma, "lgamma", Float, |x| x.lgamma(), None;
    Digamma, "digamma", Float, |x| x.polygamma(0), None;
    // sin(πx)/(πx), exactly 1 at 0.
    Sinc, "sinc", Float, |x| if x == F::zero() { F::one() } else { let px = x * F::PI(); px.sin() / px }, None;
    Deg2rad, "deg2rad", Float, |x| x * F::from(std::f64::consts::PI / 180.0).unwrap(), None;
    Rad2deg, "rad2deg", Float, |x| x * F::from(180.0 / std::f64::consts::PI).unwrap(), None;
    Sinh, "sinh", Float, |x| x.sinh(), None;
    Cosh, "cosh", Float, |x| x.cosh(), None;
    Tanh, "tanh", Float, |x| x.tanh(), None;
    Erf, "erf", Float, |x| x.erf(), None;
    Erfinv, "erfinv", Float, |x| x.erfinv(), None;
    Sigmoid, "sigmoid", Float, |x| sigmoid(x), None;
    Silu, "silu", Float, |x| x * sigmoid(x), None;
    Gelu, "gelu", Float, |x| x * F::from(0.5).unwrap() * (F::one() + (x * F::from(std::f64::consts::FRAC_1_SQRT_2).unwrap()).erf()), None;
    GeluTanh, "gelu_tanh", Float, |x| gelu_tanh(x), None;
    Mish, "mish", Float, |x| x * softplus(x).tanh(), None;
    Softplus, "softplus", Float, |x| softplus(x), None;
}

#[inline(always)]
pub(crate) fn sigmoid<F: Float>(x: F) -> F {
    F::one() / (F::one() + (-x).exp())
}

#[inline(always)]
fn softplus<F: Float>(x: F) -> F {
    // PyTorch's threshold: above 20 softplus(x) is x to float precision.
    if x > F::from(20.0).unwrap() {
        x
    } else {
        x.exp().ln_1p()
    }
}

#[inline(always)]
fn gelu_tanh<F: Float>(x: F) -> F {
    let k = F::from((2.0 / std::f64::consts::PI).sqrt()).unwrap();
    let c = F::from(0.044715).unwrap();
    F::from(0.5).unwrap() * x * (F::one() + (k * (x + c * x * x * x)).tanh())
}

/// What `num_traits::Float` lacks: `erf`, `erfc`, `erf`'s inverse, `lgamma`,
/// its derivatives (`polygamma`, computed in float64), π and
/// round-half-to-even.
pub trait FloatExt: Sized {
    fn erf(self) -> Self;
    fn erfc(self) -> Self;
    fn erfinv(self) -> Self;
    fn lgamma(self) -> Self;
    fn polygamma(self, n: u32) -> Self;
    #[allow(non_snake_case)]
    fn PI() -> Self;
    fn round_half_even(self) -> Self;
}

/// The inverse error function: the classic rational first guess (central
/// range |y| <= 0.7, then a tail form in sqrt(-ln((1-|y|)/2))), refined by two
/// Newton steps on `erf`, as PyTorch computes it.
fn erfinv_f64(y: f64) -> f64 {
    const A: [f64; 4] = [0.886226899, -1.645349621, 0.914624893, -0.140543331];
    const B: [f64; 4] = [-2.118377725, 1.442710462, -0.329097515, 0.012229801];
    const C: [f64; 4] = [-1.970840454, -1.624906493, 3.429567803, 1.641345311];
    const D: [f64; 2] = [3.543889200, 1.637067800];
    let y_abs = y.abs();
    if y_abs > 1.0 {
        return f64::NAN;
    }
    if y_abs == 1.0 {
        return f64::INFINITY.copysign(y);
    }
    let mut x = if y_abs <= 0.7 {
        let z = y * y;
        let num = ((A[3] * z + A[2]) * z + A[1]) * z + A[0];
        let den = (((B[3] * z + B[2]) * z + B[1]) * z + B[0]) * z + 1.0;
        y * num / den
    } else {
        let z = (-((1.0 - y_abs) / 2.0).ln()).sqrt();
        let num = ((C[3] * z + C[2]) * z + C[1]) * z + C[0];
        let den = (D[1] * z + D[0]) * z + 1.0;
        num.copysign(y) / den
    };
    let slope = 2.0 / std::f64::consts::PI.sqrt();
    for _ in 0..2 {
        x -= (libm::erf(x) - y) / (slope * (-x * x).exp());
    }
    x
}

impl FloatExt for f32 {
    fn erf(self) -> f32 {
        libm::erff(self)
    }
    fn erfc(self) -> f32 {
        libm::erfcf(self)
    }
    fn lgamma(self) -> f32 {
        libm::lgammaf(self)
    }
    fn polygamma(self, n: u32) -> f32 {
        super::gamma::polygamma_f64(n, f64::from(self)) as f32
    }
    fn PI() -> f32 {
        std::f32::consts::PI
    }
    fn erfinv(self) -> f32 {
        erfinv_f64(self as f64) as f32
    }
    fn round_half_even(self) -> f32 {
        self.round_ties_even()
    }
}

impl FloatExt for f64 {
    fn erf(self) -> f64 {
        libm::erf(self)
    }
    fn erfc(self) -> f64 {
        libm::erfc(self)
    }
    fn lgamma(self) -> f64 {
        libm::lgamma(self)
    }
    fn polygamma(self, n: u32) -> f64 {
        super::gamma::polygamma_f64(n, self)
    }
    fn PI() -> f64 {
        std::f64::consts::PI
    }
    fn erfinv(self) -> f64 {
        erfinv_f64(self)
    }
    fn round_half_even(self) -> f64 {
        self.round_ties_even()
    }
}

/// Elements per task when a kernel is split across threads.
const CHUNK: usize = 1 << 14;

/// A new vector of `n` elements produced chunk by chunk: `values(start, len)`
/// yields the `len` elements from index `start`, in parallel for large `n`.
/// Writing slices chunk-wise (rather than collecting one long iterator) lets
/// each chunk's loop vectorise. A producer that yields too few elements
/// panics; it can never leave an element uninitialised.
pub fn build<U: Element, I: Iterator<Item = U>>(
    n: usize,
    values: impl Fn(usize, usize) -> I + Sync + Send,
) -> Vec<U> {
    crate::alloc::ensure::<U>(n);
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let fill = |(i, chunk): (usize, &mut [MaybeUninit<U>])| {
        let (mut written, len) = (0, chunk.len());
        for (slot, v) in chunk.iter_mut().zip(values(i * CHUNK, len)) {
            slot.write(v);
            written += 1;
        }
        assert_eq!(written, len, "build: the producer ended early");
    };
    if n >= PARALLEL_MIN {
        dst.par_chunks_mut(CHUNK).enumerate().for_each(fill);
    } else {
        dst.chunks_mut(CHUNK).enumerate().for_each(fill);
    }
    // SAFETY: every chunk of `dst` covers `out[..n]` and `fill` wrote each
    // element of its chunk (or panicked, leaving `out` empty and dropped).
    unsafe { out.set_len(n) };
    out
}

/// A new vector of `n` elements made of rows of `len`, each zeroed and then
/// filled in place by `fill(row, values)`, in parallel for large `n`. Zeroing
/// row by row, just before use, avoids touching the whole buffer twice.
pub fn build_rows<U: Element>(
    n: usize,
    len: usize,
    fill: impl Fn(usize, &mut [U]) + Sync + Send,
) -> Vec<U> {
    crate::alloc::ensure::<U>(n);
    let mut out: Vec<U> = Vec::with_capacity(n);
    let dst = &mut out.spare_capacity_mut()[..n];
    let row = |(i, chunk): (usize, &mut [MaybeUninit<U>])| {
        chunk.iter_mut().for_each(|x| {
            x.write(U::default());
        });
        // SAFETY: every element of `chunk` was initialised just above.
        let chunk = unsafe { &mut *(chunk as *mut [MaybeUninit<U>] as *mut [U]) };
        fill(i, chunk);
    };
    if n >= PARALLEL_MIN {
        dst.par_chunks_mut(len.max(1)).enumerate().for_each(row);
    } else {
        dst.chunks_mut(len.max(1)).enumerate().for_each(row);
    }
    // SAFETY: the rows cover all `n` elements and each was initialised.
    unsafe { out.set_len(n) };
    out
}

/// `round(decimals=d)`: `x·10^d` rounded half to even, divided back (for
/// negative `d`, `x / 10^-d` rounded, multiplied back), in the element type
/// as PyTorch computes it.
pub fn round_decimals(t: &Tensor, decimals: i64) -> Result<Tensor> {
    if decimals == 0 {
        return unary(Unary::Round, t);
    }
    if !t.dtype().is_float() {
        return Err(TensorError::not_implemented_for("round_cpu", t.dtype()));
    }
    fn round<F: Float + FloatExt + Element>(t: &Tensor, decimals: i64) -> Tensor {
        let scale =
            F::from(10f64.powi(decimals.unsigned_abs().min(400) as i32)).unwrap_or(F::infinity());
        if decimals < 0 {
            map(t, |x: F| (x / scale).round_half_even() * scale)
        } else {
            map(t, |x: F| (x * scale).round_half_even() / scale)
        }
    }
    Ok(match t.dtype() {
        DType::F32 => round::<f32>(t, decimals),
        _ => round::<f64>(t, decimals),
    })
}

/// Applies `f` to every element of `t` (any layout) into a new dense tensor.
pub fn map<T: Element, U: Element>(t: &Tensor, f: impl Fn(T) -> U + Sync + Send) -> Tensor {
    let storage = t.read();
    let src = T::slice(&storage).expect("map: caller converted to T");
    let out: Vec<U> = match t.layout().contiguous_range() {
        Some(r) => {
            let src = &src[r];
            build(src.len(), |start, len| {
                src[start..start + len].iter().map(|&x| f(x))
            })
        }
        None => super::strided::map_strided(t.layout(), src, f),
    };
    Tensor::from_vec(out, t.shape())
}

/// Each element of `xs` replaced by `f` of it, in parallel when large.
fn rewrite<F: Element>(xs: &mut [F], f: impl Fn(F) -> F + Sync + Send) {
    let run = |chunk: &mut [F]| chunk.iter_mut().for_each(|v| *v = f(*v));
    if xs.len() >= PARALLEL_MIN {
        xs.par_chunks_mut(CHUNK).for_each(run);
    } else {
        run(xs);
    }
}

/// `op` applied to `t` in place (`relu_`, `F.relu(x, inplace=True)`): a
/// dense float32/float64 tensor is rewritten where it lies, with the same
/// kernel as [`unary`] (so the values are those `unary` gives); any other
/// is computed by [`unary`] and stored back under PyTorch's cast and shape
/// rules.
pub fn unary_(op: Unary, t: &Tensor) -> Result<()> {
    t.check_writable()?;
    // float32 exp and gelu come from SIMD kernels that read and write
    // separate slices.
    let separate = t.dtype() == DType::F32 && matches!(op, Unary::Exp | Unary::Gelu);
    if let (Some(range), false) = (t.layout().contiguous_range(), separate) {
        let mut storage = t.write();
        if let Some(xs) = f32::slice_mut(&mut storage) {
            op.map_float_in_place(&mut xs[range]);
            return Ok(());
        }
        if let Some(xs) = f64::slice_mut(&mut storage) {
            op.map_float_in_place(&mut xs[range]);
            return Ok(());
        }
    }
    t.assign(&unary(op, t)?)
}

/// `t` (f32) mapped chunk by chunk by a slice kernel `f(src, dst)`.
fn simd_f32(t: &Tensor, f: impl Fn(&[f32], &mut [f32]) + Sync + Send) -> Tensor {
    let values = t
        .with_slice(|src: &[f32]| build_rows(src.len(), CHUNK, |r, dst| f(&src[r * CHUNK..], dst)));
    Tensor::from_vec(values, t.shape())
}

pub fn unary(op: Unary, t: &Tensor) -> Result<Tensor> {
    let dtype = t.dtype();
    // Activations have float kernels only; PyTorch does not promote for them.
    let kernel = match op {
        Unary::Silu => Some("silu_cpu"),
        Unary::Gelu | Unary::GeluTanh => Some("GeluKernelImpl"),
        Unary::Mish => Some("mish_cpu"),
        Unary::Softplus => Some("softplus_cpu"),
        _ => None,
    };
    if let Some(kernel) = kernel
        && !dtype.is_float()
    {
        return Err(TensorError::not_implemented_for(kernel, dtype));
    }
    match (op.kind(), dtype) {
        // float32 `exp` and `gelu` have SIMD kernels (also softmax's exp).
        (_, DType::F32) if op == Unary::Exp => Ok(simd_f32(t, |src, dst| {
            super::fastmath::exp_shifted(src, 0.0, dst)
        })),
        (_, DType::F32) if op == Unary::Gelu => Ok(simd_f32(t, super::fastmath::gelu)),
        (_, DType::F32) => Ok(op.map_float::<f32>(t)),
        (_, DType::F64) => Ok(op.map_float::<f64>(t)),
        (_, DType::F16 | DType::BF16) => Ok(unary(op, &t.to_dtype(DType::F32))?.narrowed_to(dtype)),
        // Integers and bools into a float function: the default float dtype.
        (Kind::Float, _) => match crate::dtype::default_float() {
            DType::F32 => Ok(op.map_float::<f32>(&t.to_dtype(DType::F32))),
            other => unary(op, &t.to_dtype(other)),
        },
        (Kind::Same, DType::U8 | DType::I8 | DType::I16) => {
            Ok(unary(op, &t.to_dtype(DType::I32))?.narrowed_to(dtype))
        }
        // PyTorch's bool rules, op by op.
        (Kind::Same, DType::Bool) => match op {
            Unary::Sign => Ok(t.copy()),
            Unary::Square => unary(op, &t.to_dtype(DType::I64)),
            Unary::Neg => Err(TensorError::not_implemented(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            )),
            Unary::Relu => Err(TensorError::not_implemented(
                "Boolean inputs not supported for relu",
            )),
            Unary::Floor | Unary::Ceil | Unary::Round | Unary::Trunc => Err(
                TensorError::not_implemented_for(format!("{}_vml_cpu", op.name()), DType::Bool),
            ),
            _ => Err(TensorError::not_implemented_for(
                format!("{}_cpu", op.name()),
                DType::Bool,
            )),
        },
        (Kind::Same, DType::I32) => {
            Ok(map(t, |x: i32| op.int(x as i64).unwrap_or_default() as i32))
        }
        (Kind::Same, DType::I64) => Ok(map(t, |x: i64| op.int(x).unwrap_or_default())),
    }
}

macro_rules! binary_ops {
    ($( $variant:ident, $name:literal, $out:ident, |$a:ident, $b:ident| $float:expr, $int:expr; )*) => {
        /// Elementwise binary operations.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Binary { $($variant),* }

        impl Binary {
            pub const ALL: &'static [Binary] = &[$(Binary::$variant),*];

            pub fn name(self) -> &'static str {
                match self { $(Binary::$variant => $name),* }
            }

            fn out(self) -> Out {
                match self { $(Binary::$variant => Out::$out),* }
            }

            /// `zip_map` with this op's float kernel, instantiated per op.
            fn zip_float<F: Float + Element>(self, a: &Tensor, b: &Tensor) -> Tensor {
                match self { $(Binary::$variant => zip_map(a, b, |$a: F, $b: F| -> F { $float })),* }
            }

            /// This op's float kernel writing into `xs` (see [`binary_`]).
            fn zip_float_in_place<F: Float + Element>(self, xs: &mut [F], ys: Rhs<F>) {
                match self { $(Binary::$variant => zip_in_place(xs, ys, |$a: F, $b: F| -> F { $float })),* }
            }

            /// As `zip_float`, for ops whose float kernel yields 0 or 1 as a bool.
            fn zip_float_bool<F: Float + Element>(self, a: &Tensor, b: &Tensor) -> Tensor {
                match self { $(Binary::$variant => zip_map(a, b, |$a: F, $b: F| -> bool { let v: F = $float; v != F::zero() })),* }
            }

            #[inline(always)]
            #[allow(unused_variables)]
            fn int(self, a: i64, b: i64) -> i64 {
                match self { $(Binary::$variant => (|$a: i64, $b: i64| $int)(a, b)),* }
            }
        }
    };
}

/// How a binary op's compute and output dtypes follow from the promoted dtype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Out {
    /// Computes and returns the promoted dtype.
    Promoted,
    /// True division: integers compute in float32.
    FloatPromoted,
    /// Floating dtypes only: integer and bool operands have no kernel.
    Float,
    /// Compares in the promoted dtype, returns bool.
    Compare,
    /// Logical: truthiness of each side, returns bool.
    Logical,
    /// Bitwise: integers and bools only.
    Bitwise,
}

fn b2f<F: Float>(b: bool) -> F {
    if b { F::one() } else { F::zero() }
}

binary_ops! {
    Add, "add", Promoted, |a, b| a + b, a.wrapping_add(b);
    Sub, "sub", Promoted, |a, b| a - b, a.wrapping_sub(b);
    Mul, "mul", Promoted, |a, b| a * b, a.wrapping_mul(b);
    Div, "div", FloatPromoted, |a, b| a / b, 0;
    FloorDivide, "floor_divide", Promoted, |a, b| floor_div_float(a, b), floor_div_int(a, b);
    Remainder, "remainder", Promoted, |a, b| { let r = a % b; if r != F::zero() && ((r < F::zero()) != (b < F::zero())) { r + b } else { r } }, rem_int(a, b);
    Fmod, "fmod", Promoted, |a, b| a % b, if b == 0 { 0 } else { a.wrapping_rem(b) };
    Pow, "pow", Promoted, |a, b| a.powf(b), if b < 0 { 0 } else { a.wrapping_pow(b as u32) };
    Maximum, "maximum", Promoted, |a, b| if a.is_nan() || a > b { a } else { b }, a.max(b);
    Minimum, "minimum", Promoted, |a, b| if a.is_nan() || a < b { a } else { b }, a.min(b);
    // fmax/fmin ignore a NaN when the other side has a number.
    Fmax, "fmax", Promoted, |a, b| if b.is_nan() || a > b { a } else { b }, a.max(b);
    Fmin, "fmin", Promoted, |a, b| if b.is_nan() || a < b { a } else { b }, a.min(b);
    Atan2, "atan2", FloatPromoted, |a, b| a.atan2(b), 0;
    Hypot, "hypot", Float, |a, b| a.hypot(b), 0;
    LogAddExp, "logaddexp", Float, |a, b| log_add_exp(a, b, |d| (-d).exp().ln_1p()), 0;
    LogAddExp2, "logaddexp2", Float, |a, b| log_add_exp(a, b, |d| (-d).exp2().ln_1p() / F::from(std::f64::consts::LN_2).unwrap()), 0;
    Xlogy, "xlogy", FloatPromoted, |a, b| if b.is_nan() { b } else if a == F::zero() { F::zero() } else { a * b.ln() }, 0;
    Copysign, "copysign", FloatPromoted, |a, b| a.copysign(b), 0;
    Heaviside, "heaviside", Promoted, |a, b| if a == F::zero() { b } else { b2f(a > F::zero()) }, if a == 0 { b } else { (a > 0) as i64 };
    Gcd, "gcd", Bitwise, |a, b| { let _ = b; a }, gcd(a, b);
    Lcm, "lcm", Bitwise, |a, b| { let _ = b; a }, { let g = gcd(a, b); if g == 0 { 0 } else { (a / g).wrapping_mul(b).abs() } };
    Eq, "eq", Compare, |a, b| b2f(a == b), (a == b) as i64;
    Ne, "ne", Compare, |a, b| b2f(a != b), (a != b) as i64;
    Lt, "lt", Compare, |a, b| b2f(a < b), (a < b) as i64;
    Le, "le", Compare, |a, b| b2f(a <= b), (a <= b) as i64;
    Gt, "gt", Compare, |a, b| b2f(a > b), (a > b) as i64;
    Ge, "ge", Compare, |a, b| b2f(a >= b), (a >= b) as i64;
    LogicalAnd, "logical_and", Logical, |a, b| b2f(a != F::zero() && b != F::zero()), ((a != 0) && (b != 0)) as i64;
    LogicalOr, "logical_or", Logical, |a, b| b2f(a != F::zero() || b != F::zero()), ((a != 0) || (b != 0)) as i64;
    LogicalXor, "logical_xor", Logical, |a, b| b2f((a != F::zero()) != (b != F::zero())), ((a != 0) != (b != 0)) as i64;
    BitwiseAnd, "bitwise_and", Bitwise, |a, b| { let _ = b; a }, a & b;
    BitwiseOr, "bitwise_or", Bitwise, |a, b| { let _ = b; a }, a | b;
    BitwiseXor, "bitwise_xor", Bitwise, |a, b| { let _ = b; a }, a ^ b;
    // Shifts by a negative amount or past the width give what shifting
    // every bit out gives (PyTorch's kernels, not the hardware's modulo).
    LeftShift, "bitwise_left_shift", Bitwise, |a, b| { let _ = b; a }, if (0..64).contains(&b) { a << b } else { 0 };
    RightShift, "bitwise_right_shift", Bitwise, |a, b| { let _ = b; a }, if (0..64).contains(&b) { a >> b } else { a >> 63 };
}

/// `log(base^a + base^b)` without overflow: the larger exponent plus
/// `tail(|a - b|)`, the log of one plus the smaller term's ratio (both -inf,
/// or both +inf, give that infinity).
fn log_add_exp<F: Float>(a: F, b: F, tail: impl Fn(F) -> F) -> F {
    if a == b && a.is_infinite() {
        return a;
    }
    a.max(b) + tail((a - b).abs())
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

/// Python's (and PyTorch's) float floor division: exact for a finite
/// quotient's remainder, so `-0.5 // inf` is `-1`, not `floor(-0.0)`.
fn floor_div_float<F: Float>(a: F, b: F) -> F {
    if b == F::zero() {
        return a / b;
    }
    let m = a % b;
    let mut div = (a - m) / b;
    if m != F::zero() && ((b < F::zero()) != (m < F::zero())) {
        div = div - F::one();
    }
    if div == F::zero() {
        return (F::zero()).copysign(a / b);
    }
    let floored = div.floor();
    if div - floored > F::from(0.5).expect("representable") {
        floored + F::one()
    } else {
        floored
    }
}

fn floor_div_int(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let q = a.wrapping_div(b);
    if (a.wrapping_rem(b) != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn rem_int(a: i64, b: i64) -> i64 {
    if b == 0 {
        return 0;
    }
    let r = a.wrapping_rem(b);
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

/// One side of a binary op: a tensor or a Python number.
#[derive(Clone, Debug)]
pub enum Arg {
    Tensor(Tensor),
    Scalar(Scalar),
}

impl From<Tensor> for Arg {
    fn from(t: Tensor) -> Arg {
        Arg::Tensor(t)
    }
}

impl From<&Tensor> for Arg {
    fn from(t: &Tensor) -> Arg {
        Arg::Tensor(t.clone())
    }
}

impl From<Scalar> for Arg {
    fn from(s: Scalar) -> Arg {
        Arg::Scalar(s)
    }
}

impl From<f64> for Arg {
    fn from(x: f64) -> Arg {
        Arg::Scalar(Scalar::Float(x))
    }
}

impl Arg {
    pub fn operand(&self) -> Operand {
        match self {
            Arg::Tensor(t) if t.ndim() == 0 => Operand::ZeroDim(t.dtype()),
            Arg::Tensor(t) => Operand::Tensor(t.dtype()),
            Arg::Scalar(s) => Operand::Scalar(s.category()),
        }
    }

    /// A bool tensor or a Python bool.
    fn is_bool(&self) -> bool {
        match self {
            Arg::Tensor(t) => t.dtype() == DType::Bool,
            Arg::Scalar(s) => matches!(s, Scalar::Bool(_)),
        }
    }

    fn to_tensor(&self, dtype: DType) -> Tensor {
        match self {
            Arg::Tensor(t) => t.to_dtype(dtype),
            Arg::Scalar(s) => Tensor::scalar(*s, dtype),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Arg::Tensor(t) => t.shape(),
            Arg::Scalar(_) => &[],
        }
    }
}

/// `op(a, b)` with broadcasting and PyTorch's result-type rules.
pub fn binary(op: Binary, a: &Arg, b: &Arg) -> Result<Tensor> {
    let promoted = result_type(&[a.operand(), b.operand()]);
    if let (Binary::Heaviside, Arg::Tensor(x), Arg::Tensor(y)) = (op, a, b)
        && x.dtype() != y.dtype()
    {
        return Err(TensorError::runtime(
            "heaviside",
            "heaviside is not yet implemented for tensors with different dtypes",
        ));
    }
    let shape = broadcast_shapes(a.shape(), b.shape())
        .ok_or_else(|| TensorError::broadcast(a.shape(), b.shape()))?;
    let compute = match op.out() {
        Out::FloatPromoted if !promoted.is_float() => crate::dtype::default_float(),
        Out::Float if !promoted.is_float() => {
            return Err(TensorError::not_implemented_for(
                format!("{}_cpu", op.name()),
                promoted,
            ));
        }
        Out::Bitwise if promoted.is_float() => {
            return Err(TensorError::not_implemented_for(
                format!("{}_cpu", op.name()),
                promoted,
            ));
        }
        Out::Promoted if promoted == DType::Bool && op == Binary::Sub => {
            return Err(TensorError::not_implemented(
                "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead.",
            ));
        }
        _ if op == Binary::Sub && [a, b].iter().any(|x| x.is_bool()) => {
            return Err(TensorError::not_implemented(
                "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.",
            ));
        }
        Out::Promoted if promoted == DType::Bool && op == Binary::FloorDivide => {
            return Err(TensorError::not_implemented_for(
                "div_floor_cpu",
                DType::Bool,
            ));
        }
        _ => promoted,
    };
    if op == Binary::Pow
        && !compute.is_float()
        && matches!(b, Arg::Scalar(Scalar::Int(e)) if *e < 0)
    {
        return Err(TensorError::runtime(
            "pow",
            "Integers to negative integer powers are not allowed.",
        ));
    }
    // Narrow dtypes compute wide and are stored back narrow.
    let (narrow, compute) = (compute, compute.compute());
    let (ta, tb) = (a.to_tensor(compute), b.to_tensor(compute));
    // Checked before broadcasting: every divisor reaches a non-empty output,
    // and a broadcast scalar is not copied out to the output's size.
    let divides_by_zero = matches!(op, Binary::FloorDivide | Binary::Remainder | Binary::Fmod)
        && !compute.is_float()
        && tb.with_slice(|v: &[i64]| v.contains(&0));
    let (ta, tb) = (ta.broadcast_to(&shape)?, tb.broadcast_to(&shape)?);
    crate::alloc::reserve(ta.numel(), compute)?;
    if divides_by_zero && ta.numel() > 0 {
        // PyTorch raises for integer division by zero, where floats give inf/nan.
        return Err(TensorError::runtime(op.name(), "ZeroDivisionError"));
    }
    let out_bool = matches!(op.out(), Out::Compare | Out::Logical);
    Ok(match compute {
        DType::F32 if out_bool => op.zip_float_bool::<f32>(&ta, &tb),
        DType::F64 if out_bool => op.zip_float_bool::<f64>(&ta, &tb),
        DType::F32 => op.zip_float::<f32>(&ta, &tb),
        DType::F64 => op.zip_float::<f64>(&ta, &tb),
        DType::I64 if out_bool => zip_map(&ta, &tb, |x: i64, y: i64| op.int(x, y) != 0),
        DType::I32 if out_bool => {
            zip_map(&ta, &tb, |x: i32, y: i32| op.int(x as i64, y as i64) != 0)
        }
        DType::Bool if out_bool => {
            zip_map(&ta, &tb, |x: bool, y: bool| op.int(x as i64, y as i64) != 0)
        }
        DType::I64 => zip_map(&ta, &tb, |x: i64, y: i64| op.int(x, y)),
        DType::I32 => zip_map(&ta, &tb, |x: i32, y: i32| op.int(x as i64, y as i64) as i32),
        DType::Bool => zip_map(&ta, &tb, |x: bool, y: bool| op.int(x as i64, y as i64) != 0),
        narrow_dtype => unreachable!("{narrow_dtype} computes as {}", narrow_dtype.compute()),
    }
    .narrowed_to(narrow))
}

/// Applies `f` pairwise over two tensors of the same shape (any layouts).
pub fn zip_map<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> U + Sync + Send,
) -> Tensor {
    let (sa, sb) = (a.read(), b.read());
    let xa = T::slice(&sa).expect("zip_map: caller converted a to T");
    let xb = T::slice(&sb).expect("zip_map: caller converted b to T");
    let n = a.numel();
    let out: Vec<U> = match (a.layout().contiguous_range(), b.layout().contiguous_range()) {
        (Some(ra), Some(rb)) => {
            let (xa, xb) = (&xa[ra], &xb[rb]);
            build(n, |start, len| {
                let range = start..start + len;
                xa[range.clone()]
                    .iter()
                    .zip(&xb[range])
                    .map(|(&x, &y)| f(x, y))
            })
        }
        (Some(ra), None) if b.strides().iter().all(|&s| s == 0) => {
            // A broadcast scalar: the common `x * 0.5` case.
            let (xa, y) = (&xa[ra], xb[b.layout().offset]);
            build(n, |start, len| {
                xa[start..start + len].iter().map(|&x| f(x, y))
            })
        }
        (None, Some(rb)) if a.strides().iter().all(|&s| s == 0) => {
            let (x, xb) = (xa[a.layout().offset], &xb[rb]);
            build(n, |start, len| {
                xb[start..start + len].iter().map(|&y| f(x, y))
            })
        }
        _ => super::strided::zip_strided(a.layout(), xa, b.layout(), xb, f),
    };
    Tensor::from_vec(out, a.shape())
}

/// The right operand of an in-place binary kernel.
#[derive(Clone, Copy)]
enum Rhs<'a, F> {
    /// As many elements as the tensor written, in its order.
    Dense(&'a [F]),
    /// One value for every element.
    Scalar(F),
}

/// `xs[i] = f(xs[i], ys[i])`, in parallel when large.
fn zip_in_place<F: Element>(xs: &mut [F], ys: Rhs<F>, f: impl Fn(F, F) -> F + Sync + Send) {
    let run = |(i, chunk): (usize, &mut [F])| match ys {
        Rhs::Dense(ys) => chunk
            .iter_mut()
            .zip(&ys[i * CHUNK..])
            .for_each(|(x, &y)| *x = f(*x, y)),
        Rhs::Scalar(y) => chunk.iter_mut().for_each(|x| *x = f(*x, y)),
    };
    if xs.len() >= PARALLEL_MIN {
        xs.par_chunks_mut(CHUNK).enumerate().for_each(run);
    } else {
        xs.chunks_mut(CHUNK).enumerate().for_each(run);
    }
}

/// `op` of `x` and `other` written into `x` (`add_`, `mul_`, `x += y`): a
/// dense float32/float64 `x` whose result keeps its dtype, against a
/// number or a dense (or broadcast single-value) tensor of its dtype in
/// another storage, is rewritten where it lies with [`binary`]'s kernel;
/// anything else is computed by [`binary`] and stored back under
/// PyTorch's cast and shape rules.
pub fn binary_(op: Binary, x: &Tensor, other: &Arg) -> Result<()> {
    let dtype = x.dtype();
    // PyTorch checks the output before it looks for a kernel: an expanded
    // `x`, then a result it could not store.
    x.check_writable()?;
    let promoted = result_type(&[Operand::Tensor(dtype), other.operand()]);
    let result = match op.out() {
        Out::FloatPromoted if !promoted.is_float() => crate::dtype::default_float(),
        Out::Compare | Out::Logical => dtype,
        _ => promoted,
    };
    if result.category() > dtype.category() {
        return Err(TensorError::InplaceCast {
            from: result,
            to: dtype,
        });
    }
    let keeps = matches!(dtype, DType::F32 | DType::F64)
        && matches!(op.out(), Out::Promoted | Out::FloatPromoted | Out::Float)
        && result_type(&[Operand::Tensor(dtype), other.operand()]) == dtype;
    if let (true, Some(range)) = (keeps, x.layout().contiguous_range()) {
        // A number is the one-element tensor `binary` makes of it.
        let y = match other {
            Arg::Scalar(_) => Some(other.to_tensor(dtype)),
            Arg::Tensor(t) if t.dtype() == dtype => Some(t.clone()),
            Arg::Tensor(_) => None,
        };
        // One that does not broadcast to `x` gets PyTorch's error below.
        let done = y
            .and_then(|y| y.broadcast_to(x.shape()).ok())
            .and_then(|y| {
                let single = y.strides().iter().all(|&s| s == 0);
                let offset = y.layout().offset;
                let from = match y.layout().contiguous_range() {
                    Some(r) => r,
                    None if single => offset..offset + 1,
                    None => return None,
                };
                x.write_reading(&y, |dst, src| {
                    if dtype == DType::F32 {
                        in_place_with::<f32>(op, dst, range, src, from, single)
                    } else {
                        in_place_with::<f64>(op, dst, range, src, from, single)
                    }
                })
            });
        if done.is_some() {
            return Ok(());
        }
    }
    x.assign(&binary(op, &Arg::Tensor(x.clone()), other)?)
}

/// [`binary_`]'s kernel call on the storages: `dst[range]` with `src[from]`
/// (one value for all when `single`).
fn in_place_with<F: Float + Element>(
    op: Binary,
    dst: &mut crate::storage::Storage,
    range: std::ops::Range<usize>,
    src: &crate::storage::Storage,
    from: std::ops::Range<usize>,
    single: bool,
) {
    let xs = &mut F::slice_mut(dst).expect("x is F")[range];
    if xs.is_empty() {
        return; // nor has a broadcast operand a value to read
    }
    let ys = &F::slice(src).expect("other is F")[from];
    let ys = if single {
        Rhs::Scalar(ys[0])
    } else {
        Rhs::Dense(ys)
    };
    op.zip_float_in_place(xs, ys);
}

/// `torch.where(cond, a, b)`.
pub fn where_(cond: &Tensor, a: &Arg, b: &Arg) -> Result<Tensor> {
    if !matches!(cond.dtype(), DType::Bool | DType::U8) {
        return Err(TensorError::runtime(
            "where",
            format!(
                "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
                crate::error::legacy_name(cond.dtype())
            ),
        ));
    }
    let dtype = result_type(&[a.operand(), b.operand()]);
    let shape = broadcast_shapes(cond.shape(), a.shape())
        .and_then(|s| broadcast_shapes(&s, b.shape()))
        .ok_or_else(|| TensorError::broadcast(cond.shape(), a.shape()))?;
    let c = cond
        .to_dtype(DType::Bool)
        .broadcast_to(&shape)?
        .to_vec::<bool>();
    let (ta, tb) = (
        a.to_tensor(dtype).broadcast_to(&shape)?,
        b.to_tensor(dtype).broadcast_to(&shape)?,
    );
    Ok(with_dtype!(dtype, T => {
        let (va, vb) = (ta.to_vec::<T>(), tb.to_vec::<T>());
        let out: Vec<T> = c.iter().zip(va.into_iter().zip(vb)).map(|(&c, (x, y))| if c { x } else { y }).collect();
        Tensor::from_vec(out, &shape)
    }))
}

/// `clamp(t, min, max)`: either bound may be absent.
pub fn clamp(t: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        return Err(TensorError::runtime(
            "clamp",
            "torch.clamp: At least one of 'min' or 'max' must not be None",
        ));
    }
    let mut operands = vec![Operand::Tensor(t.dtype())];
    operands.extend(
        min.iter()
            .chain(max.iter())
            .map(|s| Operand::Scalar(s.category())),
    );
    let dtype = result_type(&operands);
    let t = t.to_dtype(dtype);
    Ok(with_dtype!(dtype, T => {
        let (lo, hi) = (min.map(T::from_scalar), max.map(T::from_scalar));
        use std::cmp::Ordering;
        // A NaN bound gives NaN, as a NaN element stays NaN.
        #[allow(clippy::eq_op)]
        let is_nan = |v: T| v != v;
        map(&t, move |x: T| {
            let x = match lo {
                Some(lo) if is_nan(lo) || x.partial_cmp(&lo) == Some(Ordering::Less) => lo,
                _ => x,
            };
            match hi {
                Some(hi) if is_nan(hi) || x.partial_cmp(&hi) == Some(Ordering::Greater) => hi,
                _ => x,
            }
        })
    }))
}

#[cfg(test)]
mod tests {
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    use super::*;

    /// A random view of a 64-element base holding 0, 1, 2, …: any sizes,
    /// strides (0 = expanded, out of order = transposed) and offset that
    /// stay inside the base, plus its elements computed directly from them.
    fn random_view(rng: &mut SmallRng, shape: &[usize]) -> (Tensor, Vec<f32>) {
        let base = Tensor::from_vec((0..64).map(|i| i as f32).collect(), &[64]);
        loop {
            let strides: Vec<usize> = shape.iter().map(|_| rng.random_range(0..5)).collect();
            let offset = rng.random_range(0..8);
            let last = offset
                + shape
                    .iter()
                    .zip(&strides)
                    .map(|(d, s)| (d - 1) * s)
                    .sum::<usize>();
            if last >= 64 {
                continue;
            }
            let view = base.as_strided(shape, &strides, offset).unwrap();
            let n: usize = shape.iter().product();
            let values = (0..n)
                .map(|flat| {
                    let (mut rest, mut at) = (flat, offset);
                    for (d, s) in shape.iter().zip(&strides).rev() {
                        at += (rest % d) * s;
                        rest /= d;
                    }
                    at as f32
                })
                .collect();
            return (view, values);
        }
    }

    /// The element of an operand of shape `shape` that output index `flat`
    /// (of `out`) reads under broadcasting, in row-major order.
    fn broadcast_index(out: &[usize], shape: &[usize], flat: usize) -> usize {
        let mut idx = vec![0; out.len()];
        let mut rest = flat;
        for (i, d) in out.iter().enumerate().rev() {
            idx[i] = rest % d;
            rest /= d;
        }
        let skip = out.len() - shape.len();
        shape.iter().enumerate().fold(0, |acc, (i, &d)| {
            acc * d + if d == 1 { 0 } else { idx[skip + i] }
        })
    }

    #[test]
    fn binary_ops_on_random_broadcast_strided_views_match_a_naive_loop() {
        let mut rng = SmallRng::seed_from_u64(7);
        type Reference = fn(f32, f32) -> f32;
        let ops: [(Binary, Reference); 4] = [
            (Binary::Add, |a, b| a + b),
            (Binary::Sub, |a, b| a - b),
            (Binary::Mul, |a, b| a * b),
            (Binary::Maximum, f32::max),
        ];
        for _ in 0..500 {
            let rank = rng.random_range(0..4);
            let out: Vec<usize> = (0..rank).map(|_| rng.random_range(1..5)).collect();
            // Each side drops some leading dims and sets some to 1.
            let side = |rng: &mut SmallRng| -> Vec<usize> {
                let keep = rng.random_range(0..=rank);
                out[rank - keep..]
                    .iter()
                    .map(|&d| if rng.random_bool(0.3) { 1 } else { d })
                    .collect()
            };
            let (sa, sb) = (side(&mut rng), side(&mut rng));
            let (a, va) = random_view(&mut rng, &sa);
            let (b, vb) = random_view(&mut rng, &sb);
            let full = crate::layout::broadcast_shapes(&sa, &sb).unwrap();
            let (op, f) = ops[rng.random_range(0..ops.len())];
            let got = binary(op, &Arg::Tensor(a), &Arg::Tensor(b)).unwrap();
            assert_eq!(got.shape(), &full[..]);
            let n: usize = full.iter().product();
            let want: Vec<f32> = (0..n)
                .map(|i| {
                    f(
                        va[broadcast_index(&full, &sa, i)],
                        vb[broadcast_index(&full, &sb, i)],
                    )
                })
                .collect();
            assert_eq!(
                got.to_vec::<f32>(),
                want,
                "{} of {sa:?} and {sb:?}",
                op.name()
            );
        }
    }

    /// Forty values either side of zero, for the in-place tests.
    fn sample() -> Vec<f64> {
        (0..40).map(|i| (i as f64 - 17.5) * 0.3).collect()
    }

    /// Each element's bits (one value for every NaN), to compare exactly.
    fn bits(t: &Tensor) -> Vec<u64> {
        t.to_vec::<f64>()
            .iter()
            .map(|v| if v.is_nan() { u64::MAX } else { v.to_bits() })
            .collect()
    }

    #[test]
    fn unary_in_place_gives_what_unary_gives_and_writes_the_views_storage() {
        let data = sample();
        for &op in Unary::ALL {
            for dtype in [DType::F32, DType::F64] {
                // A dense view inside a larger storage (rewritten where it
                // lies), and a transposed one (computed and stored back).
                for dense in [true, false] {
                    let base = Tensor::from_vec(data.clone(), &[5, 8]).to_dtype(dtype);
                    let view = if dense {
                        super::super::shape::narrow(&base, 0, 1, 3).unwrap()
                    } else {
                        super::super::shape::transpose(&base, 0, 1).unwrap()
                    };
                    let expected = unary(op, &view).unwrap();
                    let untouched = bits(&base)[..8].to_vec();
                    unary_(op, &view).unwrap();
                    assert_eq!(
                        bits(&view),
                        bits(&expected),
                        "{op:?} {dtype:?} dense={dense}"
                    );
                    if dense {
                        assert_eq!(bits(&base)[..8], untouched, "{op:?}: outside the view");
                    }
                }
            }
        }
    }

    #[test]
    fn binary_in_place_on_an_empty_tensor_reads_no_operand() {
        // A value broadcast to no elements has none to read (this panicked).
        let x = Tensor::from_vec(Vec::<f32>::new(), &[0, 3]);
        for other in [
            Arg::Scalar(Scalar::Float(2.0)),
            Arg::Tensor(Tensor::scalar(Scalar::Float(1.0), DType::F32)),
            Arg::Tensor(Tensor::from_vec(vec![1.0f32; 3], &[3])),
        ] {
            binary_(Binary::Add, &x, &other).unwrap();
            assert_eq!(x.shape(), [0, 3]);
        }
    }

    #[test]
    fn binary_in_place_gives_what_binary_gives_for_every_operand_kind() {
        use super::super::shape::{narrow, transpose};
        let data = sample();
        let fresh = |dtype| Tensor::from_vec(data.clone(), &[5, 8]).to_dtype(dtype);
        for &op in Binary::ALL {
            for dtype in [DType::F32, DType::F64] {
                // Right operands: a number, a dense tensor, a single value
                // broadcast, a broadcast row, a transposed view, another
                // dtype (promoting: an error), the written tensor itself,
                // one that broadcasts `x` to more dims (PyTorch's error).
                let others = |x: &Tensor| {
                    let y = Tensor::from_vec(data.iter().map(|v| v * 0.7 - 1.0).collect(), &[5, 8])
                        .to_dtype(dtype);
                    vec![
                        Arg::Scalar(Scalar::Float(0.37)),
                        Arg::Scalar(Scalar::Int(-3)),
                        Arg::Tensor(y.clone()),
                        Arg::Tensor(Tensor::scalar(Scalar::Float(1.5), dtype)),
                        Arg::Tensor(narrow(&y, 0, 2, 1).unwrap()),
                        Arg::Tensor(
                            transpose(&transpose(&y, 0, 1).unwrap().contiguous(), 0, 1).unwrap(),
                        ),
                        Arg::Tensor(y.to_dtype(if dtype == DType::F32 {
                            DType::F64
                        } else {
                            DType::F32
                        })),
                        Arg::Tensor(x.clone()),
                        Arg::Tensor(Tensor::from_vec(vec![1.0f64; 80], &[2, 5, 8]).to_dtype(dtype)),
                    ]
                };
                for k in 0..9 {
                    let x = fresh(dtype);
                    let other = others(&x).swap_remove(k);
                    let expected = binary(op, &Arg::Tensor(x.clone()), &other);
                    let result = binary_(op, &x, &other);
                    match expected {
                        Ok(e) if e.shape() != x.shape() => assert!(
                            matches!(result, Err(TensorError::InplaceShape { .. })),
                            "{op:?} {dtype:?} operand {k}"
                        ),
                        Ok(e) if e.dtype() == dtype => {
                            result.unwrap();
                            assert_eq!(bits(&x), bits(&e), "{op:?} {dtype:?} operand {k}");
                        }
                        // Bool results and promotions cannot be stored back.
                        Ok(e) if e.dtype().category() > dtype.category() => {
                            assert!(result.is_err(), "{op:?} {dtype:?} operand {k}")
                        }
                        Ok(e) => {
                            result.unwrap();
                            assert_eq!(
                                bits(&x),
                                bits(&e.to_dtype(dtype)),
                                "{op:?} {dtype:?} operand {k}"
                            );
                        }
                        Err(_) => assert!(result.is_err(), "{op:?} {dtype:?} operand {k}"),
                    }
                }
            }
        }
    }

    #[test]
    fn unary_ops_on_random_strided_views_match_a_naive_loop() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..200 {
            let shape: Vec<usize> = (0..rng.random_range(0..4))
                .map(|_| rng.random_range(1..6))
                .collect();
            let (x, values) = random_view(&mut rng, &shape);
            let got = unary(Unary::Sqrt, &x).unwrap().to_vec::<f32>();
            let want: Vec<f32> = values.iter().map(|v| v.sqrt()).collect();
            assert_eq!(got, want, "sqrt of a {shape:?} view");
        }
    }

    #[test]
    fn large_outputs_are_built_in_parallel_chunks_in_order() {
        let n = PARALLEL_MIN * 3 + 17;
        let src: Vec<i64> = (0..n as i64).collect();
        let out = build(n, |start, len| {
            src[start..start + len].iter().map(|x| x * 2)
        });
        assert!(out.iter().enumerate().all(|(i, &v)| v == 2 * i as i64));
    }

    #[test]
    #[should_panic(expected = "the producer ended early")]
    fn a_producer_that_ends_early_panics_instead_of_leaving_garbage() {
        build::<f32, _>(10, |_, len| std::iter::repeat_n(1.0, len - 1));
    }
}
