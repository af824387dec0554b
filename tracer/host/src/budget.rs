//! The time budget. One watchdog thread per host checks the deadline of
//! the call in progress (arming a call is two atomic stores, so a call under
//! a limit costs no more than one without). Past the deadline it asks the
//! interpreter, through its user-signal channel, to stop the call: the
//! signal turns on tracing for this interpreter — a trace function on every
//! frame of the stack and every frame entered after — which raises
//! `TimeLimitExceeded` at the next instruction of any frame outside
//! importlib (whose `finally`/`__exit__` code releases a process-wide lock).
//! An exception from a trace function ends its frame without consulting the
//! frame's own `try` blocks, and every frame a handler up the stack enters
//! ends the same way, so no `except:` can carry on. Raising from the signal
//! itself would unwind through exception tables at whatever instruction the
//! signal lands on, which RustPython does not always survive when other
//! hosts share the process-wide signal flag.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::function::{ArgIntoFloat, FuncArgs};
use rustpython_vm::signal::{UserSignal, UserSignalSender};
use rustpython_vm::{AsObject, PyObjectRef, PyResult, VirtualMachine};

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
    /// Set once the running call's interpreter is tracing to stop it.
    tracing: AtomicU64,
    class: PyObjectRef,
    sender: UserSignalSender,
    /// The trace function (made on first use, inside the interpreter).
    tracer: std::sync::OnceLock<PyObjectRef>,
    /// `sys.settrace` as the interpreter started with it: a script may
    /// rebind `sys.settrace` to disarm the budget, never this.
    settrace: std::sync::OnceLock<PyObjectRef>,
    import_code: std::sync::OnceLock<ImportCode>,
}

impl Shared {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    fn current(&self, generation: u64) -> bool {
        self.generation.load(Ordering::Acquire) == generation
            && self.deadline.load(Ordering::Acquire) != 0
    }

    /// The trace function: raises `TimeLimitExceeded` on any event of the
    /// call it was installed for, outside importlib; keeps tracing otherwise.
    fn tracer(self: &Arc<Self>, vm: &VirtualMachine) -> PyObjectRef {
        self.tracer
            .get_or_init(|| {
                let shared = self.clone();
                vm.new_function(
                    "_fxvm_time_limit",
                    move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                        let me = shared
                            .tracer
                            .get()
                            .cloned()
                            .unwrap_or_else(|| vm.ctx.none());
                        if !shared.current(shared.tracing.load(Ordering::Acquire)) {
                            return Ok(vm.ctx.none());
                        }
                        let frame = args.args.first().cloned().unwrap_or_else(|| vm.ctx.none());
                        // New frames trace their instructions too.
                        frame.set_attr("f_trace_opcodes", vm.ctx.new_bool(true), vm)?;
                        if shared
                            .import_code
                            .get()
                            .is_some_and(|code| in_import_machinery(vm, code))
                        {
                            return Ok(me);
                        }
                        Err(shared.stop_exception(vm)?)
                    },
                )
                .into()
            })
            .clone()
    }

    fn stop_exception(&self, vm: &VirtualMachine) -> PyResult<PyBaseExceptionRef> {
        let exc = self.class.call(("the host's time budget ran out",), vm)?;
        exc.downcast()
            .map_err(|_| vm.new_type_error("TimeLimitExceeded is not an exception"))
    }

    /// The signal that starts tracing to stop call `generation`.
    fn signal(self: &Arc<Self>, generation: u64) -> UserSignal {
        let shared = self.clone();
        Box::new(move |vm: &VirtualMachine| {
            if !shared.current(generation) || shared.tracing.load(Ordering::Acquire) == generation {
                return Ok(());
            }
            shared.expired.store(generation, Ordering::Release);
            let tracer = shared.tracer(vm);
            // Every frame on the stack traces from its next instruction on.
            let mut frame: Option<PyObjectRef> = vm.current_frame().map(Into::into);
            while let Some(f) = frame.filter(|f| !vm.is_none(f)) {
                f.set_attr("f_trace", tracer.clone(), vm)?;
                f.set_attr("f_trace_opcodes", vm.ctx.new_bool(true), vm)?;
                frame = Some(f.get_attr("f_back", vm)?);
            }
            if let Some(settrace) = shared.settrace.get() {
                settrace.call((tracer,), vm)?;
            }
            shared.tracing.store(generation, Ordering::Release);
            Ok(())
        })
    }

    /// Turns off the tracing a run-out budget started (after the call).
    pub(crate) fn untrace(&self, vm: &VirtualMachine) {
        if self.tracer.get().is_some()
            && let Some(settrace) = self.settrace.get()
        {
            let _ = settrace.call((vm.ctx.none(),), vm);
        }
    }
}

/// Importlib's own code objects, collected before any script runs: the
/// trace function lets them finish (their `finally` releases a
/// process-wide lock). Identity, not the file name, decides — a script can
/// compile anything under the name `_frozen_importlib`.
struct ImportCode {
    ids: std::collections::HashSet<usize>,
    /// Held so that no id is reused while the host lives.
    _codes: Vec<PyObjectRef>,
}

const IMPORT_CODE: &str = "def _codes():
    import _frozen_importlib as a, _frozen_importlib_external as b, types
    seen = {}
    def add(c):
        if isinstance(c, types.CodeType) and id(c) not in seen:
            seen[id(c)] = c
            for k in c.co_consts:
                add(k)
    def visit(o, depth=0):
        if isinstance(o, types.FunctionType):
            add(o.__code__)
        elif isinstance(o, (staticmethod, classmethod)):
            visit(o.__func__, depth)
        elif isinstance(o, property):
            for f in (o.fget, o.fset, o.fdel):
                visit(f, depth)
        elif isinstance(o, type) and depth == 0:
            for v in list(vars(o).values()):
                visit(v, 1)
    for m in (a, b):
        for v in list(vars(m).values()):
            visit(v)
    return list(seen.values())
";

impl ImportCode {
    fn collect(vm: &VirtualMachine) -> PyResult<ImportCode> {
        let scope = vm.ctx.new_dict();
        crate::host::Host::exec(vm, IMPORT_CODE, "<fxvm budget>", scope.clone())?;
        let codes: Vec<PyObjectRef> = scope
            .get_item("_codes", vm)?
            .call((), vm)?
            .try_to_value(vm)?;
        Ok(ImportCode {
            ids: codes.iter().map(|c| c.get_id()).collect(),
            _codes: codes,
        })
    }
}

/// Whether the innermost frame runs importlib's own code.
fn in_import_machinery(vm: &VirtualMachine, code: &ImportCode) -> bool {
    vm.current_frame()
        .is_some_and(|f| code.ids.contains(&f.code.as_object().get_id()))
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
            tracing: AtomicU64::new(0),
            class,
            sender,
            tracer: std::sync::OnceLock::new(),
            settrace: std::sync::OnceLock::new(),
            import_code: std::sync::OnceLock::new(),
        });
        // Deadlines are noticed within a tick: an eighth of the limit, 1–10 ms.
        let tick = (limit / 8).clamp(Duration::from_millis(1), Duration::from_millis(10));
        let s = shared.clone();
        let thread = std::thread::spawn(move || {
            while !s.shutdown.load(Ordering::Acquire) {
                let deadline = s.deadline.load(Ordering::Acquire);
                let generation = s.generation.load(Ordering::Acquire);
                if deadline != 0
                    && s.now() >= deadline
                    && s.tracing.load(Ordering::Acquire) != generation
                {
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

    /// Readies the interpreter before any script runs: keeps its own
    /// `sys.settrace`, and bounds `time.sleep` by the running call's
    /// budget — a sleep past the deadline sleeps to it and raises
    /// `TimeLimitExceeded` (a blocked thread runs no instructions for the
    /// tracing to stop).
    pub(crate) fn install(&self, vm: &VirtualMachine) -> PyResult<()> {
        let _ = self
            .shared
            .settrace
            .set(vm.sys_module.get_attr("settrace", vm)?);
        let _ = self.shared.import_code.set(ImportCode::collect(vm)?);
        let time = vm.import("time", 0)?;
        let original = time.get_attr("sleep", vm)?;
        let shared = self.shared.clone();
        let sleep = vm.new_function(
            "sleep",
            move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                let deadline = shared.deadline.load(Ordering::Acquire);
                let asked = args
                    .args
                    .first()
                    .and_then(|s| s.clone().try_into_value::<ArgIntoFloat>(vm).ok())
                    .map(ArgIntoFloat::into_float);
                if let Some(seconds) = asked
                    && deadline != 0
                {
                    #[allow(clippy::cast_precision_loss)]
                    let left = deadline.saturating_sub(shared.now()) as f64 / 1e9;
                    if seconds > left {
                        original.call((left,), vm)?;
                        return Err(shared.stop_exception(vm)?);
                    }
                }
                original.call(args, vm)
            },
        );
        time.set_attr("sleep", sleep, vm)
    }

    /// Whether `exc` is the budget's own `TimeLimitExceeded` (a class a
    /// script may name the same is not).
    pub(crate) fn raised(&self, exc: &PyBaseExceptionRef) -> bool {
        exc.class().is(&self.shared.class)
    }

    /// Stops the tracing a run-out budget started (inside the interpreter).
    pub(crate) fn untrace(&self, vm: &VirtualMachine) {
        self.shared.untrace(vm);
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
