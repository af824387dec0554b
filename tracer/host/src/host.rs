//! The host: one interpreter with `torch` and `torch.fx`, entered for each
//! call under the host's limits; errors come back as [`Error`]s.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyDictRef};
use rustpython_vm::function::{FuncArgs, PyMethodFlags};
use rustpython_vm::{AsObject, Interpreter, PyObjectRef, PyResult, VirtualMachine};

use fxvm_tensor::cap::MemoryCap;
use fxvm_vm::policy::{Folders, Policy, Registration};

use crate::budget::Watchdog;
use crate::error::{Error, ErrorKind, ExceptionClass, Result};
use crate::graph::{self, Graph};
use crate::value::{Handle, Value, values_of};

/// Limits a host puts on every call into Python.
#[derive(Debug, Clone, Default)]
pub struct Limits {
    /// Wall time one call may take before the script is stopped.
    pub time: Option<Duration>,
    /// The most Python frames a call may nest (fewer when the calling
    /// thread's stack holds fewer); 1000 by default.
    pub recursion: Option<usize>,
    /// Bytes of tensor storage the host's scripts may hold at once; past
    /// it an allocation raises `MemoryError` (the host goes on).
    pub tensor_memory: Option<usize>,
}

/// Configures a [`Host`]. A host grants nothing by default: its scripts
/// compute, import `torch` and the computing part of the standard library,
/// and read the folders they are imported from; files, network, processes,
/// environment variables, threads, other modules and native code are each
/// refused with a `PermissionError` (an `ImportError` for imports) that
/// names the method granting them.
#[derive(Debug, Clone, Default)]
pub struct HostBuilder {
    limits: Limits,
    path: Vec<String>,
    policy: Policy,
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
    full: bool,
}

impl HostBuilder {
    /// Stops any call that runs longer than `limit` with
    /// [`ErrorKind::TimeLimit`]; the script cannot catch it and carry on.
    pub fn time_limit(mut self, limit: Duration) -> Self {
        self.limits.time = Some(limit);
        self
    }

    /// The most Python frames a call may nest (fewer when the calling
    /// thread's stack holds fewer).
    pub fn recursion_limit(mut self, depth: usize) -> Self {
        self.limits.recursion = Some(depth);
        self
    }

    /// Caps the tensor memory the host's scripts hold at once.
    pub fn memory_limit(mut self, bytes: usize) -> Self {
        self.limits.tensor_memory = Some(bytes);
        self
    }

    /// Adds a folder scripts import modules from (first added, first
    /// searched); scripts may read files in it.
    pub fn import_path(mut self, dir: impl Into<String>) -> Self {
        let dir = dir.into();
        self.read.push(PathBuf::from(&dir));
        self.path.push(dir);
        self
    }

    /// Lets scripts read files in `dir` and below (an existing folder;
    /// symlinks count where they lead).
    pub fn allow_read(mut self, dir: impl AsRef<Path>) -> Self {
        self.read.push(dir.as_ref().to_path_buf());
        self
    }

    /// Lets scripts create, write, rename and remove files in `dir` and
    /// below, and read them.
    pub fn allow_write(mut self, dir: impl AsRef<Path>) -> Self {
        self.write.push(dir.as_ref().to_path_buf());
        self
    }

    /// Lets scripts use sockets (`socket`, `ssl`, `select`).
    pub fn allow_network(mut self) -> Self {
        self.policy.network = true;
        self
    }

    /// Lets scripts start, signal and wait for processes, and change the
    /// process (`subprocess`, `os.system`, `os.kill`, `signal`, `os._exit`).
    pub fn allow_processes(mut self) -> Self {
        self.policy.processes = true;
        self
    }

    /// Lets scripts read and set environment variables, change the working
    /// directory, the umask and the locale, and read the user database.
    pub fn allow_environment(mut self) -> Self {
        self.policy.environment = true;
        self
    }

    /// Lets scripts start threads.
    pub fn allow_threads(mut self) -> Self {
        self.policy.threads = true;
        self
    }

    /// Lets scripts load native code and low-level system modules:
    /// `ctypes`, `mmap`, `fcntl`, `termios`, `sqlite3`, code from bytes
    /// (`marshal.loads`, `types.CodeType`), the collector's object lists.
    pub fn allow_native(mut self) -> Self {
        self.policy.native = true;
        self
    }

    /// Lets scripts import the module or package `name` (a top-level name)
    /// beyond the default allow list.
    pub fn allow_import(mut self, name: impl Into<String>) -> Self {
        self.policy.imports.push(name.into());
        self
    }

    /// Lets scripts import any module (what each then reaches stays subject
    /// to the other capabilities).
    pub fn allow_all_imports(mut self) -> Self {
        self.policy.all_imports = true;
        self
    }

    /// Grants everything, as `fxvm run` has.
    pub fn allow_all(mut self) -> Self {
        self.full = true;
        self
    }

    pub fn build(self) -> Result<Host> {
        let policy = self.policy()?;
        let config = fxvm_vm::Config {
            argv: vec!["<host>".into()],
            path: self.path,
            // SIGINT belongs to the embedding program.
            no_signal_handlers: true,
            // A sandboxed script writes nothing beside the modules it imports.
            write_bytecode: false,
        };
        let (sender, receiver) = rustpython_vm::signal::user_signal_channel();
        let interp = fxvm_vm::build_from(
            fxvm_tracer::builder(&config).init_hook(move |vm| vm.set_user_signal_channel(receiver)),
        );
        let ceiling = Arc::new(AtomicUsize::new(DEFAULT_RECURSION));
        let registration = interp
            .enter(|vm| fxvm_vm::policy::install(vm, policy))
            .map_err(|e| interp.enter(|vm| error_of(&e, vm)))?;
        let (module, stop_class) = interp
            .enter(|vm| host_module(vm, ceiling.clone()))
            .map_err(|e| interp.enter(|vm| error_of(&e, vm)))?;
        let watchdog = self
            .limits
            .time
            .map(|limit| Watchdog::start(limit, sender, stop_class));
        if let Some(w) = &watchdog {
            interp
                .enter(|vm| w.install(vm))
                .map_err(|e| interp.enter(|vm| error_of(&e, vm)))?;
        }
        Ok(Host {
            interp,
            memory: self.limits.tensor_memory.map(MemoryCap::new),
            watchdog,
            module,
            recursion: self.limits.recursion.unwrap_or(DEFAULT_RECURSION),
            ceiling,
            _policy: registration,
        })
    }

    /// The policy, its folders made canonical (each must exist).
    fn policy(&self) -> Result<Policy> {
        if self.full {
            return Ok(Policy::full());
        }
        let mut policy = self.policy.clone();
        let grant = |folders: &mut Folders, dir: &PathBuf| {
            folders.grant(dir).map_err(|e| {
                Error::new(
                    ErrorKind::Io,
                    format!("can't grant access to '{}': {e}", dir.display()),
                )
            })
        };
        for dir in &self.read {
            grant(&mut policy.read, dir)?;
        }
        for dir in &self.write {
            grant(&mut policy.write, dir)?;
        }
        Ok(policy)
    }
}

/// Creates `fxvm_host` (the registered Rust functions and the exception a
/// time limit raises).
fn host_module(
    vm: &VirtualMachine,
    ceiling: Arc<AtomicUsize>,
) -> PyResult<(PyObjectRef, PyObjectRef)> {
    let dict = vm.ctx.new_dict();
    let module: PyObjectRef = vm.new_module("fxvm_host", dict.clone(), None).into();
    vm.sys_module
        .get_attr("modules", vm)?
        .set_item("fxvm_host", module.clone(), vm)?;
    let source = "class TimeLimitExceeded(BaseException):\n    \"\"\"Raised when the host's time budget runs out, in every frame of the call until it returns.\"\"\"\n";
    let code = vm
        .builtins
        .get_attr("compile", vm)?
        .call((source, "fxvm_host", "exec"), vm)?;
    vm.builtins
        .get_attr("exec", vm)?
        .call((code, dict.clone()), vm)?;
    // A script may lower its recursion limit, never raise it past what the
    // calling thread's stack holds.
    let set_limit = vm.new_function(
        "setrecursionlimit",
        move |limit: usize, vm: &VirtualMachine| -> PyResult<()> {
            if limit < 1 {
                return Err(vm.new_value_error("recursion limit must be greater or equal than 1"));
            }
            vm.recursion_limit
                .set(limit.min(ceiling.load(Ordering::Relaxed)));
            Ok(())
        },
    );
    vm.sys_module.set_attr("setrecursionlimit", set_limit, vm)?;
    let stop = dict.get_item("TimeLimitExceeded", vm)?;
    Ok((module, stop))
}

/// The traceback text as Python prints it: through `traceback` (which
/// reads sources the host ran from `linecache`), else the VM's own.
fn traceback_text(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> String {
    let formatted = vm.import("traceback", 0).and_then(|tb| {
        let lines = tb
            .get_attr("format_exception", vm)?
            .call((exc.clone(),), vm)?;
        let lines: Vec<PyObjectRef> = lines.try_to_value(vm)?;
        lines
            .iter()
            .map(|l| l.str(vm).map(|s| s.to_string_lossy().into_owned()))
            .collect::<PyResult<String>>()
    });
    formatted.unwrap_or_else(|_| {
        let mut text = String::new();
        let _ = vm.write_exception(&mut text, exc);
        text
    })
}

/// A Python exception as a host error, with its traceback text.
fn error_of(exc: &PyBaseExceptionRef, vm: &VirtualMachine) -> Error {
    let traceback = traceback_text(exc, vm);
    let message = exc
        .as_object()
        .str(vm)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    Error {
        kind: ErrorKind::Python(class_of(exc.class(), vm)),
        message,
        traceback,
    }
}

/// An exception class as data (see [`ExceptionClass`]).
fn class_of(
    cls: &rustpython_vm::Py<rustpython_vm::builtins::PyType>,
    vm: &VirtualMachine,
) -> ExceptionClass {
    let qualified = |c: &rustpython_vm::Py<rustpython_vm::builtins::PyType>| {
        let name = c.name().to_string();
        let module = c
            .as_object()
            .get_attr("__module__", vm)
            .ok()
            .and_then(|m| m.str(vm).ok())
            .map(|m| m.to_string_lossy().into_owned());
        match module.as_deref() {
            None | Some("builtins") => name,
            Some(module) => format!("{module}.{name}"),
        }
    };
    ExceptionClass {
        name: cls.name().to_string(),
        mro: cls.mro_map_collect(|c| qualified(c)),
    }
}

/// A Rust program's Python interpreter: runs scripts, imports them as
/// modules, calls into them with [`Value`]s, traces models.
pub struct Host {
    // Dropped first: the watchdog holds objects of the interpreter.
    watchdog: Option<Watchdog>,
    memory: Option<Arc<MemoryCap>>,
    module: PyObjectRef,
    recursion: usize,
    /// The recursion limit in force for the running call (what
    /// `sys.setrecursionlimit` may not exceed).
    ceiling: Arc<AtomicUsize>,
    interp: Interpreter,
    // Dropped after the interpreter: its policy stays in force to the end.
    _policy: Registration,
}

impl Drop for Host {
    /// What scripts printed reaches the terminal: Python's streams are
    /// buffered, and dropping the interpreter does not flush them.
    fn drop(&mut self) {
        let _ = self.enter(|vm| {
            for name in ["stdout", "stderr"] {
                if let Ok(stream) = vm.sys_module.get_attr(name, vm) {
                    vm.call_method(&stream, "flush", ())?;
                }
            }
            Ok(())
        });
    }
}

/// Python's default recursion limit.
const DEFAULT_RECURSION: usize = 1000;
/// Native stack one level of Python calls may take (measured 1–3.5 KiB for
/// plain calls and constructors; calls through native callbacks take more).
const FRAME_STACK: usize = 8 << 10;
/// Stack kept free below the deepest Python frame (errors, tracebacks).
const STACK_RESERVE: usize = 256 << 10;

impl Host {
    /// Bytes of tensor storage the host's scripts hold now (under a
    /// [`HostBuilder::memory_limit`]; 0 without one).
    pub fn tensor_memory(&self) -> usize {
        self.memory.as_ref().map_or(0, |cap| cap.live())
    }

    /// A host with no limits.
    pub fn new() -> Result<Host> {
        Host::builder().build()
    }

    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// Runs `f` in the interpreter under the host's limits.
    fn enter<T>(&self, f: impl FnOnce(&VirtualMachine) -> PyResult<T>) -> Result<T> {
        let armed = self.watchdog.as_ref().map(|w| (w, w.arm()));
        let run = |vm: &VirtualMachine| {
            // Python frames live on this thread's stack: never allow more
            // than fit, whatever thread the embedding program calls from.
            let fit = stacker::remaining_stack().map_or(usize::MAX, |left| {
                left.saturating_sub(STACK_RESERVE) / FRAME_STACK
            });
            let depth = vm.current_recursion_depth();
            let limit = self.recursion.min(depth.saturating_add(fit));
            self.ceiling.store(limit, Ordering::Relaxed);
            vm.recursion_limit.set(limit);
            f(vm)
        };
        let result = match &self.memory {
            Some(cap) => fxvm_tensor::cap::under(cap, || self.interp.enter(run)),
            None => self.interp.enter(run),
        };
        // The budget ends before the error is formatted (which runs Python).
        let expired = armed.is_some_and(|(w, generation)| w.finish(generation));
        if expired && let Some(w) = &self.watchdog {
            self.interp.enter(|vm| w.untrace(vm));
        }
        result.map_err(|exc| {
            // A bounded sleep raises before the watchdog notices.
            let stopped = expired || self.watchdog.as_ref().is_some_and(|w| w.raised(&exc));
            let mut e = self.interp.enter(|vm| {
                let e = error_of(&exc, vm);
                // The failed call's frames (and what they hold: tensors under
                // the memory cap) are freed now, not when a collection finds
                // the traceback's cycles.
                let _ = vm.import("traceback", 0).and_then(|tb| {
                    tb.get_attr("clear_frames", vm)?
                        .call((exc.as_object().get_attr("__traceback__", vm)?,), vm)
                });
                e
            });
            drop(exc);
            if stopped {
                e.kind = ErrorKind::TimeLimit;
            }
            e
        })
    }

    /// Runs `source` in `globals`, its lines in `linecache` for tracebacks.
    pub(crate) fn exec(
        vm: &VirtualMachine,
        source: &str,
        filename: &str,
        globals: PyDictRef,
    ) -> PyResult<()> {
        // Compiled through the guarded builtin: nesting limits apply.
        let code = vm
            .builtins
            .get_attr("compile", vm)?
            .call((source, filename, "exec"), vm)?;
        // Tracebacks show the source lines.
        let lines: Vec<PyObjectRef> = source
            .split_inclusive('\n')
            .map(|l| vm.ctx.new_str(l).into())
            .collect();
        let entry = vm.ctx.new_tuple(vec![
            vm.ctx.new_int(source.len()).into(),
            vm.ctx.none(),
            vm.ctx.new_list(lines).into(),
            vm.ctx.new_str(filename).into(),
        ]);
        vm.import("linecache", 0)?
            .get_attr("cache", vm)?
            .set_item(filename, entry.into(), vm)?;
        vm.builtins
            .get_attr("exec", vm)?
            .call((code, globals), vm)
            .map(drop)
    }

    /// Runs `source` as a fresh `__main__` module.
    pub fn run_str(&self, source: &str) -> Result<()> {
        self.enter(|vm| {
            let scope = vm.new_scope_with_main()?;
            Host::exec(vm, source, "<string>", scope.globals)
        })
    }

    /// Runs the script at `path` as a fresh `__main__` module.
    pub fn run_file(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        let path = path.as_ref();
        let source = read(path)?;
        let name = path.to_string_lossy().into_owned();
        self.enter(|vm| {
            let scope = vm.new_scope_with_main()?;
            scope
                .globals
                .set_item("__file__", vm.ctx.new_str(name.as_str()).into(), vm)?;
            Host::exec(vm, &source, &name, scope.globals)
        })
    }

    /// Imports `source` as the module `name` (tracebacks show `name.py`).
    pub fn import_source(&self, name: &str, source: &str) -> Result<Object<'_>> {
        self.import_named(name, &format!("{name}.py"), source)
    }

    /// Imports the script at `path` as a module named after its file.
    pub fn import_file(&self, path: impl AsRef<std::path::Path>) -> Result<Object<'_>> {
        let path = path.as_ref();
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| {
                Error::new(ErrorKind::Io, format!("{} names no file", path.display()))
            })?;
        self.import_named(&name, &path.to_string_lossy(), &read(path)?)
    }

    fn import_named(&self, name: &str, filename: &str, source: &str) -> Result<Object<'_>> {
        let module = self.enter(|vm| {
            let module = vm
                .import("types", 0)?
                .get_attr("ModuleType", vm)?
                .call((name,), vm)?;
            module.set_attr("__file__", vm.ctx.new_str(filename), vm)?;
            let dict: PyDictRef = module
                .get_attr("__dict__", vm)?
                .downcast()
                .map_err(|_| vm.new_type_error("module without a __dict__"))?;
            vm.sys_module
                .get_attr("modules", vm)?
                .set_item(name, module.clone(), vm)?;
            Host::exec(vm, source, filename, dict)?;
            Ok(module)
        })?;
        Ok(Object {
            host: self,
            obj: module,
        })
    }

    /// `importlib.import_module(name)`.
    pub fn import(&self, name: &str) -> Result<Object<'_>> {
        let obj = self.enter(|vm| {
            vm.import("importlib", 0)?
                .get_attr("import_module", vm)?
                .call((name,), vm)
        })?;
        Ok(Object { host: self, obj })
    }

    /// The object behind a handle returned by an earlier call.
    pub fn object(&self, handle: &Handle) -> Object<'_> {
        Object {
            host: self,
            obj: handle.0.clone(),
        }
    }

    /// Makes `f` callable from Python as `fxvm_host.<name>`. Tracing records
    /// a call of it as one `call_function` node (a leaf, as `torch.fx.wrap`
    /// makes a function); otherwise it runs with the call's values. An `Err`
    /// raises `RuntimeError` with its text.
    pub fn register_function<F>(&self, name: &str, f: F) -> Result<()>
    where
        F: Fn(&[Value]) -> std::result::Result<Value, String> + Send + Sync + 'static,
    {
        // A registered function lives as long as the process, like a builtin.
        let name: &'static str = Box::leak(name.to_owned().into_boxed_str());
        let me: &'static OnceLock<PyObjectRef> = Box::leak(Box::new(OnceLock::new()));
        // `__torch_function__` dispatch, looked up once rather than per call.
        let dispatch =
            self.enter(|vm| module(vm, "torch._C")?.get_attr("_handle_torch_function", vm))?;
        let call = move |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
            let this = me.get().expect("set when registered").clone();
            let kwargs = vm.ctx.new_dict();
            for (k, v) in &args.kwargs {
                kwargs.set_item(k.as_str(), v.clone(), vm)?;
            }
            let handled = dispatch.call((this, vm.ctx.new_tuple(args.args.clone()), kwargs), vm)?;
            let pair: Vec<PyObjectRef> = handled.try_to_value(vm)?;
            if let [done, result] = &pair[..]
                && done.clone().try_to_bool(vm)?
            {
                return Ok(result.clone());
            }
            match f(&values_of(&args.args, vm)?) {
                Ok(v) => Ok(v.to_py(vm)),
                Err(message) => Err(vm.new_runtime_error(message)),
            }
        };
        let def = fxvm_vm::binding::definition(name, call, PyMethodFlags::empty(), None);
        self.enter(|vm| {
            let function: PyObjectRef = def
                .to_function()
                .with_module(vm.ctx.intern_str("fxvm_host"))
                .into_ref(&vm.ctx)
                .into();
            let _ = me.set(function.clone());
            self.module.set_attr(name, function, vm)
        })
    }
}

/// The module `name` itself (`vm.import` of a dotted name returns the top
/// package, as `__import__` does).
pub(crate) fn module(vm: &VirtualMachine, name: &'static str) -> PyResult {
    let top = vm.import(name, 0)?;
    name.split('.')
        .skip(1)
        .try_fold(top, |m, part| m.get_attr(part, vm))
}

fn read(path: &std::path::Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("can't read '{}': {e}", path.display()),
        )
    })
}

/// A Python object of a host: a module, a model, a function.
#[derive(Clone)]
pub struct Object<'h> {
    host: &'h Host,
    obj: PyObjectRef,
}

impl std::fmt::Debug for Object<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} object>", self.obj.class().name())
    }
}

impl<'h> Object<'h> {
    fn wrap(&self, obj: PyObjectRef) -> Object<'h> {
        Object {
            host: self.host,
            obj,
        }
    }

    /// The attribute `name`, as an object.
    pub fn attr(&self, name: &str) -> Result<Object<'h>> {
        let obj = self
            .host
            .enter(|vm| self.obj.get_attr(&*vm.ctx.new_str(name), vm))?;
        Ok(self.wrap(obj))
    }

    /// The attribute `name`, as a value.
    pub fn get(&self, name: &str) -> Result<Value> {
        self.attr(name)?.value()
    }

    /// This object as a value (numbers, strings, tensors, lists, tuples;
    /// anything else as a handle).
    pub fn value(&self) -> Result<Value> {
        self.host.enter(|vm| Ok(Value::from_py(&self.obj, vm)))?
    }

    /// A handle to keep this object beyond the borrow of the host.
    pub fn handle(&self) -> Handle {
        Handle(self.obj.clone())
    }

    /// Calls this object with positional arguments.
    pub fn call_self(&self, args: &[Value]) -> Result<Value> {
        let out = self.host.enter(|vm| {
            let args: Vec<PyObjectRef> = args.iter().map(|a| a.to_py(vm)).collect();
            self.obj.call(args, vm)
        })?;
        self.wrap(out).value()
    }

    /// Calls the attribute `name` (a function of a module, a method).
    pub fn call(&self, name: &str, args: &[Value]) -> Result<Value> {
        self.attr(name)?.call_self(args)
    }

    /// Evaluates a Python expression in this module's namespace
    /// (`model.eval_expr("GPT(GPTConfig(n_layer=2))")`).
    pub fn eval_expr(&self, expr: &str) -> Result<Object<'h>> {
        let obj = self.host.enter(|vm| {
            let globals = self.obj.get_attr("__dict__", vm)?;
            let code = vm
                .builtins
                .get_attr("compile", vm)?
                .call((expr, "<expr>", "eval"), vm)?;
            vm.builtins.get_attr("eval", vm)?.call((code, globals), vm)
        })?;
        Ok(self.wrap(obj))
    }

    /// `torch.fx.symbolic_trace` of this module or function, as data.
    pub fn trace(&self) -> Result<Graph> {
        self.host.enter(|vm| {
            let gm = module(vm, "torch.fx")?
                .get_attr("symbolic_trace", vm)?
                .call((self.obj.clone(),), vm)?;
            graph::read(&gm, vm)
        })
    }

    /// Traces with example inputs, each node getting its symbolic shape;
    /// `dynamic` names the dims of each input (by parameter name) that
    /// stay symbolic. The graph's guards say what the trace assumed.
    pub fn trace_with_examples(
        &self,
        examples: &[Value],
        dynamic: &[(&str, &[usize])],
    ) -> Result<Graph> {
        self.host.enter(|vm| {
            let shape_trace =
                module(vm, "torch.fx.experimental.shape_trace")?.get_attr("shape_trace", vm)?;
            let examples = vm
                .ctx
                .new_tuple(examples.iter().map(|v| v.to_py(vm)).collect());
            let dims = vm.ctx.new_dict();
            for (name, d) in dynamic {
                let list = vm
                    .ctx
                    .new_list(d.iter().map(|&i| vm.ctx.new_int(i).into()).collect());
                dims.set_item(*name, list.into(), vm)?;
            }
            let gm = shape_trace.call((self.obj.clone(), examples, dims), vm)?;
            graph::read(&gm, vm)
        })
    }
}
