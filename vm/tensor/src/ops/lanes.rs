//! The float element types' SIMD vectors on each target `pulp` picks at
//! run time (AVX-512, AVX2, NEON, scalar), for kernels the autovectoriser
//! does not block well: the recurrent step and small-batch products.

use pulp::Simd;

/// An element type the kernel vectorises: its SIMD vector for each target.
pub(crate) trait Lanes: num_traits::Float + bytemuck::Pod + Send + Sync {
    type V<S: Simd>: Copy;
    fn lanes<S: Simd>() -> usize;
    fn zeros<S: Simd>(simd: S) -> Self::V<S>;
    fn splat<S: Simd>(simd: S, x: Self) -> Self::V<S>;
    /// `a * b + c`, fused.
    fn fused<S: Simd>(simd: S, a: Self::V<S>, b: Self::V<S>, c: Self::V<S>) -> Self::V<S>;
    /// The whole vectors at the start of `v`.
    fn vectors<S: Simd>(v: &[Self]) -> &[Self::V<S>];
    /// The first `dst.len()` (at most a vector's) lanes of `v` into `dst`.
    fn store<S: Simd>(simd: S, dst: &mut [Self], v: Self::V<S>);
    /// The sum of the lanes.
    fn reduce_sum<S: Simd>(simd: S, v: Self::V<S>) -> Self;
}

macro_rules! lanes {
    ($t:ty, $v:ident, $lanes:ident, $splat:ident, $fma:ident, $split:ident, $store:ident, $sum:ident) => {
        impl Lanes for $t {
            type V<S: Simd> = S::$v;
            fn lanes<S: Simd>() -> usize {
                S::$lanes
            }
            #[inline(always)]
            fn zeros<S: Simd>(simd: S) -> S::$v {
                simd.$splat(0.0)
            }
            #[inline(always)]
            fn splat<S: Simd>(simd: S, x: $t) -> S::$v {
                simd.$splat(x)
            }
            #[inline(always)]
            fn fused<S: Simd>(simd: S, a: S::$v, b: S::$v, c: S::$v) -> S::$v {
                simd.$fma(a, b, c)
            }
            #[inline(always)]
            fn vectors<S: Simd>(v: &[$t]) -> &[S::$v] {
                S::$split(v).0
            }
            #[inline(always)]
            fn store<S: Simd>(simd: S, dst: &mut [$t], v: S::$v) {
                simd.$store(dst, v)
            }
            #[inline(always)]
            fn reduce_sum<S: Simd>(simd: S, v: S::$v) -> $t {
                simd.$sum(v)
            }
        }
    };
}

lanes!(
    f32,
    f32s,
    F32_LANES,
    splat_f32s,
    mul_add_f32s,
    as_simd_f32s,
    partial_store_f32s,
    reduce_sum_f32s
);
lanes!(
    f64,
    f64s,
    F64_LANES,
    splat_f64s,
    mul_add_f64s,
    as_simd_f64s,
    partial_store_f64s,
    reduce_sum_f64s
);

/// What the SIMD kernels' tests share: every target this machine can run,
/// deterministic operands, and a tolerance check.
#[cfg(test)]
pub(crate) mod testing {
    use pulp::Arch;

    /// The portable kernels and each x86 level the CPU has.
    pub(crate) fn arches() -> Vec<Arch> {
        let mut all = vec![Arch::Scalar];
        #[cfg(target_arch = "x86_64")]
        {
            all.extend(pulp::x86::V3::try_new().map(Arch::V3));
            all.extend(pulp::x86::V4::try_new().map(Arch::V4));
        }
        all
    }

    /// `len` values in [-2, 2), different for each seed.
    pub(crate) fn values(len: usize, seed: u64) -> Vec<f64> {
        (0..len)
            .map(|i| (((i as u64 * 2654435761 + seed) % 1000) as f64 - 500.0) / 250.0)
            .collect()
    }

    /// The same values in `T`.
    pub(crate) fn cast<T: num_traits::Float>(v: &[f64]) -> Vec<T> {
        v.iter().map(|&x| T::from(x).expect("finite")).collect()
    }

    /// Each of `got` within `rel` (relative, absolute below 1) of `want`.
    pub(crate) fn assert_close<T: num_traits::Float>(
        got: &[T],
        want: &[f64],
        rel: f64,
        what: &str,
    ) {
        assert_eq!(got.len(), want.len(), "{what}: lengths");
        for (g, e) in got.iter().zip(want) {
            let g = g.to_f64().expect("a float");
            assert!(
                (g - e).abs() <= rel * e.abs().max(1.0),
                "{what}: {g} vs {e}"
            );
        }
    }
}
