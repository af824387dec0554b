//! PyTorch's CPU generator: the [`Mt19937`] engine seeded the way PyTorch
//! seeds it, plus the cached second Box–Muller sample of its double normal
//! draws. Its state serialises to the 5056 bytes `torch.get_rng_state()`
//! returns, so states move between PyTorch and fxvm.

use std::cell::RefCell;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use crate::error::{Result, TensorError};

use super::mt19937::{Mt19937, WORDS as N};

/// The seed a new `torch.Generator()` starts from in PyTorch.
pub const DEFAULT_SEED: u64 = 67280421310721;

/// The engine and the caches PyTorch keeps beside it.
#[derive(Clone, Debug)]
pub struct State {
    initial_seed: u64,
    engine: Mt19937,
    /// The second sample of the last double Box–Muller pair, not yet used.
    pub(crate) next_double_normal: Option<f64>,
    pub(crate) next_float_normal: Option<f32>,
}

impl State {
    /// PyTorch seeds the engine with the seed's low 32 bits.
    fn new(seed: u64) -> State {
        State {
            initial_seed: seed,
            engine: Mt19937::new(seed as u32),
            next_double_normal: None,
            next_float_normal: None,
        }
    }

    /// The next 32 random bits (PyTorch's `random()`).
    pub fn random(&mut self) -> u32 {
        self.engine.next_u32()
    }

    /// 64 random bits from two draws, the first one high (`random64()`).
    pub fn random64(&mut self) -> u64 {
        self.engine.next_u64()
    }
}

/// A handle on one generator; clones share it, as Python references do.
#[derive(Clone, Debug)]
pub struct Generator(Arc<Mutex<State>>);

/// The size of a serialised state, as PyTorch writes it.
pub const STATE_BYTES: usize = 5056;

static DEFAULT: LazyLock<Generator> = LazyLock::new(|| Generator::new(nondeterministic_seed()));

thread_local! {
    /// A thread's own default generator (see [`Generator::own_thread_default`]).
    static THREAD_DEFAULT: RefCell<Option<Generator>> = const { RefCell::new(None) };
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator(Arc::new(Mutex::new(State::new(seed))))
    }

    /// The process-wide generator `torch.manual_seed` reseeds (or the
    /// calling thread's own, once it has one); like PyTorch's, it starts
    /// from a nondeterministic seed.
    pub fn default_cpu() -> Generator {
        THREAD_DEFAULT
            .with_borrow(Clone::clone)
            .unwrap_or_else(|| DEFAULT.clone())
    }

    /// Gives the calling thread a default generator of its own, so that
    /// interpreters running side by side on their own threads (the workers
    /// of `fxvm check`) each draw the streams they would draw alone in a
    /// process, whatever the others do.
    pub fn own_thread_default() {
        THREAD_DEFAULT.set(Some(Generator::new(nondeterministic_seed())));
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn manual_seed(&self, seed: u64) {
        *self.lock() = State::new(seed);
    }

    /// Reseeds from the operating system and returns the new seed.
    pub fn seed(&self) -> u64 {
        let seed = nondeterministic_seed();
        self.manual_seed(seed);
        seed
    }

    pub fn initial_seed(&self) -> u64 {
        self.lock().initial_seed
    }

    /// Whether two handles are the same generator.
    pub fn same(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The state in PyTorch's layout: the initial seed, the twister's
    /// countdown and read position, its 624 words (as 64-bit slots), the
    /// double-normal cache, then the float-normal cache.
    pub fn get_state(&self) -> Vec<u8> {
        let s = self.lock();
        let mut b = Vec::with_capacity(STATE_BYTES);
        b.extend(s.initial_seed.to_le_bytes());
        // PyTorch counts down from 624 to a twist, starting at 1 when fresh.
        let next = s.engine.position();
        let left = if next >= N { 1 } else { (N - next + 1) as i32 };
        b.extend(left.to_le_bytes());
        b.extend(1i32.to_le_bytes());
        b.extend(((next % N) as u64).to_le_bytes());
        for &w in s.engine.words() {
            b.extend((w as u64).to_le_bytes());
        }
        b.extend(0f64.to_le_bytes());
        b.extend(s.next_double_normal.unwrap_or(0.0).to_le_bytes());
        b.extend(0f64.to_le_bytes());
        b.extend((s.next_double_normal.is_some() as i32).to_le_bytes());
        b.extend([0u8; 4]);
        b.extend(s.next_float_normal.unwrap_or(0.0).to_le_bytes());
        b.push(s.next_float_normal.is_some() as u8);
        b.resize(STATE_BYTES, 0);
        b
    }

    /// Restores a state [`Generator::get_state`] (or PyTorch) wrote.
    pub fn set_state(&self, bytes: &[u8]) -> Result<()> {
        if bytes.len() != STATE_BYTES {
            return Err(TensorError::runtime(
                "set_state",
                format!(
                    "Expected a CPUGeneratorImplState of size {STATE_BYTES} but found the input RNG state size to be {}",
                    bytes.len()
                ),
            ));
        }
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8 bytes"));
        let i32_at = |o: usize| i32::from_le_bytes(bytes[o..o + 4].try_into().expect("4 bytes"));
        let left = i32_at(8);
        let next = u64_at(16) as usize;
        if !(1..=N as i32).contains(&left) || next > N {
            return Err(TensorError::runtime(
                "set_state",
                "Invalid mt19937 state (the read position is out of range)",
            ));
        }
        let mut words = [0u32; N];
        for (i, w) in words.iter_mut().enumerate() {
            *w = u64_at(24 + 8 * i) as u32;
        }
        let tail = 24 + 8 * N;
        let double_valid = i32_at(tail + 24) != 0;
        let float_valid = bytes[tail + 36] != 0;
        *self.lock() = State {
            initial_seed: u64_at(0),
            engine: Mt19937::from_parts(words, if left == 1 { N } else { next }),
            next_double_normal: double_valid.then(|| {
                f64::from_le_bytes(bytes[tail + 8..tail + 16].try_into().expect("8 bytes"))
            }),
            next_float_normal: float_valid.then(|| {
                f32::from_le_bytes(bytes[tail + 32..tail + 36].try_into().expect("4 bytes"))
            }),
        };
        Ok(())
    }
}

/// 64 bits from the operating system's entropy, as PyTorch's default seed.
fn nondeterministic_seed() -> u64 {
    use std::hash::{BuildHasher, RandomState};
    RandomState::new().hash_one(std::time::SystemTime::now())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_thread_with_its_own_default_draws_apart_from_the_process() {
        let process = Generator::default_cpu();
        let mine = std::thread::spawn(|| {
            Generator::own_thread_default();
            let own = Generator::default_cpu();
            own.manual_seed(7);
            assert_eq!(
                Generator::default_cpu().lock().random(),
                State::new(7).random()
            );
            own
        })
        .join()
        .unwrap();
        assert!(!Arc::ptr_eq(&process.0, &mine.0));
        assert!(Arc::ptr_eq(&process.0, &Generator::default_cpu().0));
    }

    use super::*;

    #[test]
    fn seed_zero_matches_pytorch_first_words() {
        // torch.manual_seed(0); torch.randint(0, 2**31, (2,)) draws these
        // words modulo 2**31 from the same engine.
        let mut s = State::new(0);
        assert_eq!(s.random(), 2357136044);
        assert_eq!(s.random(), 2546248239);
    }

    #[test]
    fn state_round_trips_mid_stream() {
        let g = Generator::new(7);
        for _ in 0..1000 {
            g.lock().random();
        }
        g.lock().next_double_normal = Some(0.25);
        let saved = g.get_state();
        assert_eq!(saved.len(), STATE_BYTES);
        let expected: Vec<u32> = (0..700).map(|_| g.lock().random()).collect();
        let h = Generator::new(0);
        h.set_state(&saved).unwrap();
        assert_eq!(h.initial_seed(), 7);
        assert_eq!(h.lock().next_double_normal, Some(0.25));
        let got: Vec<u32> = (0..700).map(|_| h.lock().random()).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn fresh_state_reads_as_pytorch_writes_it() {
        // A fresh generator: countdown 1, position 0.
        let b = Generator::new(0).get_state();
        assert_eq!(&b[8..12], &1i32.to_le_bytes());
        assert_eq!(&b[16..24], &0u64.to_le_bytes());
        assert!(Generator::new(0).set_state(&b[..100]).is_err());
    }
}
