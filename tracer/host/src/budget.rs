//! The time budget. One watchdog thread per host checks the deadline of
//! the call in progress (arming a call is two atomic stores, so a call under
//! a limit costs no more than one without). Past the deadline it asks the
//! interpreter, through its user-signal channel (checked between bytecode
//! instructions), to raise `TimeLimitExceeded`; each raise queues the next,
//! so it is raised again on every instruction until the call returns — no
//! `except:` can catch it and carry on (the handler's first instruction
//! raises again). The watchdog keeps re-signalling too: the pending flag
//! interpreters poll is process-wide, and another host may consume it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustpython_vm::signal::{UserSignal, UserSignalSender};
use rustpython_vm::{PyObjectRef, VirtualMachine};

/// How often the watchdog re-signals once a deadline has passed.
const NAG: Duration = Duration::from_millis(2);

/// What the watchdog, the signals and the host share.
struct Shared {
    epoch: Instant,
    limit: Duration,
    /// The running call's deadline in ns since `epoch`; 0 when none runs.
    deadline: AtomicU64,
    /// Numbers calls, so a late signal never stops the next call.
    generation: AtomicU64,
    /// The generation whose deadline passed.
    expired: AtomicU64,
    shutdown: AtomicBool,
    class: PyObjectRef,
    sender: UserSignalSender,
}

impl Shared {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// The signal that raises `TimeLimitExceeded` in call `generation` and
    /// queues itself again.
    fn signal(self: &Arc<Self>, generation: u64) -> UserSignal {
        let shared = self.clone();
        Box::new(move |vm: &VirtualMachine| {
            if shared.generation.load(Ordering::Acquire) != generation
                || shared.deadline.load(Ordering::Acquire) == 0
            {
                return Ok(());
            }
            shared.expired.store(generation, Ordering::Release);
            let _ = shared.sender.send(shared.signal(generation));
            // The import machinery releases its locks (one is process-wide)
            // in `finally`/`__exit__` code: let it, and raise on the next
            // instruction outside it.
            if in_import_machinery(vm) {
                return Ok(());
            }
            let exc = shared.class.call(("the host's time budget ran out",), vm)?;
            Err(exc
                .downcast()
                .map_err(|_| vm.new_type_error("TimeLimitExceeded is not an exception"))?)
        })
    }
}

/// Whether the innermost frame runs importlib's own code.
fn in_import_machinery(vm: &VirtualMachine) -> bool {
    vm.current_frame().is_some_and(|f| {
        matches!(
            f.code.source_path.as_str(),
            "_frozen_importlib" | "_frozen_importlib_external"
        )
    })
}

/// A host's watchdog thread (stopped when the host is dropped).
pub(crate) struct Watchdog {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    pub(crate) fn start(limit: Duration, sender: UserSignalSender, class: PyObjectRef) -> Watchdog {
        let shared = Arc::new(Shared {
            epoch: Instant::now(),
            limit,
            deadline: AtomicU64::new(0),
            generation: AtomicU64::new(0),
            expired: AtomicU64::new(0),
            shutdown: AtomicBool::new(false),
            class,
            sender,
        });
        // Deadlines are noticed within a tick: an eighth of the limit, 1–10 ms.
        let tick = (limit / 8).clamp(Duration::from_millis(1), Duration::from_millis(10));
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            while !s.shutdown.load(Ordering::Acquire) {
                let deadline = s.deadline.load(Ordering::Acquire);
                if deadline != 0 && s.now() >= deadline {
                    let generation = s.generation.load(Ordering::Acquire);
                    if s.sender.send(s.signal(generation)).is_err() {
                        return;
                    }
                    std::thread::park_timeout(NAG);
                } else {
                    std::thread::park_timeout(tick);
                }
            }
        });
        Watchdog {
            shared,
            thread: Some(thread),
        }
    }

    /// Starts timing a call; returns its generation for [`Watchdog::finish`].
    pub(crate) fn arm(&self) -> u64 {
        let s = &self.shared;
        let generation = s.generation.fetch_add(1, Ordering::AcqRel) + 1;
        let limit = u64::try_from(s.limit.as_nanos()).unwrap_or(u64::MAX);
        s.deadline
            .store(s.now().saturating_add(limit).max(1), Ordering::Release);
        generation
    }

    /// Ends the call: true when its budget ran out.
    pub(crate) fn finish(&self, generation: u64) -> bool {
        self.shared.deadline.store(0, Ordering::Release);
        self.shared.expired.load(Ordering::Acquire) == generation
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}
