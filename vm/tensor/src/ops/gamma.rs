//! The derivatives of `lgamma`: digamma ψ = Γ'/Γ, and polygamma ψ⁽ⁿ⁾, its
//! n-th derivative. Both follow PyTorch at the poles and infinities
//! (digamma(±0) = ∓inf, nan at negative integers; trigamma from the
//! reflection formula, so finite but huge at negative integers).

use std::f64::consts::PI;

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::tensor::Tensor;

use super::elementwise::{FloatExt, Unary, map, unary};

/// The Bernoulli numbers B₂, B₄, …, B₂₄, which every asymptotic series
/// here is made of.
const BERNOULLI: [f64; 12] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
    43867.0 / 798.0,
    -174611.0 / 330.0,
    854513.0 / 138.0,
    -236364091.0 / 2730.0,
];

/// Digamma in float64: the reflection formula below zero, the recurrence
/// `ψ(x) = ψ(x + 1) - 1/x` up to 10, then the asymptotic series.
pub fn digamma(x: f64) -> f64 {
    if x == 0.0 {
        // PyTorch's sign convention: ψ(+0) = -inf, ψ(-0) = +inf.
        return f64::INFINITY.copysign(-x);
    }
    if x < 0.0 {
        if x == x.trunc() {
            return f64::NAN;
        }
        return digamma(1.0 - x) - PI / (PI * x).tan();
    }
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    let (mut x, mut shift) = (x, 0.0);
    while x < 10.0 {
        shift -= 1.0 / x;
        x += 1.0;
    }
    // ψ(x) ~ ln x - 1/2x - Σ B₂ₖ / (2k x²ᵏ)
    let z = 1.0 / (x * x);
    let series = (1..=7)
        .rev()
        .fold(0.0, |acc, k| acc * z + BERNOULLI[k - 1] / (2 * k) as f64)
        * z;
    shift + x.ln() - 0.5 / x - series
}

/// Trigamma in float64: the reflection `ψ'(x) = π²/sin²(πx) - ψ'(1 - x)`
/// below one half, the recurrence up to 10, then the asymptotic series.
fn trigamma(x: f64) -> f64 {
    if x < 0.5 {
        let s = (PI * x).sin();
        return PI * PI / (s * s) - trigamma(1.0 - x);
    }
    let (mut x, mut sum) = (x, 0.0);
    while x < 10.0 {
        sum += 1.0 / (x * x);
        x += 1.0;
    }
    // ψ'(x) ~ 1/x + 1/2x² + Σ B₂ₖ / x²ᵏ⁺¹
    let z = 1.0 / (x * x);
    let series = BERNOULLI[..8].iter().rev().fold(0.0, |acc, &b| acc * z + b) * z;
    sum + (1.0 + 0.5 / x + series) / x
}

/// The Hurwitz zeta function `ζ(s, q) = Σₖ (q + k)^-s` for s > 1: terms
/// summed directly until `q + k` passes 9, then the Euler–Maclaurin tail.
fn zeta(s: f64, q: f64) -> f64 {
    if s == 1.0 {
        return f64::INFINITY;
    }
    if s < 1.0 {
        return f64::NAN;
    }
    if q <= 0.0 {
        if q == q.floor() {
            return f64::INFINITY;
        }
        if s != s.floor() {
            // A negative base to a fractional power.
            return f64::NAN;
        }
    }
    let mut sum = q.powf(-s);
    let (mut a, mut term) = (q, 0.0);
    let mut i = 0;
    while i < 9 || a <= 9.0 {
        i += 1;
        a += 1.0;
        term = a.powf(-s);
        sum += term;
        if (term / sum).abs() < f64::EPSILON / 2.0 {
            return sum;
        }
    }
    // Tail from `a`: the integral, half the first term, then the
    // Bernoulli corrections `B₂ₖ/(2k)! · s(s+1)…(s+2k-2) · a^(-s-2k+1)`.
    let w = a;
    sum += term * w / (s - 1.0);
    sum -= 0.5 * term;
    let (mut rising, mut k, mut factorial) = (1.0, 0.0, 1.0);
    for b in BERNOULLI {
        rising *= s + k;
        term /= w;
        factorial *= (k + 1.0) * (k + 2.0);
        let t = rising * term * b / factorial;
        sum += t;
        if (t / sum).abs() < f64::EPSILON / 2.0 {
            break;
        }
        k += 1.0;
        rising *= s + k;
        term /= w;
        k += 1.0;
    }
    sum
}

/// ψ⁽ⁿ⁾(x) in float64: digamma, trigamma, else `(-1)ⁿ⁺¹ n! ζ(n + 1, x)`.
pub fn polygamma_f64(n: u32, x: f64) -> f64 {
    match n {
        0 => digamma(x),
        1 => trigamma(x),
        _ => {
            let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
            let factorial: f64 = (1..=n).map(f64::from).product();
            sign * factorial * zeta(f64::from(n) + 1.0, x)
        }
    }
}

/// `torch.polygamma(n, input)`: integer inputs compute in the default
/// float dtype, half precision in float32.
pub fn polygamma(n: i64, t: &Tensor) -> Result<Tensor> {
    let Ok(n) = u32::try_from(n) else {
        return Err(TensorError::runtime(
            "polygamma",
            "polygamma(n, x) does not support negative n.",
        ));
    };
    if n == 0 {
        return unary(Unary::Digamma, t);
    }
    let dtype = t.dtype();
    Ok(match dtype {
        DType::F64 => map(t, move |x: f64| polygamma_f64(n, x)),
        DType::F32 => map(t, move |x: f32| x.polygamma(n)),
        DType::F16 | DType::BF16 => {
            polygamma(n.into(), &t.to_dtype(DType::F32))?.narrowed_to(dtype)
        }
        _ => polygamma(n.into(), &t.to_dtype(crate::dtype::default_float()))?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!(
            (a - b).abs() <= 1e-13 * b.abs().max(1.0),
            "{a} vs {b} (differ by {})",
            a - b
        );
    }

    /// Values from mpmath (50 digits), rounded to float64.
    #[test]
    fn digamma_matches_reference_values() {
        close(digamma(1.0), -0.5772156649015329);
        close(digamma(0.5), -1.9635100260214235);
        close(digamma(6.5), 1.792911330399933);
        close(digamma(30.0), 3.384438132685525);
        close(digamma(-2.5), 1.103156640645243);
        close(digamma(1e-8), -100000000.57721564);
        assert_eq!(digamma(0.0), f64::NEG_INFINITY);
        assert_eq!(digamma(-0.0), f64::INFINITY);
        assert!(digamma(-1.0).is_nan() && digamma(f64::NEG_INFINITY).is_nan());
        assert_eq!(digamma(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn polygamma_matches_reference_values() {
        close(polygamma_f64(1, 1.0), PI * PI / 6.0);
        close(polygamma_f64(1, 0.5), PI * PI / 2.0);
        close(polygamma_f64(1, 6.5), 0.16628453574995825);
        close(polygamma_f64(2, 1.0), -2.4041138063191885);
        close(polygamma_f64(2, 0.5), -16.82879664423432);
        close(polygamma_f64(3, 1.0), PI.powi(4) / 15.0);
        close(polygamma_f64(3, -2.5), 194.74787621918762);
        close(polygamma_f64(4, 30.0), -7.914941340181023e-6);
        assert_eq!(polygamma_f64(1, 0.0), f64::INFINITY);
        assert_eq!(polygamma_f64(2, 0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn negative_orders_are_refused_and_integers_promote() {
        let t = Tensor::from_vec(vec![1i64, 2], &[2]);
        assert!(polygamma(-1, &t).is_err());
        let y = polygamma(1, &t).unwrap();
        assert_eq!(y.dtype(), DType::F32);
    }
}
