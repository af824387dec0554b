//! In-place random fills (`uniform_`, `normal_`, `random_`, `bernoulli_`,
//! `exponential_`, …), drawing from a [`Generator`] exactly as PyTorch's CPU
//! kernels draw: the same words per element, the same transformations, the
//! same element order. Seeded fxvm code therefore builds PyTorch's weights.

use crate::dtype::DType;
use crate::error::{Result, TensorError};
use crate::random::generator::{Generator, State};
use crate::storage::{Element, with_dtype};
use crate::tensor::Tensor;

/// A uniform double in [0, 1) from 53 random bits.
pub(crate) fn unit_f64(s: &mut State) -> f64 {
    (s.random64() & ((1 << 53) - 1)) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A uniform float in [0, 1) from 24 random bits.
fn unit_f32(s: &mut State) -> f32 {
    (s.random() & ((1 << 24) - 1)) as f32 * (1.0 / (1u32 << 24) as f32)
}

/// One standard-normal double (Box–Muller over two uniforms), handing out the
/// pair's second sample on the next call, as PyTorch's generator caches it.
pub(crate) fn normal_f64(s: &mut State) -> f64 {
    if let Some(cached) = s.next_double_normal.take() {
        return cached;
    }
    let u1 = unit_f64(s);
    let u2 = unit_f64(s);
    let r = (-2.0 * (-u2).ln_1p()).sqrt();
    let theta = std::f64::consts::TAU * u1;
    s.next_double_normal = Some(r * theta.sin());
    r * theta.cos()
}

/// Fills `t` with `draw()` per element, in the order PyTorch's CPU kernels
/// visit elements: memory order for a dense tensor, whatever its strides.
fn fill_with<T: Element>(t: &Tensor, g: &Generator, mut draw: impl FnMut(&mut State) -> T) {
    let order = t.layout().memory_order();
    let view = t.with_layout(t.layout().permute(&order));
    let mut s = g.lock();
    let values: Vec<T> = (0..t.numel()).map(|_| draw(&mut s)).collect();
    drop(s);
    view.copy_from(&Tensor::from_vec(values, view.shape()))
        .expect("a fill has the shape of its destination");
}

/// Runs a float fill on a 16-bit float tensor as PyTorch does: drawn as
/// float32 (same stream), then rounded. The float32 buffer keeps `t`'s
/// memory order, so elements are drawn in the same order.
fn via_compute_dtype(t: &Tensor, fill: impl FnOnce(&Tensor) -> Result<()>) -> Result<()> {
    let wide = t.zeros_like(t.dtype().compute());
    fill(&wide)?;
    t.copy_from(&wide)
}

/// A continuous distribution's draw into an integer tensor (PyTorch's
/// RuntimeError for `exponential_` and `cauchy_`).
fn continuous(name: &str, t: &Tensor) -> Result<()> {
    if t.dtype().is_float() {
        return Ok(());
    }
    Err(TensorError::runtime(
        "random",
        format!(
            "{name} distribution is a continuous probability distribution. dtype must be a floating point but you specified {}",
            crate::error::legacy_name(t.dtype())
        ),
    ))
}

fn floating(op: &'static str, t: &Tensor) -> Result<()> {
    if t.dtype().is_float() {
        Ok(())
    } else {
        Err(TensorError::not_implemented_for(op, t.dtype()))
    }
}

/// `uniform_(from, to)`: `from + u * (to - from)`, fused, in the tensor's
/// precision.
pub fn uniform_(t: &Tensor, from: f64, to: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if matches!(t.dtype(), DType::F16 | DType::BF16) {
        return via_compute_dtype(t, |wide| uniform_(wide, from, to, g));
    }
    floating("check_uniform_bounds", t)?;
    if from > to {
        return Err(TensorError::runtime(
            "uniform_",
            format!(
                "uniform_ expects to return a [from, to) range, but found from={from} > to={to}"
            ),
        ));
    }
    match t.dtype() {
        DType::F32 => {
            let (from, to) = (from as f32, to as f32);
            fill_with(t, g, |s| unit_f32(s).mul_add(to - from, from));
        }
        _ => fill_with(t, g, |s| unit_f64(s).mul_add(to - from, from)),
    }
    Ok(())
}

/// `normal_(mean, std)`. Dense tensors of 16 or more elements take PyTorch's
/// vectorised path (uniforms first, then Box–Muller over blocks of 16, the
/// last block redrawn when the size is not a multiple of 16); others draw
/// cached double pairs one element at a time.
pub fn normal_(t: &Tensor, mean: f64, std: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if std < 0.0 || std.is_nan() {
        return Err(TensorError::runtime(
            "normal_",
            format!("normal expects std >= 0.0, but found std {std}"),
        ));
    }
    // No kernel runs on an empty tensor, so its dtype is not refused.
    if t.numel() == 0 {
        return Ok(());
    }
    floating("normal_kernel_cpu", t)?;
    let n = t.numel();
    if n >= 16 && t.is_contiguous() && matches!(t.dtype(), DType::F16 | DType::BF16) {
        // PyTorch's path for the 16-bit floats draws uniforms block by
        // block, only for whole blocks, before redrawing the tail block.
        let whole = n / 16 * 16;
        let mut v = block_normal(whole, g, unit_f32, mean as f32, std as f32);
        if whole < n {
            v.truncate(n - 16);
            v.extend(block_normal(16, g, unit_f32, mean as f32, std as f32));
        }
        return t.copy_from(&Tensor::from_vec(v, t.shape()));
    }
    if n >= 16 && t.is_contiguous() {
        let drawn = match t.dtype() {
            DType::F32 => Tensor::from_vec(
                block_normal(n, g, unit_f32, mean as f32, std as f32),
                t.shape(),
            ),
            _ => Tensor::from_vec(block_normal(n, g, unit_f64, mean, std), t.shape()),
        };
        return t.copy_from(&drawn);
    }
    fill_with(t, g, |s| normal_f64(s).mul_add(std, mean));
    Ok(())
}

fn block_normal<F: Element + num_traits::Float + num_traits::FloatConst>(
    n: usize,
    g: &Generator,
    unit: fn(&mut State) -> F,
    mean: F,
    std: F,
) -> Vec<F> {
    let mut s = g.lock();
    let mut v: Vec<F> = (0..n).map(|_| unit(&mut s)).collect();
    let box_muller = |b: &mut [F]| {
        for j in 0..8 {
            let u1 = F::one() - b[j];
            let u2 = b[j + 8];
            let radius = (F::from_f64(-2.0) * u1.ln()).sqrt();
            let theta = F::TAU() * u2;
            b[j] = (radius * theta.cos()).mul_add(std, mean);
            b[j + 8] = (radius * theta.sin()).mul_add(std, mean);
        }
    };
    for block in v.chunks_exact_mut(16) {
        box_muller(block);
    }
    if !n.is_multiple_of(16) {
        let last = &mut v[n - 16..];
        for x in last.iter_mut() {
            *x = unit(&mut s);
        }
        box_muller(last);
    }
    v
}

/// `random_(from, to)`: integers uniform on [from, to), from one 32-bit word
/// when the range fits, else from 64 bits. `to = None` is `random_()`: the
/// dtype's whole non-negative range (for floats, the integers they hold
/// exactly).
pub fn random_(t: &Tensor, from: i64, to: Option<i64>, g: &Generator) -> Result<()> {
    t.check_writable()?;
    let dtype = t.dtype();
    let Some(to) = to else {
        with_dtype!(dtype, T => fill_with(t, g, |s| T::from_i64(full_range(dtype, s) as i64)));
        return Ok(());
    };
    if from >= to {
        return Err(TensorError::runtime(
            "random_",
            format!("random_ expects 'from' to be less than 'to', but got from={from} >= to={to}"),
        ));
    }
    let range = (to as i128 - from as i128) as u64;
    with_dtype!(dtype, T => fill_with(t, g, |s| {
        let word = if range >= 1 << 32 { s.random64() } else { s.random() as u64 };
        T::from_i64((word % range) as i64 + from)
    }));
    Ok(())
}

fn full_range(dtype: DType, s: &mut State) -> u64 {
    match dtype {
        DType::Bool => s.random() as u64 & 1,
        DType::U8 => s.random() as u64 % (u8::MAX as u64 + 1),
        DType::I8 => s.random() as u64 % (i8::MAX as u64 + 1),
        DType::I16 => s.random() as u64 % (i16::MAX as u64 + 1),
        DType::F16 => s.random() as u64 % ((1 << 11) + 1),
        DType::BF16 => s.random() as u64 % ((1 << 8) + 1),
        DType::I32 => s.random() as u64 % (i32::MAX as u64 + 1),
        DType::I64 => s.random64() % (i64::MAX as u64 + 1),
        DType::F32 => s.random() as u64 % ((1 << f32::MANTISSA_DIGITS) + 1),
        DType::F64 => s.random64() % ((1 << f64::MANTISSA_DIGITS) + 1),
    }
}

/// `bernoulli_(p)`: 1 where a double uniform falls below `p`.
pub fn bernoulli_(t: &Tensor, p: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if !(0.0..=1.0).contains(&p) {
        return Err(TensorError::runtime(
            "bernoulli_",
            format!("bernoulli_ expects p to be in [0, 1], but got p={p}"),
        ));
    }
    with_dtype!(t.dtype(), T => fill_with(t, g, |s| T::from_bool(unit_f64(s) < p)));
    Ok(())
}

/// `torch.bernoulli(probs)`: 1 where a uniform falls below each element's
/// probability — a double uniform for float64 probabilities, else a float.
pub fn bernoulli(probs: &Tensor, g: &Generator) -> Result<Tensor> {
    floating("bernoulli_tensor_cpu_p_", probs)?;
    let p = probs.to_vec::<f64>();
    if let Some(bad) = p.iter().find(|x| !(0.0..=1.0).contains(*x)) {
        return Err(TensorError::runtime(
            "bernoulli",
            format!("Expected p_in >= 0 && p_in <= 1 to be true, but got false. (got {bad})"),
        ));
    }
    let out = Tensor::zeros(probs.shape(), probs.dtype());
    let mut i = 0;
    let double = probs.dtype() == DType::F64;
    with_dtype!(out.dtype(), T => fill_with(&out, g, |s| {
        let hit = if double { unit_f64(s) < p[i] } else { unit_f32(s) < p[i] as f32 };
        i += 1;
        T::from_bool(hit)
    }));
    Ok(out)
}

/// `exponential_(lambd)`: `-ln(1 - u) / lambd` over double uniforms.
pub fn exponential_(t: &Tensor, lambd: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if matches!(t.dtype(), DType::F16 | DType::BF16) {
        return via_compute_dtype(t, |wide| exponential_(wide, lambd, g));
    }
    if lambd <= 0.0 {
        return Err(TensorError::runtime(
            "exponential_",
            format!("exponential_ expects lambda > 0.0, but found lambda={lambd}"),
        ));
    }
    if t.numel() == 0 {
        return Ok(());
    }
    continuous("Exponential", t)?;
    with_dtype!(t.dtype(), T => fill_with(t, g, |s| T::from_f64(-1.0 / lambd * (-unit_f64(s)).ln_1p())));
    Ok(())
}

/// `cauchy_(median, sigma)`: `median + sigma * tan(pi * (u - 1/2))`.
pub fn cauchy_(t: &Tensor, median: f64, sigma: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if matches!(t.dtype(), DType::F16 | DType::BF16) {
        return via_compute_dtype(t, |wide| cauchy_(wide, median, sigma, g));
    }
    continuous("Cauchy", t)?;
    with_dtype!(t.dtype(), T => fill_with(t, g, |s| {
        T::from_f64(median + sigma * (std::f64::consts::PI * (unit_f64(s) - 0.5)).tan())
    }));
    Ok(())
}

/// `log_normal_(mean, std)`: `exp` of a cached double normal.
pub fn log_normal_(t: &Tensor, mean: f64, std: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if matches!(t.dtype(), DType::F16 | DType::BF16) {
        return via_compute_dtype(t, |wide| log_normal_(wide, mean, std, g));
    }
    if std <= 0.0 {
        return Err(TensorError::runtime(
            "log_normal_",
            format!("log_normal_ expects std > 0.0, but found std={std}"),
        ));
    }
    if t.numel() == 0 {
        return Ok(());
    }
    floating("log_normal_cpu", t)?;
    with_dtype!(t.dtype(), T => fill_with(t, g, |s| T::from_f64(normal_f64(s).mul_add(std, mean).exp())));
    Ok(())
}

/// `geometric_(p)`: the number of trials to the first success.
pub fn geometric_(t: &Tensor, p: f64, g: &Generator) -> Result<()> {
    t.check_writable()?;
    if !(p > 0.0 && p < 1.0) {
        return Err(TensorError::runtime(
            "geometric_",
            format!("geometric_ expects p to be in (0, 1), but got p={p}"),
        ));
    }
    with_dtype!(t.dtype(), T => fill_with(t, g, |s| T::from_f64((unit_f64(s).ln() / (-p).ln_1p()).ceil())));
    Ok(())
}

/// rrelu's training slopes, as PyTorch draws them: for each element ≤ 0
/// in memory order a uniform slope in `[lower, upper]`, 1 elsewhere (the
/// output is the input times these).
pub fn rrelu_slopes(x: &Tensor, lower: f64, upper: f64, g: &Generator) -> Result<Tensor> {
    floating("rrelu_with_noise_cpu", x)?;
    let mut s = g.lock();
    let mut slope = || unit_f64(&mut s).mul_add(upper - lower, lower);
    Ok(match x.dtype() {
        DType::F32 => {
            let v: Vec<f32> = x
                .to_vec::<f32>()
                .into_iter()
                .map(|v| if v <= 0.0 { slope() as f32 } else { 1.0 })
                .collect();
            Tensor::from_vec(v, x.shape())
        }
        _ => {
            let v: Vec<f64> = x
                .to_vec::<f64>()
                .into_iter()
                .map(|v| if v <= 0.0 { slope() } else { 1.0 })
                .collect();
            Tensor::from_vec(v, x.shape()).to_dtype(x.dtype())
        }
    })
}

/// `torch.randperm(n)`: a forward Fisher–Yates shuffle of `0..n`, drawing
/// 32-bit words while `n` is small enough for them to stay unbiased.
pub fn randperm(n: usize, dtype: DType, g: &Generator) -> Tensor {
    let mut v: Vec<i64> = (0..n as i64).collect();
    let small = (n as u64) < u32::MAX as u64 / 20;
    let mut s = g.lock();
    for i in 0..n.saturating_sub(1) {
        let word = if small {
            s.random() as u64
        } else {
            s.random64()
        };
        let z = (word % (n - i) as u64) as usize;
        v.swap(i, z + i);
    }
    Tensor::from_vec(v, &[n]).to_dtype(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seeded() -> Generator {
        Generator::new(0)
    }

    // Expected values: real PyTorch 2.15 after torch.manual_seed(0).
    #[test]
    fn uniform_float_matches_pytorch() {
        let t = Tensor::zeros(&[3], DType::F32);
        uniform_(&t, 0.0, 1.0, &seeded()).unwrap();
        assert_eq!(t.to_vec::<f32>(), [0.496_256_6, 0.768_221_8, 0.088_477_43]);
    }

    #[test]
    fn uniform_double_uses_53_bits() {
        let t = Tensor::zeros(&[2], DType::F64);
        uniform_(&t, 0.0, 1.0, &seeded()).unwrap();
        assert_eq!(t.to_vec::<f64>(), [0.9700530018065531, 0.707819864399788]);
    }

    /// `torch.bernoulli` draws a double uniform for float64 probabilities
    /// and a float one otherwise: p = 0.1, 0.2, …, 0.8.
    #[test]
    fn bernoulli_draws_in_the_probabilities_precision() {
        let p: Vec<f64> = (1..=8).map(|k| k as f64 / 10.0).collect();
        let draw = |dtype: DType| {
            let probs = Tensor::from_vec(p.clone(), &[8]).to_dtype(dtype);
            bernoulli(&probs, &seeded()).unwrap().to_vec::<f64>()
        };
        assert_eq!(draw(DType::F64), [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0]);
        assert_eq!(draw(DType::F32), [0.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn small_normal_uses_cached_double_pairs() {
        let t = Tensor::zeros(&[3], DType::F64);
        normal_(&t, 0.0, 1.0, &seeded()).unwrap();
        assert_eq!(
            t.to_vec::<f64>(),
            [1.5409961082440433, -0.2934289057609464, -2.1787893820745574]
        );
    }

    #[test]
    fn block_normal_redraws_the_tail() {
        let t = Tensor::zeros(&[20], DType::F32);
        normal_(&t, 0.0, 1.0, &seeded()).unwrap();
        let v = t.to_vec::<f32>();
        // PyTorch's vectorised log/sin/cos may differ in the last bit.
        for (got, want) in v
            .iter()
            .zip([-1.1258398f32, -1.1523602, -0.25057858, -0.433_878_8])
        {
            assert!(
                (got - want).abs() <= 2.0 * f32::EPSILON * want.abs(),
                "{got} vs {want}"
            );
        }
        assert!((v[19] - 0.053_736_9).abs() < 1e-7);
    }

    #[test]
    fn integer_draws_and_permutations_match_pytorch() {
        let t = Tensor::zeros(&[5], DType::I64);
        random_(&t, 0, Some(10), &seeded()).unwrap();
        assert_eq!(t.to_vec::<i64>(), [4, 9, 3, 0, 3]);
        assert_eq!(
            randperm(10, DType::I64, &seeded()).to_vec::<i64>(),
            [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
        );
    }

    #[test]
    fn bernoulli_scalar_and_tensor_draw_differently() {
        let t = Tensor::zeros(&[10], DType::F32);
        bernoulli_(&t, 0.7, &seeded()).unwrap();
        assert_eq!(t.to_vec::<f32>(), [0., 0., 1., 0., 1., 0., 1., 1., 1., 1.]);
        let p = Tensor::full(&[10], crate::Scalar::Float(0.3), DType::F32);
        let b = bernoulli(&p, &seeded()).unwrap();
        assert_eq!(b.to_vec::<f32>(), [0., 0., 1., 1., 0., 0., 0., 0., 0., 0.]);
    }

    #[test]
    fn transposed_tensors_fill_in_memory_order() {
        let a = Tensor::zeros(&[2, 3], DType::F32);
        uniform_(&a, 0.0, 1.0, &seeded()).unwrap();
        let b = Tensor::zeros(&[3, 2], DType::F32);
        let bt = b.with_layout(b.layout().transpose(0, 1));
        uniform_(&bt, 0.0, 1.0, &seeded()).unwrap();
        assert_eq!(b.to_vec::<f32>(), a.to_vec::<f32>());
    }

    #[test]
    fn bad_arguments_are_errors() {
        let t = Tensor::zeros(&[2], DType::I64);
        assert!(uniform_(&t, 0.0, 1.0, &seeded()).is_err());
        let f = Tensor::zeros(&[2], DType::F32);
        assert!(uniform_(&f, 1.0, 0.0, &seeded()).is_err());
        assert!(normal_(&f, 0.0, -1.0, &seeded()).is_err());
        assert!(bernoulli_(&f, 1.5, &seeded()).is_err());
        assert!(random_(&t, 3, Some(3), &seeded()).is_err());
    }
}
