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

/// ln 2 split so that `k · LN2_HI_F64` is exact for the `k` [`tanh_rounded`] uses.
const LN2_HI_F64: f64 = 0.693_147_180_369_123_8;
const LN2_LO_F64: f64 = 1.908_214_929_270_587_7e-10;
/// `2·|x|` past which tanh rounds to 1 in f32 (from |x| ≈ 9.01 on).
const TANH_SATURATED: f64 = 20.0;

/// tanh of an f32, computed in f64 and rounded once: correctly rounded but
/// for inputs within ~1e-13 of a rounding midpoint, as PyTorch's SIMD tanh
/// is but glibc's `tanhf` is not (it misrounds ~40% of inputs in [0.1, 1]).
/// `tanh |x| = m / (m + 2)` with `m = expm1(2|x|)` — no cancellation near
/// 0 — and `expm1(k·ln2 + r) = 2^k·expm1(r) + (2^k − 1)`, `|r| ≤ ln2/2`,
/// `expm1(r)` by its Taylor series to r¹² (truncation below 1e-14).
#[inline(always)]
fn tanh_rounded(x: f32) -> f32 {
    let y = (2.0 * f64::from(x).abs()).min(TANH_SATURATED);
    let k = (y * std::f64::consts::LOG2_E + 0.5).floor();
    let r = (y - k * LN2_HI_F64) - k * LN2_LO_F64;
    let mut p = 1.0 / 479_001_600.0;
    for d in [
        39_916_800.0,
        3_628_800.0,
        362_880.0,
        40_320.0,
        5040.0,
        720.0,
        120.0,
        24.0,
        6.0,
        2.0,
    ] {
        p = p * r + 1.0 / d;
    }
    let expm1_r = (p * r + 1.0) * r;
    // 2^k from the bits of k + 1023 (k is an integer in [0, 29]): the
    // mantissa of k + 1023 + 2^52 holds it, shifted into the exponent.
    let two_k = f64::from_bits((k + 1023.0 + 4_503_599_627_370_496.0).to_bits() << 52);
    let m = two_k * expm1_r + (two_k - 1.0);
    let t = (m / (m + 2.0)) as f32;
    // min() above turned NaN into the saturation point; give it back.
    if x.is_nan() { x } else { t.copysign(x) }
}

/// `dst[i] = tanh(src[i])`, correctly rounded (see [`tanh_rounded`]).
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn tanh(src: &[f32], dst: &mut [f32]) {
    for (o, &x) in dst.iter_mut().zip(src) {
        *o = tanh_rounded(x);
    }
}

/// `dst[i] = gelu(src[i], approximate='tanh')`, `x/2 · (1 + tanh(√(2/π) ·
/// (x + 0.044715·x³)))` in PyTorch's order of operations, the tanh
/// correctly rounded. (An unfused fallback build's `mul_add` is a libm
/// call: correct, slower.)
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn gelu_tanh(src: &[f32], dst: &mut [f32]) {
    let beta = (2.0 / std::f64::consts::PI).sqrt() as f32;
    for (o, &x) in dst.iter_mut().zip(src) {
        let cube = x * x * x;
        // Fused as PyTorch's vector kernel (agrees on 99.6% of inputs, 99.1% unfused).
        *o = 0.5 * x * (1.0 + tanh_rounded(beta * 0.044_715f32.mul_add(cube, x)));
    }
}

/// One LSTM step over whole rows: `gates` (rows × 4·hidden: the input,
/// forget, cell and output gates' pre-activations) activated in place,
/// the cell state `c` (rows × hidden) becoming `f·c + i·tanh(g)`, and
/// `h = o·tanh(c)` — one dispatch per step rather than four per row.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn lstm_cell(gates: &mut [f32], c: &mut [f32], h: &mut [f32], hidden: usize) {
    // The fast sigmoid's range; NaN is outside it too.
    let inside = |x: &f32| (-MAX..=-MIN).contains(x);
    let fast = gates.iter().fold(true, |all, x| all & inside(x));
    for ((g, c), h) in gates
        .chunks_exact_mut(4 * hidden)
        .zip(c.chunks_exact_mut(hidden))
        .zip(h.chunks_exact_mut(hidden))
    {
        let (i, rest) = g.split_at_mut(hidden);
        let (f, rest) = rest.split_at_mut(hidden);
        let (cand, o) = rest.split_at_mut(hidden);
        if fast {
            // A loop per stream: LLVM vectorises single-stream loops over
            // the slices of one row, not one loop writing all of them.
            i.iter_mut().for_each(|x| *x = sigmoid_fast(*x));
            f.iter_mut().for_each(|x| *x = sigmoid_fast(*x));
            cand.iter_mut().for_each(|x| *x = tanh_fast(*x));
            o.iter_mut().for_each(|x| *x = sigmoid_fast(*x));
            for (((c, &i), &f), &cand) in c.iter_mut().zip(i.iter()).zip(f.iter()).zip(cand.iter())
            {
                *c = f * *c + i * cand;
            }
            for ((h, &o), &c) in h.iter_mut().zip(o.iter()).zip(c.iter()) {
                *h = o * tanh_fast(c);
            }
        } else {
            sigmoid_in_place(i);
            sigmoid_in_place(f);
            tanh_in_place(cand);
            sigmoid_in_place(o);
            for (((c, &i), &f), &cand) in c.iter_mut().zip(i.iter()).zip(f.iter()).zip(cand.iter())
            {
                *c = f * *c + i * cand;
            }
            h.copy_from_slice(c);
            tanh_in_place(h);
            h.iter_mut().zip(o.iter()).for_each(|(h, &o)| *h *= o);
        }
    }
}

/// The gradient through one row of [`lstm_cell`]: from `saved` (the
/// activated input, forget, cell and output gates, then the new cell
/// state; `5·hidden`), the previous cell state, and the gradients `dh`,
/// `dc` reaching the row's outputs, the gates' gradients before their
/// activations (`d`, `4·hidden`); `dc` becomes the previous cell state's.
#[multiversion::multiversion(targets(
    "x86_64+avx512f+avx512vl+fma",
    "x86_64+avx2+fma",
    "aarch64+neon"
))]
pub fn lstm_cell_backward(
    saved: &[f32],
    c_prev: &[f32],
    dh: &[f32],
    dc: &mut [f32],
    d: &mut [f32],
) {
    let hidden = dh.len();
    let (i, rest) = saved.split_at(hidden);
    let (f, rest) = rest.split_at(hidden);
    let (g, rest) = rest.split_at(hidden);
    let (o, c) = rest.split_at(hidden);
    let (d_i, rest) = d.split_at_mut(hidden);
    let (d_f, rest) = rest.split_at_mut(hidden);
    let (d_g, d_o) = rest.split_at_mut(hidden);
    let gates = i.iter().zip(f).zip(g).zip(o);
    let grads = d_i
        .iter_mut()
        .zip(d_f.iter_mut())
        .zip(d_g.iter_mut())
        .zip(d_o.iter_mut());
    let cells = c.iter().zip(c_prev).zip(dh).zip(dc.iter_mut());
    for (((((&i, &f), &g), &o), (((d_i, d_f), d_g), d_o)), (((&c, &c_prev), &dh), dc)) in
        gates.zip(grads).zip(cells)
    {
        let tc = tanh_fast(c);
        let dc_in = *dc + dh * o * (1.0 - tc * tc);
        *dc = dc_in * f;
        *d_i = dc_in * g * i * (1.0 - i);
        *d_f = dc_in * c_prev * f * (1.0 - f);
        *d_g = dc_in * i * (1.0 - g * g);
        *d_o = dh * tc * o * (1.0 - o);
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
    fn gelu_tanh_is_its_formula() {
        let xs: Vec<f32> = (-3000..=3000)
            .map(|i| i as f32 * 0.004)
            .chain([f32::INFINITY, -1e30])
            .collect();
        let mut got = vec![0.0; xs.len()];
        gelu_tanh(&xs, &mut got);
        for (&x, &g) in xs.iter().zip(&got) {
            let x64 = f64::from(x);
            let want = 0.5
                * x64
                * (1.0
                    + ((2.0 / std::f64::consts::PI).sqrt() * (x64 + 0.044715 * x64.powi(3)))
                        .tanh());
            assert!(
                ulps(g, want) <= 2 || (g - want as f32).abs() < 1e-6,
                "gelu_tanh({x}) = {g}, want {want}"
            );
        }
        let mut nan = [0.0];
        gelu_tanh(&[f32::NAN], &mut nan);
        assert!(nan[0].is_nan());
    }

    #[test]
    fn tanh_is_correctly_rounded() {
        // Every 61st float32 from 1e-30 to past saturation, both signs, and
        // the edges: the f64 tanh rounded once is the correctly rounded
        // result but for near-midpoint inputs, which this sample has none of.
        let xs: Vec<f32> = (1e-30f32.to_bits()..10.5f32.to_bits())
            .step_by(61)
            .map(f32::from_bits)
            .flat_map(|x| [x, -x])
            .chain([
                0.0,
                -0.0,
                1e-45,
                9.01,
                9.02,
                1e30,
                f32::INFINITY,
                f32::NEG_INFINITY,
            ])
            .collect();
        let mut got = vec![0.0; xs.len()];
        tanh(&xs, &mut got);
        for (&x, &t) in xs.iter().zip(&got) {
            let want = f64::from(x).tanh() as f32;
            assert_eq!(
                t.to_bits(),
                want.to_bits(),
                "tanh({x:e}) = {t:e}, want {want:e}"
            );
        }
        let mut nan = [0.0; 2];
        tanh(&[f32::NAN, -f32::NAN], &mut nan);
        assert!(nan.iter().all(|x| x.is_nan()));
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
    fn an_lstm_step_is_its_definition_in_and_out_of_the_fast_range() {
        let hidden = 19;
        let rows = 3;
        let gates: Vec<f32> = (0..rows * 4 * hidden)
            .map(|i| ((i * 37) % 101) as f32 * 0.17 - 8.5)
            .collect();
        let c0: Vec<f32> = (0..rows * hidden)
            .map(|i| (i % 7) as f32 * 0.6 - 2.0)
            .collect();
        // The last case puts a gate past the fast range: the whole step
        // takes the exact path.
        let mut far = gates.clone();
        far[5] = -100.0;
        for gates in [gates, far] {
            let (mut g, mut c, mut h) = (gates.clone(), c0.clone(), vec![0.0; rows * hidden]);
            lstm_cell(&mut g, &mut c, &mut h, hidden);
            let s = |x: f32| 1.0 / (1.0 + (-f64::from(x)).exp());
            for r in 0..rows {
                for k in 0..hidden {
                    let at = |q: usize| gates[r * 4 * hidden + q * hidden + k];
                    let (i, f, cand, o) = (s(at(0)), s(at(1)), f64::from(at(2)).tanh(), s(at(3)));
                    let cell = f * f64::from(c0[r * hidden + k]) + i * cand;
                    let near = |got: f32, want: f64| {
                        (f64::from(got) - want).abs() < 1e-6 * (1.0 + want.abs())
                    };
                    assert!(near(g[r * 4 * hidden + k], i));
                    assert!(near(g[r * 4 * hidden + 2 * hidden + k], cand));
                    assert!(near(c[r * hidden + k], cell), "{r} {k}");
                    assert!(near(h[r * hidden + k], o * cell.tanh()));
                }
            }
        }
        let (mut g, mut c, mut h) = (vec![f32::NAN, 0.0, 0.0, 0.0], vec![1.0], vec![0.0]);
        lstm_cell(&mut g, &mut c, &mut h, 1);
        assert!(c[0].is_nan() && h[0].is_nan());
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
