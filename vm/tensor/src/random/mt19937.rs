//! The 32-bit Mersenne Twister (Matsumoto and Nishimura's mt19937), the
//! engine under both PyTorch's CPU generator and numpy's legacy
//! `RandomState`. Both seed it the reference way (`init_genrand`); numpy also
//! seeds from a key array (`init_by_array`).

const N: usize = 624;
const M: usize = 397;

/// The number of 32-bit words in the engine's state.
pub const WORDS: usize = N;

#[derive(Clone, Debug)]
pub struct Mt19937 {
    words: [u32; N],
    /// Index of the next word to hand out; `N` means "twist first".
    next: usize,
}

impl Mt19937 {
    /// The reference `init_genrand(seed)`.
    pub fn new(seed: u32) -> Mt19937 {
        let mut words = [0u32; N];
        words[0] = seed;
        for i in 1..N {
            let prev = words[i - 1];
            words[i] = 1812433253u32
                .wrapping_mul(prev ^ (prev >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { words, next: N }
    }

    /// The reference `init_by_array(key)`, which numpy uses for seeds given
    /// as sequences (and for ints past 32 bits in its newer APIs).
    pub fn from_key(key: &[u32]) -> Mt19937 {
        let mut mt = Mt19937::new(19650218);
        let w = &mut mt.words;
        let (mut i, mut j) = (1usize, 0usize);
        for _ in 0..N.max(key.len()) {
            let prev = w[i - 1];
            w[i] = (w[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1664525))
                .wrapping_add(key.get(j).copied().unwrap_or(0))
                .wrapping_add(j as u32);
            i += 1;
            j += 1;
            if i >= N {
                w[0] = w[N - 1];
                i = 1;
            }
            if j >= key.len() {
                j = 0;
            }
        }
        for _ in 0..N - 1 {
            let prev = w[i - 1];
            w[i] = (w[i] ^ (prev ^ (prev >> 30)).wrapping_mul(1566083941)).wrapping_sub(i as u32);
            i += 1;
            if i >= N {
                w[0] = w[N - 1];
                i = 1;
            }
        }
        w[0] = 0x8000_0000;
        mt
    }

    /// An engine from its words and read position (`N` = twist first).
    pub fn from_parts(words: [u32; N], next: usize) -> Mt19937 {
        Mt19937 {
            words,
            next: next.min(N),
        }
    }

    pub fn words(&self) -> &[u32; N] {
        &self.words
    }

    /// Index of the next word to hand out (`WORDS` when a twist is due).
    pub fn position(&self) -> usize {
        self.next
    }

    fn twist(&mut self) {
        let w = &mut self.words;
        for k in 0..N {
            let y = (w[k] & 0x8000_0000) | (w[(k + 1) % N] & 0x7fff_ffff);
            let mag = if y & 1 == 1 { 0x9908_b0df } else { 0 };
            w[k] = w[(k + M) % N] ^ (y >> 1) ^ mag;
        }
        self.next = 0;
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        if self.next >= N {
            self.twist();
        }
        let mut y = self.words[self.next];
        self.next += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// 64 random bits from two draws, the first one high.
    pub fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        let lo = self.next_u32() as u64;
        (hi << 32) | lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_outputs() {
        // mt19937ar.c's published test vector: init_by_array({0x123, 0x234,
        // 0x345, 0x456}) then genrand_int32().
        let mut mt = Mt19937::from_key(&[0x123, 0x234, 0x345, 0x456]);
        let first: Vec<u32> = (0..5).map(|_| mt.next_u32()).collect();
        assert_eq!(
            first,
            [1067595299, 955945823, 477289528, 4107218783, 4228976476]
        );
        // The C++ standard's check: the 10000th draw of a default-seeded engine.
        let mut mt = Mt19937::new(5489);
        let last = (0..10000).map(|_| mt.next_u32()).last();
        assert_eq!(last, Some(4123659995));
    }
}
