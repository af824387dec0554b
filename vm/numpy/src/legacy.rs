//! numpy's legacy `RandomState` over the [`Mt19937`] engine: the same words
//! drawn in the same order and transformed with the same arithmetic as
//! numpy's `mtrand`, so a seed gives numpy's exact stream
//! (`np.random.seed(0); np.random.rand()` is 0.5488135039273248).

use fxvm_tensor::random::Mt19937;
use fxvm_tensor::random::mt19937::WORDS;

/// The engine and the cached second sample of the polar normal method.
#[derive(Clone, Debug)]
pub struct RandomState {
    engine: Mt19937,
    gauss: Option<f64>,
}

/// The smallest all-ones bit mask covering `max`.
fn mask_of(max: u64) -> u64 {
    if max == 0 {
        0
    } else {
        u64::MAX >> max.leading_zeros()
    }
}

/// The element widths numpy draws bounded integers at; narrow ones share
/// one 32-bit word between several draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntWidth {
    Bool,
    W8,
    W16,
    W32,
    W64,
}

impl RandomState {
    /// `RandomState(seed)` for an int seed in `[0, 2**32)`.
    pub fn new(seed: u32) -> RandomState {
        RandomState {
            engine: Mt19937::new(seed),
            gauss: None,
        }
    }

    /// `RandomState(seed)` for a sequence of 32-bit words (`init_by_array`).
    pub fn from_key(key: &[u32]) -> RandomState {
        RandomState {
            engine: Mt19937::from_key(key),
            gauss: None,
        }
    }

    /// `get_state()`'s parts: the key, the read position (624 when a twist
    /// is due), and the cached normal sample.
    pub fn state(&self) -> (&[u32; WORDS], usize, Option<f64>) {
        (self.engine.words(), self.engine.position(), self.gauss)
    }

    /// `set_state(('MT19937', key, pos, has_gauss, gauss))`.
    pub fn from_state(key: [u32; WORDS], pos: usize, gauss: Option<f64>) -> RandomState {
        RandomState {
            engine: Mt19937::from_parts(key, pos),
            gauss,
        }
    }

    pub fn next_u32(&mut self) -> u32 {
        self.engine.next_u32()
    }

    /// A double in [0, 1) from 53 random bits of two words.
    pub fn next_double(&mut self) -> f64 {
        let a = (self.engine.next_u32() >> 5) as f64;
        let b = (self.engine.next_u32() >> 6) as f64;
        (a * 67108864.0 + b) / 9007199254740992.0
    }

    /// A standard normal sample by the polar method, which yields two: the
    /// second is kept for the next call.
    pub fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        loop {
            let x1 = 2.0 * self.next_double() - 1.0;
            let x2 = 2.0 * self.next_double() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.gauss = Some(f * x1);
                return f * x2;
            }
        }
    }

    pub fn doubles(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.next_double()).collect()
    }

    pub fn gaussians(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.gauss()).collect()
    }

    /// `n` integers `off + k` with `k` uniform in `[0, range]` (inclusive),
    /// by numpy's masked rejection: narrow widths take their bits from a
    /// word shared between consecutive draws of this call, as numpy's
    /// buffered draws do. Returns the offsets `k`.
    pub fn bounded(&mut self, range: u64, n: usize, width: IntWidth) -> Vec<u64> {
        if range == 0 {
            return vec![0; n];
        }
        let mask = mask_of(range);
        let (bits, per_word) = match width {
            IntWidth::Bool => (1, 32),
            IntWidth::W8 => (8, 4),
            IntWidth::W16 => (16, 2),
            IntWidth::W32 | IntWidth::W64 => (32, 1),
        };
        let mut buffer = 0u32;
        let mut left = 0u32;
        let mut draw = |engine: &mut Mt19937| -> u64 {
            // Ranges within 32 bits draw one word even for 64-bit results.
            if bits >= 32 {
                return if range > u32::MAX as u64 {
                    engine.next_u64()
                } else {
                    engine.next_u32() as u64
                };
            }
            if left == 0 {
                buffer = engine.next_u32();
                left = per_word - 1;
            } else {
                buffer >>= bits;
                left -= 1;
            }
            buffer as u64
        };
        (0..n)
            .map(|_| {
                if width == IntWidth::Bool {
                    // numpy draws a bool bit without rejection.
                    return draw(&mut self.engine) & 1;
                }
                if range == u64::MAX || range == u32::MAX as u64 {
                    return draw(&mut self.engine);
                }
                loop {
                    let v = draw(&mut self.engine) & mask;
                    if v <= range {
                        return v;
                    }
                }
            })
            .collect()
    }

    /// A uniform integer in `[0, max]` (numpy's `random_interval`, which its
    /// legacy `shuffle` and `permutation` draw from).
    pub fn interval(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let mask = mask_of(max);
        loop {
            let v = if max <= u32::MAX as u64 {
                (self.engine.next_u32() as u64) & mask
            } else {
                self.engine.next_u64() & mask
            };
            if v <= max {
                return v;
            }
        }
    }

    /// The swaps of a legacy `shuffle` of `n` items: for `i` from `n - 1`
    /// down to 1, the index `j <= i` that item `i` trades places with.
    pub fn shuffle_swaps(&mut self, n: usize) -> Vec<usize> {
        (1..n)
            .rev()
            .map(|i| self.interval(i as u64) as usize)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Values printed by numpy 2.4 for `np.random.seed(0)`.
    #[test]
    fn seeded_streams_match_numpy() {
        let mut rs = RandomState::new(0);
        assert_eq!(rs.next_double(), 0.5488135039273248);
        assert_eq!(rs.gauss(), 0.7415917408091613);
        let ints: Vec<u64> = rs.bounded(9, 5, IntWidth::W64);
        assert_eq!(ints, [3, 7, 9, 3, 5]);
    }

    #[test]
    fn shuffle_swaps_stay_in_range() {
        let mut rs = RandomState::new(3);
        let swaps = rs.shuffle_swaps(100);
        assert_eq!(swaps.len(), 99);
        assert!(swaps.iter().zip((1..100).rev()).all(|(&j, i)| j <= i));
    }
}
