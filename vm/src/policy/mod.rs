//! The capability policy of an embedded interpreter: what scripts may reach
//! outside the VM. RustPython has no audit hooks, so the policy is enforced
//! where the VM touches the system — the native functions of `posix`, `_io`,
//! `_thread`, `_signal`, `_imp` and the native modules behind sockets,
//! subprocesses and `ctypes` — by replacing them with guarded ones that the
//! script cannot unwrap (the originals are held only by Rust closures).
//! An interpreter built without a policy (`fxvm run`) keeps full access.

mod code;
mod environ;
mod fileio;
mod guard;
mod imports;
mod locks;
pub mod paths;
mod registry;
mod rules;
mod shared;
mod subclasses;

use std::path::Path;
use std::sync::Arc;

use rustpython_vm::builtins::PyBaseExceptionRef;
use rustpython_vm::{PyResult, VirtualMachine};

pub use paths::Folders;

/// One thing a policy grants or denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Read,
    Write,
    Network,
    Processes,
    Environment,
    Threads,
    Import,
    Native,
}

impl Capability {
    /// What the capability covers, as messages name it.
    pub fn describe(self) -> &'static str {
        match self {
            Capability::Read => "reading files",
            Capability::Write => "writing files",
            Capability::Network => "network access",
            Capability::Processes => "starting, signalling or changing processes",
            Capability::Environment => {
                "the process environment (variables, working directory, standard input)"
            }
            Capability::Threads => "starting threads",
            Capability::Import => "importing modules outside the allow list",
            Capability::Native => "native code and low-level system modules",
        }
    }

    /// The `HostBuilder` method that grants it.
    pub fn grant(self) -> &'static str {
        match self {
            Capability::Read => "allow_read(dir)",
            Capability::Write => "allow_write(dir)",
            Capability::Network => "allow_network()",
            Capability::Processes => "allow_processes()",
            Capability::Environment => "allow_environment()",
            Capability::Threads => "allow_threads()",
            Capability::Import => "allow_import(name)",
            Capability::Native => "allow_native()",
        }
    }
}

/// What the scripts of an interpreter may do. The default grants nothing
/// beyond computing: no files (except reading the folders modules are
/// imported from), no network, processes, environment, threads, native code,
/// and imports only of the modules in [`imports::DEFAULT_ALLOWED`].
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub read: Folders,
    pub write: Folders,
    pub network: bool,
    pub processes: bool,
    pub environment: bool,
    pub threads: bool,
    pub native: bool,
    /// Top-level modules importable beyond the default allow list.
    pub imports: Vec<String>,
    /// Any module may be imported.
    pub all_imports: bool,
}

impl Policy {
    /// Grants everything: what `fxvm run` has.
    pub fn full() -> Policy {
        let mut read = Folders::default();
        let mut write = Folders::default();
        // "/" always exists.
        let _ = read.grant(Path::new("/"));
        let _ = write.grant(Path::new("/"));
        Policy {
            read,
            write,
            network: true,
            processes: true,
            environment: true,
            threads: true,
            native: true,
            imports: Vec::new(),
            all_imports: true,
        }
    }

    /// Whether the policy grants everything (then nothing is guarded).
    pub fn is_full(&self) -> bool {
        self.network
            && self.processes
            && self.environment
            && self.threads
            && self.native
            && self.all_imports
            && self.all_files()
    }

    /// Whether every file may be read and written (no path is checked).
    pub(crate) fn all_files(&self) -> bool {
        self.write.cover(Path::new("/"))
    }

    /// Whether a capability that is not about folders is granted (the
    /// folder ones are checked per path).
    pub(crate) fn grants(&self, capability: Capability) -> bool {
        match capability {
            Capability::Read | Capability::Write => self.all_files(),
            Capability::Network => self.network,
            Capability::Processes => self.processes,
            Capability::Environment => self.environment,
            Capability::Threads => self.threads,
            Capability::Import => self.all_imports,
            Capability::Native => self.native,
        }
    }
}

/// What a refusal says: what was refused, the capability, and its grant.
pub(crate) fn message(capability: Capability, what: &str) -> String {
    format!(
        "{what}: {} is not allowed in this fxvm host (the host grants it with HostBuilder::{})",
        capability.describe(),
        capability.grant()
    )
}

/// `PermissionError` for `what`, naming the capability and its grant.
pub(crate) fn denied(
    vm: &VirtualMachine,
    capability: Capability,
    what: &str,
) -> PyBaseExceptionRef {
    // EPERM, as the system would say: code that re-raises an OSError from
    // its errno and strerror (shutil does) keeps the message.
    const EPERM: i32 = 1;
    vm.new_os_subtype_error(
        vm.ctx.exceptions.permission_error.to_owned(),
        Some(EPERM),
        message(capability, what),
    )
    .upcast()
}

/// Checks that the interpreter's policy lets native code read the file at
/// `path` (checkpoint loaders open files in Rust, past `open`'s guard).
pub(crate) fn check_read(vm: &VirtualMachine, what: &str, path: &str) -> PyResult<()> {
    match registry::policy_of(vm) {
        Some(policy) if !policy.all_files() => rules::check_path(
            &policy,
            what,
            Path::new(path),
            rules::Access::Read,
            true,
            vm,
        ),
        _ => Ok(()),
    }
}

/// Puts `policy` in force in the interpreter of `vm`; call once, before any
/// script runs. Returns a registration to keep as long as the interpreter
/// (drop it after the interpreter).
pub fn install(vm: &VirtualMachine, policy: Policy) -> PyResult<Registration> {
    let policy = Arc::new(policy);
    let registration = registry::register(vm, policy.clone());
    if policy.is_full() {
        return Ok(registration);
    }
    let mut replaced = guard::Replaced::default();
    environ::install(vm, &policy, &mut replaced)?;
    rules::install(vm, &policy, &mut replaced)?;
    imports::install(vm, &policy, &mut replaced)?;
    replaced.rebind_everywhere(vm)?;
    Ok(registration)
}

pub use registry::Registration;

pub(crate) use shared::guard as guard_shared;
