//! The kernels' thread pool. Kernels split large work with `rayon`; called
//! from a thread outside rayon's pool, each parallel region is handed to
//! the pool's workers while the caller sleeps until they finish, a futex
//! wake and a sleep per op (measured: a linear layer on 16 rows took 38 µs
//! that way, 31 µs with the caller in the pool; on one row, 20 → 12 µs).
//! A program whose ops all come from one thread (the `fxvm` binary runs
//! every script on its main thread) makes that thread a worker of the
//! global pool, so it runs its share of each region itself.

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
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(2))
        .use_current_thread()
        .build_global()
        .is_ok()
}
