//! Binary elementwise ops with broadcasting and type promotion: the
//! `Binary` table and its kernels, `where`, `clamp`.

use num_traits::Float;
use rayon::prelude::*;

use crate::dtype::{DType, Operand, Scalar, result_type};
use crate::error::{Result, TensorError};
use crate::layout::broadcast_shapes;
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

use super::build::{CHUNK, build, map};
use super::special::{b2f, floor_div_float, floor_div_int, gcd, log_add_exp, rem_int};
use crate::ops::PARALLEL_MIN;

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
        _ => crate::ops::strided::zip_strided(a.layout(), xa, b.layout(), xb, f),
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
    // `x`, an operand that does not broadcast to its shape, then a result
    // it could not store.
    x.check_writable()?;
    if let Arg::Tensor(y) = other {
        let shape = crate::layout::broadcast_shapes(x.shape(), y.shape())
            .ok_or_else(|| TensorError::broadcast(x.shape(), y.shape()))?;
        if shape != x.shape() {
            return Err(TensorError::InplaceShape {
                output: x.shape().to_vec(),
                broadcast: shape,
            });
        }
    }
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
        // A tensor operand broadcasts to `x` (checked above).
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
