//! The time budget: past the deadline, a watchdog thread asks the
//! interpreter (through its user-signal channel, checked between bytecode
//! instructions) to raise `TimeLimitExceeded`; each raise queues the next,
//! so it is raised again on every instruction until the host call returns —
//! no `except:` can catch it and carry on (the handler's first instruction
//! raises again). The watchdog keeps re-signalling too, as the pending flag
//! interpreters poll is process-wide and another host may consume it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustpython_vm::signal::{UserSignal, UserSignalSender};
use rustpython_vm::{PyObjectRef, VirtualMachine};

/// State one host call shares with its watchdog.
pub(crate) struct Budget {
    running: Arc<AtomicBool>,
    expired: Arc<AtomicBool>,
    watchdog: Option<std::thread::JoinHandle<()>>,
}

/// How often the watchdog re-signals once the deadline has passed.
const NAG: Duration = Duration::from_millis(2);

/// What the signal needs: the call's flags, the exception class, the channel.
#[derive(Clone)]
struct Stop {
    running: Arc<AtomicBool>,
    expired: Arc<AtomicBool>,
    class: PyObjectRef,
    sender: UserSignalSender,
}

impl Stop {
    /// The signal that raises `TimeLimitExceeded` and queues itself again.
    fn signal(self) -> UserSignal {
        Box::new(move |vm: &VirtualMachine| {
            if !self.running.load(Ordering::Acquire) {
                return Ok(());
            }
            self.expired.store(true, Ordering::Release);
            let _ = self.sender.send(self.clone().signal());
            // The import machinery releases its locks (one is process-wide)
            // in `finally`/`__exit__` code: let it, and raise on the next
            // instruction outside it.
            if in_import_machinery(vm) {
                return Ok(());
            }
            let exc = self.class.call(("the host's time budget ran out",), vm)?;
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

impl Budget {
    /// Starts the watchdog for a call that may run until `limit` from now.
    pub(crate) fn start(limit: Duration, sender: UserSignalSender, class: PyObjectRef) -> Budget {
        let running = Arc::new(AtomicBool::new(true));
        let expired = Arc::new(AtomicBool::new(false));
        let deadline = Instant::now() + limit;
        let stop = Stop {
            running: running.clone(),
            expired: expired.clone(),
            class,
            sender,
        };
        let watchdog = std::thread::spawn(move || {
            while stop.running.load(Ordering::Acquire) {
                let now = Instant::now();
                if now < deadline {
                    std::thread::park_timeout((deadline - now).min(Duration::from_millis(50)));
                    continue;
                }
                if stop.sender.send(stop.clone().signal()).is_err() {
                    return;
                }
                std::thread::park_timeout(NAG);
            }
        });
        Budget {
            running,
            expired,
            watchdog: Some(watchdog),
        }
    }

    /// Ends the call: the watchdog stops; true when the budget ran out.
    pub(crate) fn finish(mut self) -> bool {
        self.running.store(false, Ordering::Release);
        if let Some(w) = self.watchdog.take() {
            w.thread().unpark();
            let _ = w.join();
        }
        self.expired.load(Ordering::Acquire)
    }
}
