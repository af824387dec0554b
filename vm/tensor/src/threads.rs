//! The kernels' thread pool. Kernels split large work with `rayon`; called
//! from a thread outside rayon's pool, each parallel region is handed to
//! the pool's workers while the caller sleeps until they finish, a futex
//! wake and a sleep per op (measured: a linear layer on 16 rows took 38 µs
//! that way, 31 µs with the caller in the pool; on one row, 20 → 12 µs).
//! A program whose ops all come from one thread (the `fxvm` binary runs
//! every script on its main thread) makes that thread a worker of the
//! global pool, so it runs its share of each region itself.
//!
//! A worker that finds no work soon sleeps, and waking it takes tens of
//! microseconds on a virtual machine — as long as half of a mid-sized
//! product (measured on two cores: 512×128×384 split in two, 160 µs when
//! the other worker is awake, 220 when it must be woken). Between the ops
//! of a running program the other workers therefore keep looking for work
//! for a short while ([`keep_warm`]), as OpenMP's threads spin under
//! PyTorch.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Makes the calling thread worker 0 of rayon's global pool: one thread per
/// CPU in all (or `RAYON_NUM_THREADS`), itself included, and never fewer
/// than two, so that work other threads hand to the pool always has a
/// worker that is not the caller. Returns `false`, changing nothing, when
/// the global pool was already built, as only the first configuration counts.
pub fn join_global_pool() -> bool {
    let threads = std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .or_else(|| std::thread::available_parallelism().ok().map(Into::into))
        .unwrap_or(1);
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(2))
        .use_current_thread()
        .build_global()
        .is_ok();
    if built {
        JOINED.store(true, Ordering::Release);
    }
    built
}

/// How long the other workers keep looking for work after the last op or
/// the last piece of work they ran: longer than the interpreter's time
/// between the ops of a model, short enough that a program doing other
/// things soon stops burning the cores.
const KEEP_WARM_MICROS: u64 = 300;

/// Whether the calling thread joined the global pool (only then are its
/// regions worth keeping the workers awake for).
static JOINED: AtomicBool = AtomicBool::new(false);
/// Whether the workers are searching for work now.
static SEARCHING: AtomicBool = AtomicBool::new(false);
/// The last op or piece of work, in microseconds since [`clock`]'s start.
static LAST_ACTIVE: AtomicU64 = AtomicU64::new(0);

fn clock() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_micros() as u64
}

/// Called as each op starts: keeps the global pool's other workers awake
/// and searching for work until [`KEEP_WARM_MICROS`] pass with no op and
/// no work, so that the op's parallel regions start on awake workers. Does
/// nothing unless the caller's program joined the pool
/// ([`join_global_pool`]).
pub fn keep_warm() {
    if !JOINED.load(Ordering::Relaxed) {
        return;
    }
    LAST_ACTIVE.store(clock(), Ordering::Relaxed);
    if SEARCHING.swap(true, Ordering::AcqRel) {
        return;
    }
    rayon::spawn_broadcast(|ctx| {
        // Worker 0 is the caller, which finds its own work.
        if ctx.index() == 0 {
            return;
        }
        loop {
            match rayon::yield_now() {
                Some(rayon::Yield::Executed) => LAST_ACTIVE.store(clock(), Ordering::Relaxed),
                _ if clock().saturating_sub(LAST_ACTIVE.load(Ordering::Relaxed))
                    > KEEP_WARM_MICROS =>
                {
                    break;
                }
                // Yield the core to any other runnable thread (other
                // programs on a shared machine) while searching.
                _ => std::thread::yield_now(),
            }
        }
        SEARCHING.store(false, Ordering::Release);
    });
}

/// Whether the other workers are searching for work now ([`keep_warm`]).
pub fn keeping_warm() -> bool {
    SEARCHING.load(Ordering::Acquire)
}
