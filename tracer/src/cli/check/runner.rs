//! Runs cases in parallel: each worker thread keeps one interpreter (torch
//! imported once, as pytest's tests share a process) and renders its cases
//! in turn. A case that crashes fxvm itself (a Rust panic) costs only that
//! case: its worker's interpreter is abandoned and a fresh worker takes the
//! remaining cases.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use super::case::Case;
use super::verdict::{CaseResult, Mode, check_case};
use crate::cli::session::Session;

/// Native stack of a worker: deep Python recursion and deeply nested
/// sources are bounded by the interpreter's limits, not by the thread.
const WORKER_STACK: usize = 64 << 20;

/// Runs every case with up to `jobs` workers; `done` sees each result on
/// the calling thread, in the cases' order, as soon as it and all before
/// it have finished.
pub(crate) fn run_cases(
    cases: &[Case],
    mode: Mode,
    site_packages: &[PathBuf],
    jobs: usize,
    mut done: impl FnMut(&Case, CaseResult),
) {
    let next = AtomicUsize::new(0);
    let (send, receive) = mpsc::channel::<Message>();
    std::thread::scope(|scope| {
        let spawn = || {
            let send = send.clone();
            let next = &next;
            std::thread::Builder::new()
                .name("fxvm-check".into())
                .stack_size(WORKER_STACK)
                .spawn_scoped(scope, move || {
                    worker(cases, mode, site_packages, next, &send)
                })
                .expect("spawning a worker thread")
        };
        for _ in 0..jobs.clamp(1, cases.len().max(1)) {
            spawn();
        }
        // Results arrive in any order; they are reported in the cases' order.
        let mut waiting: Vec<Option<CaseResult>> = (0..cases.len()).map(|_| None).collect();
        let mut reported = 0;
        while reported < cases.len() {
            let Ok(message) = receive.recv() else { break };
            if message.crashed && next.load(Ordering::Relaxed) < cases.len() {
                spawn();
            }
            waiting[message.index] = Some(message.result);
            while let Some(result) = waiting.get_mut(reported).and_then(Option::take) {
                done(&cases[reported], result);
                reported += 1;
            }
        }
    });
}

struct Message {
    index: usize,
    result: CaseResult,
    /// The worker stopped after this case (fxvm itself panicked).
    crashed: bool,
}

fn worker(
    cases: &[Case],
    mode: Mode,
    site_packages: &[PathBuf],
    next: &AtomicUsize,
    send: &mpsc::Sender<Message>,
) {
    // Cases reseed before drawing (other workers must not draw between)
    // and may set the default dtype: each worker keeps its own.
    fxvm_tensor::random::Generator::own_thread_default();
    fxvm_tensor::dtype::own_thread_default_float();
    let mut session: Option<Session> = None;
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        let Some(case) = cases.get(index) else { return };
        let start = Instant::now();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let session = session.get_or_insert_with(|| Session::new(site_packages));
            check_case(session, case, mode)
        }));
        let crashed = outcome.is_err();
        let mut result = outcome.unwrap_or_else(|_| {
            CaseResult::failed(
                case,
                "fxvm internal error (see its message above)",
                String::new(),
            )
        });
        result.time = start.elapsed();
        if send
            .send(Message {
                index,
                result,
                crashed,
            })
            .is_err()
            || crashed
        {
            // An interpreter a panic unwound through is not used again (nor
            // this thread, whose interpreter-local state it may have left).
            return;
        }
    }
}

/// The jobs to run at once when none are asked for: one per core.
pub(crate) fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}
