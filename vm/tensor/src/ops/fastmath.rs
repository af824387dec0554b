//! A vectorisable `exp` for f32 slices, the inner loop of softmax. Cephes'
//! polynomial (about 1 ulp); inputs outside its range are redone with `f32::exp`.

const LOG2E: f32 = std::f32::consts::LOG2_E;
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding and subtracting 1.5·2²³ rounds an f32 to the nearest integer.
const ROUND: f32 = 12_582_912.0;
const MIN: f32 = -87.0;
const MAX: f32 = 88.0;

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
        outside |= !(MIN..=MAX).contains(&v);
        *o = exp_in_range(v);
    }
    if outside {
        for (o, &x) in dst.iter_mut().zip(src) {
            let v = x - shift;
            if !(MIN..=MAX).contains(&v) {
                *o = v.exp();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_std_exp_within_two_ulp() {
        let xs: Vec<f32> = (-2000..=2000)
            .map(|i| i as f32 * 0.05)
            .chain([f32::NEG_INFINITY, -100.0, 100.0, f32::NAN])
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
}
