//! Which modules scripts may load. Every module an import creates comes from
//! `_imp` (built-in modules from `create_builtin`, frozen ones — the standard
//! library and `torch` — from `get_frozen_object`/`init_frozen`; RustPython
//! 0.5 has no `create_dynamic`, so no compiled extension loads at all);
//! guarding those covers `import`, `__import__`, `importlib` and hand-made
//! specs alike. Files in the folders the host imports from compile through
//! `compile` and are the host's own.

use std::sync::Arc;

use rustpython_vm::builtins::{PyBaseExceptionRef, PyStr};
use rustpython_vm::function::{FuncArgs, KwArgs};
use rustpython_vm::{AsObject, PyResult, VirtualMachine};

use super::guard::{self, Replaced};
use super::{Capability, Policy, denied, message};

/// Built-in modules that reach the system, by the capability they need.
const GATED: &[(&str, Capability)] = &[
    ("_socket", Capability::Network),
    ("_ssl", Capability::Network),
    ("_overlapped", Capability::Network),
    ("_posixsubprocess", Capability::Processes),
    ("_multiprocessing", Capability::Processes),
    ("_posixshmem", Capability::Processes),
    ("_remote_debugging", Capability::Processes),
    ("faulthandler", Capability::Processes),
    ("resource", Capability::Processes),
    ("syslog", Capability::Processes),
    ("pwd", Capability::Environment),
    ("grp", Capability::Environment),
    ("_locale", Capability::Environment),
    ("_ctypes", Capability::Native),
    ("mmap", Capability::Native),
    ("fcntl", Capability::Native),
    ("termios", Capability::Native),
    ("_sqlite3", Capability::Native),
    ("_tkinter", Capability::Native),
];

/// Python modules whose purpose is a capability: importable exactly when
/// it is granted (their built-in parts are gated above).
const NEEDS: &[(&str, Capability)] = &[
    ("socket", Capability::Network),
    ("ssl", Capability::Network),
    ("asyncio", Capability::Network),
    ("socketserver", Capability::Network),
    ("ftplib", Capability::Network),
    ("smtplib", Capability::Network),
    ("poplib", Capability::Network),
    ("imaplib", Capability::Network),
    ("xmlrpc", Capability::Network),
    ("subprocess", Capability::Processes),
    ("multiprocessing", Capability::Processes),
    ("concurrent", Capability::Processes),
    ("pty", Capability::Processes),
    ("getpass", Capability::Environment),
    ("ctypes", Capability::Native),
    ("sqlite3", Capability::Native),
    ("dbm", Capability::Native),
];

/// Top-level modules scripts may import by default: `torch`, `numpy` and the parts
/// of the standard library that compute (their own imports included),
/// nothing whose purpose is I/O, processes or the network.
pub const DEFAULT_ALLOWED: &[&str] = &[
    // fxvm's frozen packages (numpy computes; its file functions go
    // through the file policy like `open`).
    "torch",
    "numpy",
    "_fxvm_numpy",
    "regex",
    "_fxvm_regex",
    "tokenizers",
    "_fxvm_tokenizers",
    "safetensors",
    "fxvm",
    "_fxvm_import",
    "_fxvm_stdlib",
    "_fxvm_odict",
    "_fxvm_metadata",
    "_fxvm_denied",
    // Pure-Python standard library.
    "__future__",
    "_ast_unparse",
    "_collections_abc",
    "_colorize",
    "_compat_pickle",
    "_markupbase",
    "_opcode_metadata",
    "_py_abc",
    "_py_warnings",
    "_pycodecs",
    "_pydatetime",
    "_pydecimal",
    "_pylong",
    "_strptime",
    "_threading_local",
    "_weakrefset",
    "abc",
    "annotationlib",
    "argparse",
    "ast",
    "base64",
    "bisect",
    "bz2",
    "calendar",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compression",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "dis",
    "email",
    "encodings",
    "enum",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "functools",
    "genericpath",
    "getopt",
    "gettext",
    "glob",
    "graphlib",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "json",
    "keyword",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "ntpath",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "pathlib",
    "pickle",
    "pickletools",
    "posixpath",
    "pprint",
    "queue",
    "quopri",
    "random",
    "re",
    "reprlib",
    "sched",
    "secrets",
    "shlex",
    "signal",
    "shutil",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "token",
    "tokenize",
    "tomllib",
    "traceback",
    "types",
    "typing",
    "urllib",
    "uuid",
    "warnings",
    "weakref",
    "xml",
    "zipfile",
    "zipimport",
    // Built-in modules that compute, and the import machinery.
    "_frozen_importlib",
    "_frozen_importlib_external",
    "_imp",
    "_abc",
    "_ast",
    "_bisect",
    "_blake2",
    "_bz2",
    "_codecs",
    "_collections",
    "_contextvars",
    "_csv",
    "_functools",
    "_hashlib",
    "_io",
    "_json",
    "_lzma",
    "_md5",
    "_opcode",
    "_operator",
    "_random",
    "_sha1",
    "_sha256",
    "_sha3",
    "_sha512",
    "_signal",
    "_sre",
    "_stat",
    "_statistics",
    "_string",
    "_struct",
    "_symtable",
    "_sysconfig",
    "_thread",
    "_tokenize",
    "_types",
    "_typing",
    "_uuid",
    "_warnings",
    "_weakref",
    "array",
    "atexit",
    "binascii",
    "builtins",
    "cmath",
    "errno",
    "gc",
    "itertools",
    "marshal",
    "math",
    "posix",
    "pyexpat",
    "sys",
    "time",
    "unicodedata",
    "zlib",
];

/// Whether `policy` lets a script create module `name`, or the capability
/// it lacks.
fn check(policy: &Policy, name: &str) -> Result<(), Capability> {
    let top = name.split('.').next().unwrap_or(name);
    // Waiting on descriptors, which blocks past any time limit: for sockets
    // and for children's pipes (subprocess imports it).
    if matches!(top, "select" | "selectors") {
        return if policy.network || policy.processes {
            Ok(())
        } else {
            Err(Capability::Network)
        };
    }
    let needs = GATED
        .iter()
        .chain(NEEDS)
        .find(|(m, _)| *m == top)
        .map(|(_, c)| *c);
    let granted = match needs {
        Some(capability) => policy.grants(capability),
        None => {
            policy.all_imports
                || DEFAULT_ALLOWED.contains(&top)
                || policy.imports.iter().any(|m| m == top)
        }
    };
    match (granted, needs) {
        (true, _) => Ok(()),
        (false, Some(capability)) => Err(capability),
        (false, None) => Err(Capability::Import),
    }
}

/// The import error for a refused module: an `ImportError` (so `try:
/// import x / except ImportError` probes still work) whose message names
/// the capability.
fn refused(vm: &VirtualMachine, name: &str, capability: Capability) -> PyBaseExceptionRef {
    vm.new_import_error(
        message(capability, &format!("import {name}")),
        vm.ctx.new_str(name),
    )
}

/// Built-in modules whose functions [`super::rules`] guards: already loaded,
/// and never created again (`del sys.modules["posix"]; import posix`).
const GUARDED_MODULES: &[&str] = &["posix", "_thread", "_signal", "_imp", "sys", "time"];

pub(crate) fn install(
    vm: &VirtualMachine,
    policy: &Arc<Policy>,
    replaced: &mut Replaced,
) -> PyResult<()> {
    let imp = vm.import("_imp", 0)?;
    let p = policy.clone();
    guard::wrap(
        vm,
        &imp,
        "create_builtin",
        Box::new(move |args: FuncArgs, vm: &VirtualMachine| {
            // The spec's name is read once, and the original gets a plain
            // namespace holding it: a property cannot answer differently.
            let spec = args.args.first().ok_or_else(|| {
                vm.new_type_error("create_builtin() missing required argument 'spec'")
            })?;
            let name = spec.get_attr("name", vm)?;
            let name = name
                .downcast_ref::<PyStr>()
                .and_then(|s| s.to_str().map(str::to_owned))
                .ok_or_else(|| vm.new_type_error("module name must be a str"))?;
            check(&p, &name).map_err(|capability| refused(vm, &name, capability))?;
            // A guarded module made anew would carry the original functions.
            let loaded = vm
                .sys_module
                .get_attr("modules", vm)?
                .get_item(name.as_str(), vm)
                .is_ok();
            if GUARDED_MODULES.contains(&name.as_str()) && !loaded {
                return Err(refused(vm, &name, Capability::Native));
            }
            let kwargs: KwArgs = [("name".to_owned(), vm.ctx.new_str(name.as_str()).into())]
                .into_iter()
                .collect();
            let plain = vm.ctx.types.namespace_type.as_object().call(
                FuncArgs::new(Vec::<rustpython_vm::PyObjectRef>::new(), kwargs),
                vm,
            )?;
            Ok(FuncArgs::from(vec![plain]))
        }),
        replaced,
    )?;
    for frozen in ["get_frozen_object", "init_frozen"] {
        let p = policy.clone();
        guard::wrap(
            vm,
            &imp,
            frozen,
            Box::new(move |mut args: FuncArgs, vm: &VirtualMachine| {
                let name = args
                    .args
                    .first()
                    .or_else(|| args.kwargs.get("name"))
                    .and_then(|n| n.downcast_ref::<PyStr>())
                    .and_then(|s| s.to_str().map(str::to_owned));
                // Frozen code from the caller's bytes is code from bytes.
                let data = args.args.get(1).or_else(|| args.kwargs.get("data"));
                if data.is_some_and(|d| !vm.is_none(d)) && !p.native {
                    return Err(denied(
                        vm,
                        Capability::Native,
                        "_imp.get_frozen_object(name, data)",
                    ));
                }
                if let Some(name) = name {
                    check(&p, &name).map_err(|capability| refused(vm, &name, capability))?;
                    // The original reads the same text, not a str subclass.
                    if let Some(first) = args.args.first_mut() {
                        *first = vm.ctx.new_str(name.as_str()).into();
                    }
                }
                Ok(args)
            }),
            replaced,
        )?;
    }
    Ok(())
}
