//! Unary elementwise ops: the `Unary` table (name, output dtype rule,
//! float and integer bodies) and its kernels, out of place and in place.

use num_traits::Float;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::storage::Element;
use crate::tensor::Tensor;

use super::build::{CHUNK, build_rows, map, rewrite};
use super::special::{FloatExt, gelu_tanh, sigmoid, softplus};

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

/// `op` applied to `t` in place (`relu_`, `F.relu(x, inplace=True)`): a
/// dense float32/float64 tensor is rewritten where it lies, with the same
/// kernel as [`unary`] (so the values are those `unary` gives); any other
/// is computed by [`unary`] and stored back under PyTorch's cast and shape
/// rules.
pub fn unary_(op: Unary, t: &Tensor) -> Result<()> {
    t.check_writable()?;
    // float32 exp, sigmoid, tanh and the gelus come from SIMD kernels that read
    // and write separate slices.
    let separate = t.dtype() == DType::F32
        && matches!(
            op,
            Unary::Exp | Unary::Sigmoid | Unary::Tanh | Unary::Gelu | Unary::GeluTanh
        );
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
        // float32 `exp`, `sigmoid`, `tanh` and both `gelu`s have SIMD kernels
        // (also softmax's exp and the recurrent cells' activations). `tanh`
        // is correctly rounded, as PyTorch's is to all but 0.1% of inputs:
        // glibc's `tanhf` or the recurrent cells' 1.1-ulp one move printed
        // float32 training losses.
        (_, DType::F32) if op == Unary::Exp => Ok(simd_f32(t, |src, dst| {
            crate::ops::fastmath::exp_shifted(src, 0.0, dst)
        })),
        (_, DType::F32) if op == Unary::Sigmoid => Ok(simd_f32(t, |src, dst| {
            dst.copy_from_slice(&src[..dst.len()]);
            crate::ops::fastmath::sigmoid_in_place(dst)
        })),
        (_, DType::F32) if op == Unary::Tanh => Ok(simd_f32(t, crate::ops::fastmath::tanh)),
        (_, DType::F32) if op == Unary::GeluTanh => {
            Ok(simd_f32(t, crate::ops::fastmath::gelu_tanh))
        }
        (_, DType::F32) if op == Unary::Gelu => Ok(simd_f32(t, crate::ops::fastmath::gelu)),
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
