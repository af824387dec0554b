//! Scalar functions the elementwise kernels are made of: sigmoid, softplus,
//! tanh-approximated gelu, `erf`/`erfinv`/`lgamma`/`polygamma` for floats
//! (`FloatExt`), and the integer and float division, remainder and
//! log-add-exp rules PyTorch's kernels follow.

use num_traits::Float;

#[inline(always)]
pub(crate) fn sigmoid<F: Float>(x: F) -> F {
    F::one() / (F::one() + (-x).exp())
}

#[inline(always)]
pub(super) fn softplus<F: Float>(x: F) -> F {
    // PyTorch's threshold: above 20 softplus(x) is x to float precision.
    if x > F::from(20.0).unwrap() {
        x
    } else {
        x.exp().ln_1p()
    }
}

#[inline(always)]
pub(super) fn gelu_tanh<F: Float>(x: F) -> F {
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
pub(super) fn erfinv_f64(y: f64) -> f64 {
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
        crate::ops::gamma::polygamma_f64(n, f64::from(self)) as f32
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
        crate::ops::gamma::polygamma_f64(n, self)
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

pub(super) fn b2f<F: Float>(b: bool) -> F {
    if b { F::one() } else { F::zero() }
}

/// `log(base^a + base^b)` without overflow: the larger exponent plus
/// `tail(|a - b|)`, the log of one plus the smaller term's ratio (both -inf,
/// or both +inf, give that infinity).
pub(super) fn log_add_exp<F: Float>(a: F, b: F, tail: impl Fn(F) -> F) -> F {
    if a == b && a.is_infinite() {
        return a;
    }
    a.max(b) + tail((a - b).abs())
}

pub(super) fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

/// Python's (and PyTorch's) float floor division: exact for a finite
/// quotient's remainder, so `-0.5 // inf` is `-1`, not `floor(-0.0)`.
pub(super) fn floor_div_float<F: Float>(a: F, b: F) -> F {
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

pub(super) fn floor_div_int(a: i64, b: i64) -> i64 {
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

pub(super) fn rem_int(a: i64, b: i64) -> i64 {
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
