//! Which native functions touch the system, and the check each gets: one
//! table row per function. A `posix` function missing from the table is
//! refused (new RustPython versions cannot open a hole silently).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustpython_vm::builtins::{PyBytes, PyInt, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};

use super::guard::{self, Check, Replaced};
use super::paths::{self, Descriptor};
use super::{Capability, Policy, denied};

/// How a function uses a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
    /// Closing or replacing a descriptor: only files the policy lets the
    /// script write, never the standard streams.
    Own,
}

impl Access {
    /// Whether `policy` grants this access to the file at `place`
    /// (canonical).
    fn granted(self, policy: &Policy, place: &Path) -> bool {
        match self {
            Access::Read => policy.read.cover(place) || policy.write.cover(place),
            Access::Write | Access::Own => policy.write.cover(place),
        }
    }

    /// The capability this access takes.
    fn capability(self) -> Capability {
        match self {
            Access::Read => Capability::Read,
            Access::Write | Access::Own => Capability::Write,
        }
    }
}

/// A positional index and the keyword the same argument may come as.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arg(pub usize, pub &'static str);

#[derive(Debug, Clone, Copy)]
enum Rule {
    /// Touches nothing outside the VM.
    Safe,
    Deny(Capability),
    /// A path (or a descriptor) argument; `follow` resolves a final symlink
    /// (false for calls on the link itself); `default` when omitted.
    Path {
        arg: Arg,
        access: Access,
        follow: bool,
        default: Option<&'static str>,
    },
    /// Several paths: (argument, access, follow) each.
    Paths(&'static [(Arg, Access, bool)]),
    /// `symlink(src, dst)`: the link is written; what it leads to must be
    /// readable.
    Symlink,
    /// `open(path, flags)`: write access when the flags ask to write.
    Open,
    /// Descriptor arguments.
    Fds(&'static [(Arg, Access)]),
}

const PATH: Arg = Arg(0, "path");
const FD: Arg = Arg(0, "fd");

const fn path(access: Access, follow: bool) -> Rule {
    Rule::Path {
        arg: PATH,
        access,
        follow,
        default: None,
    }
}

const READ: Rule = path(Access::Read, true);
const READ_LINK: Rule = path(Access::Read, false);
const WRITE: Rule = path(Access::Write, true);
const WRITE_LINK: Rule = path(Access::Write, false);
const LIST: Rule = Rule::Path {
    arg: PATH,
    access: Access::Read,
    follow: true,
    default: Some("."),
};
const FD_READ: Rule = Rule::Fds(&[(FD, Access::Read)]);
const FD_WRITE: Rule = Rule::Fds(&[(FD, Access::Write)]);
const FD_OWN: Rule = Rule::Fds(&[(FD, Access::Own)]);
const PROCESSES: Rule = Rule::Deny(Capability::Processes);
const ENVIRONMENT: Rule = Rule::Deny(Capability::Environment);

const POSIX: &[(&str, Rule)] = &[
    ("stat", READ),
    ("access", READ),
    ("statvfs", READ),
    ("pathconf", READ),
    ("getxattr", READ),
    ("listxattr", READ),
    ("lstat", READ_LINK),
    ("readlink", READ_LINK),
    ("listdir", LIST),
    ("scandir", LIST),
    ("open", Rule::Open),
    ("mkdir", WRITE),
    ("chmod", WRITE),
    ("chown", WRITE),
    ("chflags", WRITE),
    ("mkfifo", WRITE),
    ("mknod", WRITE),
    ("truncate", WRITE),
    ("utime", WRITE),
    ("setxattr", WRITE),
    ("removexattr", WRITE),
    ("lchmod", WRITE_LINK),
    ("lchown", WRITE_LINK),
    ("lchflags", WRITE_LINK),
    ("unlink", WRITE_LINK),
    ("remove", WRITE_LINK),
    ("rmdir", WRITE_LINK),
    (
        "rename",
        Rule::Paths(&[
            (Arg(0, "src"), Access::Write, false),
            (Arg(1, "dst"), Access::Write, false),
        ]),
    ),
    (
        "replace",
        Rule::Paths(&[
            (Arg(0, "src"), Access::Write, false),
            (Arg(1, "dst"), Access::Write, false),
        ]),
    ),
    (
        "link",
        Rule::Paths(&[
            (Arg(0, "src"), Access::Read, true),
            (Arg(1, "dst"), Access::Write, false),
        ]),
    ),
    ("symlink", Rule::Symlink),
    ("read", FD_READ),
    ("readinto", FD_READ),
    ("pread", FD_READ),
    ("readv", FD_READ),
    ("fstat", FD_READ),
    ("fstatvfs", FD_READ),
    ("fpathconf", FD_READ),
    ("lseek", FD_READ),
    ("write", FD_WRITE),
    ("pwrite", FD_WRITE),
    ("writev", FD_WRITE),
    ("ftruncate", FD_WRITE),
    ("fsync", FD_WRITE),
    ("fdatasync", FD_WRITE),
    ("fchmod", FD_WRITE),
    ("fchown", FD_WRITE),
    ("posix_fallocate", FD_WRITE),
    ("posix_fadvise", FD_WRITE),
    ("lockf", FD_WRITE),
    ("set_blocking", FD_WRITE),
    ("set_inheritable", FD_WRITE),
    ("close", FD_OWN),
    ("dup", FD_READ),
    (
        "dup2",
        Rule::Fds(&[(FD, Access::Read), (Arg(1, "fd2"), Access::Own)]),
    ),
    (
        "sendfile",
        Rule::Fds(&[
            (Arg(0, "out_fd"), Access::Write),
            (Arg(1, "in_fd"), Access::Read),
        ]),
    ),
    (
        "copy_file_range",
        Rule::Fds(&[
            (Arg(0, "src"), Access::Read),
            (Arg(1, "dst"), Access::Write),
        ]),
    ),
    (
        "splice",
        Rule::Fds(&[
            (Arg(0, "src"), Access::Read),
            (Arg(1, "dst"), Access::Write),
        ]),
    ),
    ("closerange", PROCESSES),
    ("putenv", ENVIRONMENT),
    ("unsetenv", ENVIRONMENT),
    ("_create_environ", ENVIRONMENT),
    ("chdir", ENVIRONMENT),
    ("fchdir", ENVIRONMENT),
    ("umask", ENVIRONMENT),
    ("fork", PROCESSES),
    ("forkpty", PROCESSES),
    ("openpty", PROCESSES),
    ("execv", PROCESSES),
    ("execve", PROCESSES),
    ("system", PROCESSES),
    ("posix_spawn", PROCESSES),
    ("posix_spawnp", PROCESSES),
    ("kill", PROCESSES),
    ("killpg", PROCESSES),
    ("waitpid", PROCESSES),
    ("wait", PROCESSES),
    ("wait3", PROCESSES),
    ("wait4", PROCESSES),
    ("waitid", PROCESSES),
    ("pidfd_open", PROCESSES),
    ("_exit", PROCESSES),
    ("abort", PROCESSES),
    ("setsid", PROCESSES),
    ("setpgid", PROCESSES),
    ("setpgrp", PROCESSES),
    ("tcsetpgrp", PROCESSES),
    ("setuid", PROCESSES),
    ("seteuid", PROCESSES),
    ("setgid", PROCESSES),
    ("setegid", PROCESSES),
    ("setreuid", PROCESSES),
    ("setregid", PROCESSES),
    ("setresuid", PROCESSES),
    ("setresgid", PROCESSES),
    ("setgroups", PROCESSES),
    ("initgroups", PROCESSES),
    ("nice", PROCESSES),
    ("setpriority", PROCESSES),
    ("sched_setscheduler", PROCESSES),
    ("sched_setparam", PROCESSES),
    ("sched_setaffinity", PROCESSES),
    // Callbacks for a fork the policy refuses (random and threading register them).
    ("register_at_fork", Rule::Safe),
    ("chroot", PROCESSES),
    ("_fcopyfile", Rule::Deny(Capability::Native)),
    // Reading the process's own state, or computing.
    ("getcwd", Rule::Safe),
    ("getcwdb", Rule::Safe),
    ("fspath", Rule::Safe),
    ("getpid", Rule::Safe),
    ("getppid", Rule::Safe),
    ("getuid", Rule::Safe),
    ("geteuid", Rule::Safe),
    ("getgid", Rule::Safe),
    ("getegid", Rule::Safe),
    ("getgroups", Rule::Safe),
    ("getgrouplist", Rule::Safe),
    ("getpgid", Rule::Safe),
    ("getpgrp", Rule::Safe),
    ("getsid", Rule::Safe),
    ("getresuid", Rule::Safe),
    ("getresgid", Rule::Safe),
    ("getpriority", Rule::Safe),
    ("getlogin", Rule::Safe),
    ("ctermid", Rule::Safe),
    ("tcgetpgrp", Rule::Safe),
    ("sched_get_priority_max", Rule::Safe),
    ("sched_get_priority_min", Rule::Safe),
    ("sched_getscheduler", Rule::Safe),
    ("sched_getparam", Rule::Safe),
    ("sched_getaffinity", Rule::Safe),
    ("sched_yield", Rule::Safe),
    ("cpu_count", Rule::Safe),
    ("process_cpu_count", Rule::Safe),
    ("urandom", Rule::Safe),
    ("getrandom", Rule::Safe),
    ("strerror", Rule::Safe),
    ("times", Rule::Safe),
    ("uname", Rule::Safe),
    ("getloadavg", Rule::Safe),
    ("sysconf", Rule::Safe),
    ("confstr", Rule::Safe),
    ("get_terminal_size", Rule::Safe),
    ("isatty", Rule::Safe),
    ("ttyname", Rule::Safe),
    ("device_encoding", Rule::Safe),
    ("get_inheritable", Rule::Safe),
    ("get_blocking", Rule::Safe),
    ("major", Rule::Safe),
    ("minor", Rule::Safe),
    ("makedev", Rule::Safe),
    ("sync", Rule::Safe),
    // New descriptors without a place: useless to descriptor calls, which
    // accept only files in granted folders.
    ("pipe", Rule::Safe),
    ("pipe2", Rule::Safe),
    ("eventfd", Rule::Safe),
    ("memfd_create", Rule::Safe),
    ("waitstatus_to_exitcode", Rule::Safe),
    ("WCOREDUMP", Rule::Safe),
    ("WIFCONTINUED", Rule::Safe),
    ("WIFSTOPPED", Rule::Safe),
    ("WIFSIGNALED", Rule::Safe),
    ("WIFEXITED", Rule::Safe),
    ("WEXITSTATUS", Rule::Safe),
    ("WSTOPSIG", Rule::Safe),
    ("WTERMSIG", Rule::Safe),
    ("_path_normpath", Rule::Safe),
    ("_path_splitroot_ex", Rule::Safe),
    ("_inputhook", Rule::Safe),
    ("_is_inputhook_installed", Rule::Safe),
];

/// Functions of other already-loaded native modules that reach out.
const OTHERS: &[(&str, &str, Rule)] = &[
    (
        "_thread",
        "start_new_thread",
        Rule::Deny(Capability::Threads),
    ),
    ("_thread", "start_new", Rule::Deny(Capability::Threads)),
    (
        "_thread",
        "start_joinable_thread",
        Rule::Deny(Capability::Threads),
    ),
    ("_thread", "interrupt_main", PROCESSES),
    ("_signal", "signal", PROCESSES),
    ("_signal", "alarm", PROCESSES),
    ("_signal", "setitimer", PROCESSES),
    ("_signal", "pause", PROCESSES),
    ("_signal", "pthread_kill", PROCESSES),
    ("_signal", "pthread_sigmask", PROCESSES),
    ("_signal", "raise_signal", PROCESSES),
    ("_signal", "set_wakeup_fd", PROCESSES),
    ("_signal", "siginterrupt", PROCESSES),
    ("_signal", "sigwait", PROCESSES),
    ("_signal", "sigwaitinfo", PROCESSES),
    ("_signal", "sigtimedwait", PROCESSES),
    ("_signal", "pidfd_send_signal", PROCESSES),
    ("sys", "remote_exec", PROCESSES),
    ("sys", "_current_frames", Rule::Safe),
    ("time", "tzset", ENVIRONMENT),
    // Code from bytes (see `super::code`).
    ("marshal", "loads", Rule::Deny(Capability::Native)),
    ("marshal", "load", Rule::Deny(Capability::Native)),
    // The collector's lists span every interpreter of the process.
    ("gc", "get_objects", Rule::Deny(Capability::Native)),
    ("gc", "get_referrers", Rule::Deny(Capability::Native)),
    // Static types' referents are every interpreter's subclasses.
    ("gc", "get_referents", Rule::Deny(Capability::Native)),
];

/// Guards every function of the tables in `vm`'s loaded modules.
pub(crate) fn install(
    vm: &VirtualMachine,
    policy: &Arc<Policy>,
    replaced: &mut Replaced,
) -> PyResult<()> {
    let posix = vm.import("posix", 0)?;
    let names: Vec<String> = posix
        .dict()
        .map(|d| {
            (&d).into_iter()
                .filter_map(|(k, _)| k.str(vm).ok().map(|s| s.to_string()))
                .collect()
        })
        .unwrap_or_default();
    for name in names {
        let rule = POSIX
            .iter()
            .find(|(n, _)| *n == name.as_str())
            .map_or(Rule::Deny(Capability::Native), |(_, r)| *r);
        if let Some(check) = check_for(rule, &name, "os", policy) {
            guard::wrap(vm, &posix, &name, check, replaced)?;
        }
    }
    for &(module, name, rule) in OTHERS {
        let Ok(module) = vm.import(module, 0) else {
            continue;
        };
        if let Some(check) = check_for(rule, name, "", policy) {
            guard::wrap(vm, &module, name, check, replaced)?;
        }
    }
    Ok(())
}

/// The check for `rule`, or `None` when the call needs none.
fn check_for(rule: Rule, name: &str, prefix: &str, policy: &Arc<Policy>) -> Option<Check> {
    let what = if prefix.is_empty() {
        name.to_owned()
    } else {
        format!("{prefix}.{name}")
    };
    let policy = policy.clone();
    match rule {
        Rule::Safe => None,
        Rule::Deny(capability) if policy.grants(capability) => None,
        Rule::Deny(capability) => Some(guard::refuse(capability, what)),
        Rule::Path { .. } | Rule::Paths(_) | Rule::Symlink | Rule::Open | Rule::Fds(_)
            if policy.all_files() =>
        {
            None
        }
        Rule::Path {
            arg,
            access,
            follow,
            default,
        } => Some(Box::new(move |mut args, vm| {
            no_dir_fd(&args, &what, vm)?;
            let given = take(&mut args, arg, vm)?;
            if let Some(target) = given.or(default.map(|d| Target::Path(PathBuf::from(d)))) {
                check_target(&policy, &what, &target, access, follow, vm)?;
            }
            Ok(args)
        })),
        Rule::Paths(list) => Some(Box::new(move |mut args, vm| {
            no_dir_fd(&args, &what, vm)?;
            for &(arg, access, follow) in list {
                if let Some(target) = take(&mut args, arg, vm)? {
                    check_target(&policy, &what, &target, access, follow, vm)?;
                }
            }
            Ok(args)
        })),
        Rule::Symlink => Some(Box::new(move |mut args, vm| {
            no_dir_fd(&args, &what, vm)?;
            let dst = match take(&mut args, Arg(1, "dst"), vm)? {
                Some(Target::Path(p)) => p,
                _ => return Ok(args),
            };
            check_path(&policy, &what, &dst, Access::Write, false, vm)?;
            if let Some(Target::Path(src)) = take(&mut args, Arg(0, "src"), vm)? {
                // A relative target is relative to the link's folder.
                let led = dst.parent().unwrap_or(Path::new(".")).join(&src);
                check_path(&policy, &what, &led, Access::Read, true, vm)?;
            }
            Ok(args)
        })),
        Rule::Open => Some(Box::new(move |mut args, vm| {
            no_dir_fd(&args, &what, vm)?;
            let flags = args
                .args
                .get(1)
                .or_else(|| args.kwargs.get("flags"))
                .and_then(|f| f.downcast_ref::<PyInt>())
                .and_then(|f| f.try_to_primitive::<i32>(vm).ok())
                .unwrap_or(0);
            let writes = flags & (libc_flags::WRITE) != 0;
            let access = if writes { Access::Write } else { Access::Read };
            if let Some(Target::Path(p)) = take(&mut args, PATH, vm)? {
                check_path(&policy, &what, &p, access, true, vm)?;
            }
            Ok(args)
        })),
        Rule::Fds(list) => Some(Box::new(move |args, vm| {
            for &(arg, access) in list {
                if let Some(fd) = arg_of(&args, arg).and_then(|f| f.downcast_ref::<PyInt>()) {
                    let fd = fd.try_to_primitive::<i32>(vm).unwrap_or(-1);
                    check_fd(&policy, &what, fd, access, vm)?;
                }
            }
            Ok(args)
        })),
    }
}

/// The open(2) flags that make a descriptor write (or create, truncate).
mod libc_flags {
    pub(super) const WRITE: i32 = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000;
}

/// What a path argument names.
pub(super) enum Target {
    Path(PathBuf),
    Fd(i32),
}

fn arg_of(args: &FuncArgs, arg: Arg) -> Option<&PyObjectRef> {
    args.args.get(arg.0).or_else(|| args.kwargs.get(arg.1))
}

/// Reads a path argument once — a path-like's `__fspath__` is called here
/// and the call gets its result, so what is checked is what is opened.
pub(super) fn take(args: &mut FuncArgs, arg: Arg, vm: &VirtualMachine) -> PyResult<Option<Target>> {
    let Some(value) = arg_of(args, arg).cloned() else {
        return Ok(None);
    };
    if vm.is_none(&value) {
        return Ok(None);
    }
    if let Some(fd) = value.downcast_ref::<PyInt>() {
        return Ok(Some(Target::Fd(fd.try_to_primitive(vm).unwrap_or(-1))));
    }
    let plain =
        if value.downcast_ref::<PyStr>().is_some() || value.downcast_ref::<PyBytes>().is_some() {
            value
        } else {
            match vm.get_attribute_opt(value.clone(), "__fspath__")? {
                Some(method) => method.call((), vm)?,
                None => value,
            }
        };
    let path = if let Some(s) = plain.downcast_ref::<PyStr>() {
        let Some(text) = s.to_str() else {
            return Err(
                vm.new_value_error("fxvm host: a path with unpaired surrogates cannot be checked")
            );
        };
        let exact: PyObjectRef = vm.ctx.new_str(text).into();
        set_arg(args, arg, exact);
        PathBuf::from(text)
    } else if let Some(b) = plain.downcast_ref::<PyBytes>() {
        let exact: PyObjectRef = vm.ctx.new_bytes(b.as_bytes().to_vec()).into();
        set_arg(args, arg, exact);
        PathBuf::from(std::ffi::OsStr::from_bytes(b.as_bytes()))
    } else {
        // Not a path: the original raises its own TypeError.
        return Ok(None);
    };
    Ok(Some(Target::Path(path)))
}

fn set_arg(args: &mut FuncArgs, arg: Arg, value: PyObjectRef) {
    if arg.0 < args.args.len() {
        args.args[arg.0] = value;
    } else {
        args.kwargs.insert(arg.1.to_owned(), value);
    }
}

/// Paths relative to a directory descriptor are not checked: refused.
fn no_dir_fd(args: &FuncArgs, what: &str, vm: &VirtualMachine) -> PyResult<()> {
    for key in ["dir_fd", "src_dir_fd", "dst_dir_fd"] {
        if args.kwargs.get(key).is_some_and(|v| !vm.is_none(v)) {
            return Err(denied(vm, Capability::Read, &format!("{what} with {key}")));
        }
    }
    Ok(())
}

/// Checks what a path argument names: a path, or a descriptor.
pub(super) fn check_target(
    policy: &Policy,
    what: &str,
    target: &Target,
    access: Access,
    follow: bool,
    vm: &VirtualMachine,
) -> PyResult<()> {
    match target {
        Target::Path(path) => check_path(policy, what, path, access, follow, vm),
        Target::Fd(fd) => check_fd(policy, what, *fd, access, vm),
    }
}

/// Whether `access` to the file at `path` is granted; refused with the
/// capability it lacks otherwise.
pub(crate) fn check_path(
    policy: &Policy,
    what: &str,
    path: &Path,
    access: Access,
    follow: bool,
    vm: &VirtualMachine,
) -> PyResult<()> {
    if path.as_os_str().is_empty() {
        // Names nothing: the original raises FileNotFoundError.
        return Ok(());
    }
    let real = paths::resolve(path, follow).map_err(|e| vm.new_os_error(e.to_string()))?;
    if access.granted(policy, &real) {
        Ok(())
    } else {
        Err(denied(
            vm,
            access.capability(),
            &format!("{what}('{}')", path.display()),
        ))
    }
}

/// Whether `access` through descriptor `fd` is granted: standard output
/// and error for writing, standard input for reading with the environment;
/// a file by where it is; a socket with network access; a pipe with
/// processes; nothing else (a descriptor the embedding program opened is
/// not the script's).
fn check_fd(
    policy: &Policy,
    what: &str,
    fd: i32,
    access: Access,
    vm: &VirtualMachine,
) -> PyResult<()> {
    let stdio = match access {
        Access::Read => fd == 0 && policy.environment,
        Access::Write => fd == 1 || fd == 2,
        Access::Own => false,
    };
    if stdio {
        return Ok(());
    }
    let granted = match paths::descriptor(fd) {
        Descriptor::File(place) => access.granted(policy, &place),
        Descriptor::Other(kind) if kind.starts_with("socket:") => {
            if !policy.network {
                return Err(denied(vm, Capability::Network, &format!("{what}({fd})")));
            }
            true
        }
        // Pipes connect to children, which a host granting processes allows.
        Descriptor::Other(kind) if kind.starts_with("pipe:") => policy.processes,
        Descriptor::Other(_) | Descriptor::Unknown => false,
    };
    if granted {
        Ok(())
    } else {
        Err(denied(
            vm,
            access.capability(),
            &format!("{what}({fd}) on a descriptor outside the granted folders"),
        ))
    }
}
