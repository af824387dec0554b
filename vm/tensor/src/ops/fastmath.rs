//! Vectorisable `exp`, `sigmoid`, `tanh` and `gelu` for f32 slices, the
//! inner loops of softmax, the recurrent cells and transformer MLPs.
//! Cephes' polynomials (a few ulp); inputs outside their range (and NaN)
//! are redone with the scalar functions.

const LOG2E: f32 = std::f32::consts::LOG2_E;
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting 1.5·2²³ rounds an f32 to the nearest integer.
const ROUND: f32 = 12_582_912.0;
const MIN: f32 = -87.0;
const MAX: f32 = 88.0;
/// Below this `exp` rounds to 0 in f32 (exp(-104) ≈ 6.8e-46, under half
/// the smallest subnormal).
const UNDERFLOW: f32 = -104.0;

#[inline(always)]
#[allow(clippy::excessive_precision)] // the polynomial's coefficients as fitted
fn exp_in_range(x: f32) -> f32 {
    // `max`/`min` also turn NaN into MIN (callers redo NaN inputs).
    #[allow(clippy::manual_clamp)]
    // clamp panics on NaN bounds checks and keeps NaN; this must not.
    let x = x.max(MIN).min(MAX);
    let n = (x * LOG2E + ROUND) - ROUND;
    let r = x - n * LN2_HI - n * LN2_LO;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 5.000_000_1e-1;
    let y = p * r * r + r + 1.0;
    // SAFETY: `n` is an integral float within [-126, 127], as `x` was clamped;
    // the unchecked conversion (unlike `as`) vectorises.
    let n: i32 = unsafe { n.to_int_unchecked() };
    y * f32::from_bits(((n + 127) << 23) as u32)
}

/// `dst[i] = exp(src[i] - shift)`; compiled for each SIMD level, picked at run time.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn exp_shifted(src: &[f32], shift: f32, dst: &mut [f32]) {
    let mut outside = false;
    for (o, &x) in dst.iter_mut().zip(src) {
        let v = x - shift;
        // Far below the range `exp` is exactly 0 (a masked score's -inf):
        // no scalar redo for those.
        let zero = v < UNDERFLOW;
        outside |= !((MIN..=MAX).contains(&v) || zero);
        *o = if zero { 0.0 } else { exp_in_range(v) };
    }
    if outside {
        for (o, &x) in dst.iter_mut().zip(src) {
            let v = x - shift;
            if !((MIN..=MAX).contains(&v) || v < UNDERFLOW) {
                *o = v.exp();
            }
        }
    }
}

#[inline(always)]
fn sigmoid_fast(x: f32) -> f32 {
    1.0 / (1.0 + exp_in_range(-x))
}

#[inline(always)]
#[allow(clippy::excessive_precision)] // the polynomial's coefficients as fitted
fn tanh_fast(x: f32) -> f32 {
    let a = x.abs();
    let z = x * x;
    let small = ((((-5.704_988_727_45e-3 * z + 2.063_908_879_54e-2) * z - 5.373_971_555_31e-2)
        * z
        + 1.333_144_220_36e-1)
        * z
        - 3.333_328_194_22e-1)
        * z
        * x
        + x;
    // exp clamps at 88: past it the quotient is 1 to float precision.
    let big = (1.0 - 2.0 / (exp_in_range(2.0 * a) + 1.0)).copysign(x);
    if a > 0.625 { big } else { small }
}

/// `v[i] = sigmoid(v[i])`, as `1 / (1 + exp(-x))`.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn sigmoid_in_place(v: &mut [f32]) {
    // Below -88 the result is subnormal, past the fast exp's range.
    let inside = |x: &f32| (-MAX..=-MIN).contains(x);
    if v.iter().fold(true, |all, x| all & inside(x)) {
        v.iter_mut().for_each(|x| *x = sigmoid_fast(*x));
    } else {
        v.iter_mut().for_each(|x| {
            *x = if inside(x) {
                sigmoid_fast(*x)
            } else {
                // exp(-x) overflows f32 before the result underflows.
                (1.0 / (1.0 + (-f64::from(*x)).exp())) as f32
            }
        });
    }
}

/// `v[i] = tanh(v[i])`: Cephes' odd polynomial below 0.625 in magnitude,
/// `1 - 2 / (exp(2|x|) + 1)` with the sign of `x` above.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn tanh_in_place(v: &mut [f32]) {
    if v.iter().fold(false, |nan, x| nan | x.is_nan()) {
        v.iter_mut().for_each(|x| *x = x.tanh());
    } else {
        v.iter_mut().for_each(|x| *x = tanh_fast(*x));
    }
}

/// `erf(x)` to 1.5e-7 absolute (Abramowitz & Stegun 7.1.26, the
/// approximation PyTorch's vectorised CPU kernels use): enough for `gelu`,
/// where it is added to 1, not for `erf` itself near 0.
#[inline(always)]
#[allow(clippy::excessive_precision)] // the published coefficients
fn erf_near(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + 0.327_591_1 * a);
    let poly = ((((1.061_405_429 * t - 1.453_152_027) * t + 1.421_413_741) * t - 0.284_496_736)
        * t
        + 0.254_829_592)
        * t;
    // Past |x| ≈ 9.3 exp clamps at e^-87: the product is 0 to f32 either way.
    (1.0 - poly * exp_in_range(-a * a)).copysign(x)
}

/// `dst[i] = gelu(src[i])`, `x/2 · (1 + erf(x/√2))`; NaN stays NaN.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn gelu(src: &[f32], dst: &mut [f32]) {
    for (o, &x) in dst.iter_mut().zip(src) {
        *o = 0.5 * x * (1.0 + erf_near(x * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// `dst[i] = g[i] · gelu'(x[i])`, `gelu'(x) = Φ(x) + x·φ(x)`: the
/// gradient through `gelu` (exact form); NaN stays NaN.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn gelu_backward(g: &[f32], x: &[f32], dst: &mut [f32]) {
    // 1/√(2π)
    const INV_SQRT_2PI: f32 = 0.398_942_3;
    for ((o, &g), &x) in dst.iter_mut().zip(g).zip(x) {
        let cdf = 0.5 * (1.0 + erf_near(x * std::f32::consts::FRAC_1_SQRT_2));
        let v = -0.5 * x * x;
        // Below MIN the density is 0 to f32 (and exp's range ends there).
        let pdf = if v < MIN {
            0.0
        } else {
            INV_SQRT_2PI * exp_in_range(v)
        };
        *o = g * (cdf + x * pdf);
    }
    if x.iter().fold(false, |nan, x| nan | x.is_nan()) {
        for (o, &x) in dst.iter_mut().zip(x) {
            if x.is_nan() {
                *o = f32::NAN;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(got: f32, want: f64) -> i64 {
        let want = want as f32;
        (got.to_bits() as i64 - want.to_bits() as i64).abs()
    }

    #[test]
    fn sigmoid_and_tanh_are_within_a_few_ulp() {
        let xs: Vec<f32> = (-40000..=40000)
            .map(|i| i as f32 * 0.0025)
            .chain([
                1e-30,
                -1e-8,
                3e-4,
                -100.0,
                -90.0,
                90.0,
                1e10,
                f32::NEG_INFINITY,
                f32::INFINITY,
            ])
            .collect();
        let mut s = xs.clone();
        sigmoid_in_place(&mut s);
        let mut t = xs.clone();
        tanh_in_place(&mut t);
        for ((&x, &s), &t) in xs.iter().zip(&s).zip(&t) {
            let x64 = x as f64;
            assert!(
                ulps(s, 1.0 / (1.0 + (-x64).exp())) <= 3,
                "sigmoid({x}) = {s}"
            );
            assert!(ulps(t, x64.tanh()) <= 3, "tanh({x}) = {t}");
        }
        let mut nan = vec![f32::NAN, 0.5];
        tanh_in_place(&mut nan);
        assert!(nan[0].is_nan() && ulps(nan[1], 0.5f64.tanh()) <= 3);
        sigmoid_in_place(&mut nan);
        assert!(nan[0].is_nan());
    }

    #[test]
    fn matches_std_exp_within_two_ulp() {
        let xs: Vec<f32> = (-2000..=2000)
            .map(|i| i as f32 * 0.05)
            .chain([
                f32::NEG_INFINITY,
                -100.0,
                -103.5,
                -104.5,
                -200.0,
                100.0,
                f32::NAN,
            ])
            .collect();
        let mut out = vec![0.0; xs.len()];
        exp_shifted(&xs, 0.0, &mut out);
        for (&x, &y) in xs.iter().zip(&out) {
            let want = x.exp();
            if want.is_nan() {
                assert!(y.is_nan());
            } else if want == 0.0 || want.is_infinite() {
                assert_eq!(y, want, "exp({x})");
            } else {
                let ulps = (y.to_bits() as i64 - want.to_bits() as i64).abs();
                assert!(ulps <= 2, "exp({x}) = {y}, want {want} ({ulps} ulp)");
            }
        }
    }

    #[test]
    fn gelu_backward_is_within_a_few_ten_millionths_of_the_exact_slope() {
        let x: Vec<f32> = (-4000..4000)
            .map(|i| i as f32 * 0.003)
            .chain([f32::NAN, 30.0, -30.0])
            .collect();
        let g = vec![1.5f32; x.len()];
        let mut out = vec![0.0; x.len()];
        gelu_backward(&g, &x, &mut out);
        for (&x, &o) in x.iter().zip(&out) {
            let x64 = f64::from(x);
            let slope = 0.5 * (1.0 + libm::erf(x64 * std::f64::consts::FRAC_1_SQRT_2))
                + x64 * (-0.5 * x64 * x64).exp() / (2.0 * std::f64::consts::PI).sqrt();
            if x.is_nan() {
                assert!(o.is_nan());
            } else {
                assert!(
                    (f64::from(o) - 1.5 * slope).abs() < 1e-6,
                    "{x}: {o} vs {}",
                    1.5 * slope
                );
            }
        }
    }

    #[test]
    fn gelu_is_within_a_few_ten_millionths_of_the_exact_one() {
        let xs: Vec<f32> = (-6000..=6000)
            .map(|i| i as f32 * 0.002)
            .chain([1e-30, -1e-8, 3e-4, -20.0, 50.0, -100.0])
            .collect();
        let mut got = vec![0.0; xs.len()];
        gelu(&xs, &mut got);
        for (&x, &g) in xs.iter().zip(&got) {
            let x64 = f64::from(x);
            let want = 0.5 * x64 * (1.0 + libm::erf(x64 * std::f64::consts::FRAC_1_SQRT_2));
            // The approximation (erf to 1.5e-7, halved by x/2) plus f32
            // rounding of `1 - poly·e` and of the result.
            let tolerance = 1.5e-7 * x64.abs() + 2.0 * f64::from(f32::EPSILON) * want.abs() + 1e-30;
            assert!(
                (f64::from(g) - want).abs() <= tolerance,
                "gelu({x}) = {g}, want {want}"
            );
        }
        let mut nan = [0.0];
        gelu(&[f32::NAN], &mut nan);
        assert!(nan[0].is_nan());
    }
}
