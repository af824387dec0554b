//! numpy's `default_rng` streams: `SeedSequence` (the hash-mixed entropy
//! pool a seed becomes), the PCG64 bit generator (128-bit LCG, XSL-RR
//! output), and the draws numpy's `Generator` makes from it — doubles and
//! floats, Lemire's bounded integers, masked intervals for shuffles, and the
//! ziggurat normal — each bit for bit as numpy makes them.

use crate::ziggurat_tables::{FI, KI, WI};

const POOL: usize = 4;
const INIT_A: u32 = 0x43b0_d7e5;
const MULT_A: u32 = 0x931e_8875;
const INIT_B: u32 = 0x8b51_f9dd;
const MULT_B: u32 = 0x58f3_8ded;
const MIX_MULT_L: u32 = 0xca01_f9dd;
const MIX_MULT_R: u32 = 0x4973_f715;

/// numpy's `SeedSequence`: entropy words (and a spawn key) mixed into a
/// pool of four words, from which any amount of state is drawn.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeedSequence {
    pool: [u32; POOL],
}

impl SeedSequence {
    pub fn new(entropy: &[u32], spawn_key: &[u32]) -> SeedSequence {
        let mut assembled = entropy.to_vec();
        // A spawn key starts after a full pool, so it never reads as entropy.
        if !spawn_key.is_empty() && assembled.len() < POOL {
            assembled.resize(POOL, 0);
        }
        assembled.extend_from_slice(spawn_key);
        let mut hash = INIT_A;
        let mut hashmix = |value: u32| {
            let mut v = value ^ hash;
            hash = hash.wrapping_mul(MULT_A);
            v = v.wrapping_mul(hash);
            v ^ (v >> 16)
        };
        let mix = |x: u32, y: u32| {
            let r = MIX_MULT_L
                .wrapping_mul(x)
                .wrapping_sub(MIX_MULT_R.wrapping_mul(y));
            r ^ (r >> 16)
        };
        let mut pool = [0u32; POOL];
        for (i, word) in pool.iter_mut().enumerate() {
            *word = hashmix(assembled.get(i).copied().unwrap_or(0));
        }
        for src in 0..POOL {
            for dst in 0..POOL {
                if src != dst {
                    pool[dst] = mix(pool[dst], hashmix(pool[src]));
                }
            }
        }
        for &word in assembled.iter().skip(POOL) {
            for slot in pool.iter_mut() {
                *slot = mix(*slot, hashmix(word));
            }
        }
        SeedSequence { pool }
    }

    /// `generate_state(n, np.uint32)`.
    pub fn generate_u32(&self, n: usize) -> Vec<u32> {
        let mut hash = INIT_B;
        (0..n)
            .map(|i| {
                let mut v = self.pool[i % POOL] ^ hash;
                hash = hash.wrapping_mul(MULT_B);
                v = v.wrapping_mul(hash);
                v ^ (v >> 16)
            })
            .collect()
    }

    /// `generate_state(n, np.uint64)`: pairs of words, low word first.
    pub fn generate_u64(&self, n: usize) -> Vec<u64> {
        self.generate_u32(2 * n)
            .chunks(2)
            .map(|pair| u64::from(pair[0]) | (u64::from(pair[1]) << 32))
            .collect()
    }
}

const PCG_MULT: u128 = 0x2360_ed05_1fc6_5da4_4385_df64_9fcc_f645;

/// The PCG64 bit generator with numpy's buffered 32-bit draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcg64 {
    state: u128,
    inc: u128,
    /// The high half of a 64-bit draw whose low half a 32-bit draw used.
    buffered: Option<u32>,
}

impl Pcg64 {
    /// Seeded as numpy seeds it: four 64-bit words of the sequence give
    /// the initial state and the stream.
    pub fn new(seed: &SeedSequence) -> Pcg64 {
        let v = seed.generate_u64(4);
        let initstate = (u128::from(v[0]) << 64) | u128::from(v[1]);
        let initseq = (u128::from(v[2]) << 64) | u128::from(v[3]);
        let mut rng = Pcg64 {
            state: 0,
            inc: (initseq << 1) | 1,
            buffered: None,
        };
        rng.step();
        rng.state = rng.state.wrapping_add(initstate);
        rng.step();
        rng
    }

    /// `(state, inc, buffered)`, as `bit_generator.state` shows them.
    pub fn state(&self) -> (u128, u128, Option<u32>) {
        (self.state, self.inc, self.buffered)
    }

    pub fn from_state(state: u128, inc: u128, buffered: Option<u32>) -> Pcg64 {
        Pcg64 {
            state,
            inc,
            buffered,
        }
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    pub fn next_u64(&mut self) -> u64 {
        self.step();
        let rot = (self.state >> 122) as u32;
        (((self.state >> 64) as u64) ^ (self.state as u64)).rotate_right(rot)
    }

    pub fn next_u32(&mut self) -> u32 {
        if let Some(high) = self.buffered.take() {
            return high;
        }
        let next = self.next_u64();
        self.buffered = Some((next >> 32) as u32);
        next as u32
    }

    /// A double in [0, 1) from 53 random bits.
    pub fn next_double(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
    }

    /// A float in [0, 1) from 24 random bits.
    pub fn next_float(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 * (1.0 / 16_777_216.0)
    }

    /// A uniform integer in `[0, range]` (inclusive) by Lemire's method,
    /// on 32-bit draws when the range fits them, as `Generator.integers`.
    pub fn bounded(&mut self, range: u64) -> u64 {
        if range == 0 {
            return 0;
        }
        if range <= u64::from(u32::MAX) {
            let excl = range + 1;
            let mut m = u64::from(self.next_u32()) * excl;
            let mut leftover = m & u64::from(u32::MAX);
            if leftover < excl {
                let threshold = (u64::from(u32::MAX) - range) % excl;
                while leftover < threshold {
                    m = u64::from(self.next_u32()) * excl;
                    leftover = m & u64::from(u32::MAX);
                }
            }
            return m >> 32;
        }
        if range == u64::MAX {
            return self.next_u64();
        }
        let excl = u128::from(range) + 1;
        let mut m = u128::from(self.next_u64()) * excl;
        let mut leftover = m as u64;
        if u128::from(leftover) < excl {
            let threshold = (u64::MAX - range) % (range + 1);
            while leftover < threshold {
                m = u128::from(self.next_u64()) * excl;
                leftover = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// A uniform integer in `[0, max]` by masked rejection (the swaps of
    /// `shuffle` and `permutation`).
    pub fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = u64::MAX >> max.leading_zeros();
        if max <= u64::from(u32::MAX) {
            loop {
                let v = u64::from(self.next_u32()) & mask;
                if v <= max {
                    return v;
                }
            }
        }
        loop {
            let v = self.next_u64() & mask;
            if v <= max {
                return v;
            }
        }
    }

    /// The order `permutation(n)` puts `0..n` in (Fisher–Yates from the end).
    pub fn shuffled_order(&mut self, n: usize) -> Vec<i64> {
        let mut order: Vec<i64> = (0..n as i64).collect();
        for i in (1..n).rev() {
            let j = self.interval(i as u64) as usize;
            order.swap(i, j);
        }
        order
    }

    /// The indices `choice(population, size, replace=False)` draws: Floyd's
    /// algorithm (then, with `shuffle`, the picks shuffled), or for a large
    /// share of a population over 10,000 a Fisher–Yates pass over its tail,
    /// as numpy chooses between them.
    pub fn sample_without_replacement(
        &mut self,
        population: u64,
        size: usize,
        shuffle: bool,
    ) -> Vec<i64> {
        let size_u = size as u64;
        let cutoff = if shuffle { 50 } else { 20 };
        if population > 10_000 && size_u > population / cutoff {
            let mut pool: Vec<i64> = (0..population as i64).collect();
            let last = population.saturating_sub(size_u).max(1);
            for i in (last..population).rev() {
                let j = self.bounded(i) as usize;
                pool.swap(i as usize, j);
            }
            return pool.split_off((population - size_u) as usize);
        }
        let mut seen = std::collections::HashSet::with_capacity(size);
        let mut picks: Vec<i64> = Vec::with_capacity(size);
        for j in population - size_u..population {
            let drawn = self.bounded(j);
            let pick = if seen.contains(&drawn) { j } else { drawn };
            seen.insert(pick);
            picks.push(pick as i64);
        }
        if shuffle {
            for i in (1..size).rev() {
                let j = self.bounded(i as u64) as usize;
                picks.swap(i, j);
            }
        }
        picks
    }

    /// A standard normal sample by numpy's 256-box ziggurat.
    pub fn standard_normal(&mut self) -> f64 {
        const R: f64 = 3.654_152_885_361_009;
        const INV_R: f64 = 0.273_661_237_329_758_3;
        loop {
            let bits = self.next_u64();
            let idx = (bits & 0xff) as usize;
            let rest = bits >> 8;
            let negative = rest & 1 == 1;
            let rabs = (rest >> 1) & 0x000f_ffff_ffff_ffff;
            let mut x = rabs as f64 * f64::from_bits(WI[idx]);
            if negative {
                x = -x;
            }
            if rabs < KI[idx] {
                return x;
            }
            if idx == 0 {
                // The tail beyond R, by Marsaglia's exponential method.
                loop {
                    let xx = -INV_R * (-self.next_double()).ln_1p();
                    let yy = -(-self.next_double()).ln_1p();
                    if yy + yy > xx * xx {
                        return if (rabs >> 8) & 1 == 1 {
                            -(R + xx)
                        } else {
                            R + xx
                        };
                    }
                }
            }
            let (lower, upper) = (f64::from_bits(FI[idx]), f64::from_bits(FI[idx - 1]));
            if (upper - lower) * self.next_double() + lower < (-0.5 * x * x).exp() {
                return x;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The words of a non-negative integer, least significant first, as
    /// numpy's `SeedSequence` takes an int.
    fn words(mut value: u128) -> Vec<u32> {
        let mut out = vec![];
        loop {
            out.push(value as u32);
            value >>= 32;
            if value == 0 {
                return out;
            }
        }
    }

    // Expected values from numpy 2.4 (SeedSequence, PCG64, Generator).
    #[test]
    fn seed_sequences_mix_as_numpy_does() {
        let seq = SeedSequence::new(&words(12345), &[]);
        assert_eq!(
            seq.generate_u32(6),
            [
                2688385916, 3048105090, 4196366895, 3152189807, 924159892, 1692637855
            ]
        );
        assert_eq!(
            seq.generate_u64(4),
            [
                13091511679009522556,
                13538552136045918767,
                7269824232120749972,
                4520223790601600371
            ]
        );
        let spawned = SeedSequence::new(&words((1 << 80) + 7), &words(3));
        assert_eq!(
            spawned.generate_u64(2),
            [10620822343952879974, 17172693135899364919]
        );
    }

    fn rng(seed: u128) -> Pcg64 {
        Pcg64::new(&SeedSequence::new(&words(seed), &[]))
    }

    #[test]
    fn pcg64_seeds_and_draws_as_numpy_does() {
        let mut g = rng(42);
        assert_eq!(
            g.state(),
            (
                274674114334540486603088602300644985544,
                332724090758049132448979897138935081983,
                None
            )
        );
        let raw: Vec<u64> = (0..3).map(|_| g.next_u64()).collect();
        assert_eq!(
            raw,
            [
                14276969152011380360,
                8095878257575067585,
                15838336090824644132
            ]
        );
        let mut g = rng(42);
        let doubles: Vec<f64> = (0..3).map(|_| g.next_double()).collect();
        assert_eq!(
            doubles,
            [0.7739560485559633, 0.4388784397520523, 0.8585979199113825]
        );
        let mut g = rng(42);
        let floats: Vec<f32> = (0..3).map(|_| g.next_float()).collect();
        assert_eq!(floats, [0.08925092, 0.773956, 0.6545715]);
    }

    #[test]
    fn generator_draws_match_numpy() {
        let mut g = rng(42);
        let normals: Vec<f64> = (0..3).map(|_| g.standard_normal()).collect();
        assert_eq!(
            normals,
            [0.30471707975443135, -1.0399841062404955, 0.7504511958064572]
        );
        let mut g = rng(42);
        let small: Vec<u64> = (0..5).map(|_| g.bounded(999)).collect();
        assert_eq!(small, [89, 773, 654, 438, 433]);
        let large: Vec<u64> = (0..2).map(|_| g.bounded((1 << 40) - 1)).collect();
        assert_eq!(large, [766764256790, 103549089075]);
        assert_eq!(rng(42).shuffled_order(8), [3, 4, 2, 7, 6, 1, 5, 0]);
        // Floyd's algorithm, and the tail shuffle of a large population.
        assert_eq!(
            rng(3).sample_without_replacement(100, 5, true),
            [17, 77, 8, 23, 18]
        );
        assert_eq!(
            rng(6).sample_without_replacement(50000, 4, false),
            [22250, 26907, 25887, 17163]
        );
        assert_eq!(
            rng(8).sample_without_replacement(20000, 5000, true)[..4],
            [19466, 12161, 13730, 8425]
        );
    }
}
