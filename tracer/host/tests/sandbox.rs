//! The capability policy: each capability refused by default — through every
//! route a script has to it — and working once granted. The note on issue 17
//! lists these routes.

use std::path::{Path, PathBuf};

use fxvm::{Error, Host, HostBuilder};

/// A fresh folder of the test's own, canonical.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fxvm-sandbox-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn host(builder: HostBuilder) -> Host {
    builder.build().unwrap()
}

/// Runs `source` expecting a refusal of type `kind` whose message names
/// `grant` (the HostBuilder method).
#[track_caller]
fn refused(host: &Host, source: &str, kind: &str, grant: &str) -> Error {
    let e = host
        .run_str(source)
        .expect_err(&format!("not refused:\n{source}"));
    assert_eq!(
        e.exception_type(),
        Some(kind),
        "{source}\n{e}\n{}",
        e.traceback
    );
    assert!(
        e.message.contains(&format!("HostBuilder::{grant}")),
        "{source}\n{e}"
    );
    e
}

#[track_caller]
fn runs(host: &Host, source: &str) {
    if let Err(e) = host.run_str(source) {
        panic!("{source}\n{e}\n{}", e.traceback);
    }
}

/// `s` as a Python string literal.
fn lit(p: &Path) -> String {
    format!("{:?}", p.to_str().unwrap())
}

#[test]
fn files_outside_the_granted_folders_cannot_be_read() {
    let dir = scratch("read");
    let secret = scratch("read-secret").join("secret.txt");
    std::fs::write(&secret, "secret").unwrap();
    std::fs::write(dir.join("ok.txt"), "ok").unwrap();
    let host = host(Host::builder().allow_read(&dir));
    let s = lit(&secret);
    let routes = [
        format!("open({s})"),
        format!("import io\nio.open({s})"),
        format!("import io\nio.FileIO({s})"),
        format!("import _io\n_io.FileIO({s}, 'r')"),
        format!("import _io\n_io.open_code({s})"),
        format!("import os\nos.open({s}, os.O_RDONLY)"),
        format!("import os\nos.stat({s})"),
        format!(
            "import os\nos.listdir({:?})",
            secret.parent().unwrap().to_str().unwrap()
        ),
        "import os\nos.listdir()".to_owned(),
        "import os\nlist(os.scandir('/'))".to_owned(),
        format!("import pathlib\npathlib.Path({s}).read_text()"),
        format!("import codecs, warnings\nwarnings.simplefilter('ignore')\ncodecs.open({s})"),
        // The class behind every file object, found without importing it.
        format!(
            "def walk(c):\n    for s in type.__subclasses__(c):\n        yield s\n        yield from walk(s)\n\
             FileIO = next(c for c in walk(object) if c.__name__ == 'FileIO')\nFileIO({s})"
        ),
        // Re-initialising a file the script may open.
        format!(
            "f = open({:?}, 'rb', buffering=0)\nf.__init__({s})",
            dir.join("ok.txt").to_str().unwrap()
        ),
        format!("import _io\nf = _io.FileIO.__new__(_io.FileIO)\n_io.FileIO.__init__(f, {s})"),
        // `..` and symlinks lead out.
        format!(
            "open({:?})",
            format!(
                "{}/../{}",
                dir.display(),
                secret
                    .strip_prefix(dir.parent().unwrap())
                    .unwrap()
                    .display()
            )
        ),
        // A path-like answering differently the second time.
        format!(
            "class P:\n    n = 0\n    def __fspath__(self):\n        P.n += 1\n        return {:?} if P.n == 1 else {s}\nopen(P())",
            dir.join("ok.txt").to_str().unwrap()
        ),
        // A module file outside the import path.
        format!(
            "import importlib.machinery\nimportlib.machinery.SourceFileLoader('m', {s}).get_data({s})"
        ),
        // Checkpoint loaders open files in Rust.
        format!("import torch\ntorch.load({s})"),
        format!("import torch\ntorch.load({s}, mmap=True)"),
        format!("import torch\ntorch._C._load_checkpoint_file({s}, False, True, {{}}, None)"),
        format!("import safetensors.torch\nsafetensors.torch.load_file({s})"),
        format!("import torch\ntorch._C._safetensors_load_file({s})"),
        // numpy's files: through open, and its memmap in Rust.
        format!("import numpy as np\nnp.load({s})"),
        format!("import numpy as np\nnp.fromfile({s})"),
        format!("import numpy as np\nnp.loadtxt({s})"),
        format!("import numpy as np\nnp.memmap({s}, mode='r')"),
        format!("import _fxvm_numpy, torch\n_fxvm_numpy.map_file({s}, torch.uint8, 0, None)"),
        // An opener may return any descriptor.
        format!(
            "open({:?}, opener=lambda p, f: 0)",
            dir.join("ok.txt").to_str().unwrap()
        ),
        format!("import os\nos.stat({:?}, dir_fd=0)", "x"),
    ];
    for source in &routes {
        refused(&host, source, "PermissionError", "allow_read(dir)");
    }
    std::os::unix::fs::symlink(&secret, dir.join("link")).unwrap();
    refused(
        &host,
        &format!("open({})", lit(&dir.join("link"))),
        "PermissionError",
        "allow_read(dir)",
    );
    // Inside the folder, files read; nothing is written.
    runs(
        &host,
        &format!("assert open({}).read() == 'ok'", lit(&dir.join("ok.txt"))),
    );
    runs(
        &host,
        &format!("import os\nassert 'ok.txt' in os.listdir({})", lit(&dir)),
    );
    refused(
        &host,
        &format!("open({}, 'w')", lit(&dir.join("new.txt"))),
        "PermissionError",
        "allow_write(dir)",
    );
    refused(
        &host,
        &format!("import os\nos.remove({})", lit(&dir.join("ok.txt"))),
        "PermissionError",
        "allow_write(dir)",
    );
    assert!(dir.join("ok.txt").exists());
}

#[test]
fn descriptors_the_embedding_program_opened_are_out_of_reach() {
    let dir = scratch("fd");
    let outside = scratch("fd-outside").join("host.db");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .read(true)
        .write(true)
        .open(&outside)
        .unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&file);
    let host = host(Host::builder().allow_write(&dir));
    for source in [
        format!("import os\nos.write({fd}, b'x')"),
        format!("import os\nos.read({fd}, 1)"),
        format!("import os\nos.close({fd})"),
        format!("import os\nos.dup2({fd}, 1)"),
        format!("open({fd}, 'w')"),
        format!("import os\nos.fdopen({fd}, 'r')"),
        format!("import os\nos.fstat({fd})"),
        "import os\nos.close(1)".to_owned(),
    ] {
        refused(&host, &source, "PermissionError", "allow_");
    }
    assert_eq!(std::fs::metadata(&outside).unwrap().len(), 0);
    // Descriptors of files in the granted folder work as usual.
    runs(
        &host,
        &format!(
            "import os\nfd = os.open({}, os.O_WRONLY | os.O_CREAT)\nos.write(fd, b'abc')\nos.fsync(fd)\nos.close(fd)\n\
             with open({}, 'rb') as f:\n    assert os.fstat(f.fileno()).st_size == 3\n    assert f.read() == b'abc'",
            lit(&dir.join("w.bin")),
            lit(&dir.join("w.bin"))
        ),
    );
    drop(file);
}

#[test]
fn writes_stay_in_the_granted_folder() {
    let dir = scratch("write");
    let outside = scratch("write-outside");
    std::fs::write(outside.join("keep.txt"), "keep").unwrap();
    let host = host(Host::builder().allow_write(&dir));
    let d = lit(&dir);
    runs(
        &host,
        &format!(
            "import os, shutil, tempfile\nd = {d}\nwith open(os.path.join(d, 'a.txt'), 'w') as f:\n    f.write('hi')\n\
             os.rename(os.path.join(d, 'a.txt'), os.path.join(d, 'b.txt'))\nos.mkdir(os.path.join(d, 'sub'))\n\
             shutil.copyfile(os.path.join(d, 'b.txt'), os.path.join(d, 'sub', 'c.txt'))\n\
             assert open(os.path.join(d, 'sub', 'c.txt')).read() == 'hi'\n\
             fd, name = tempfile.mkstemp(dir=d)\nos.close(fd)\nos.remove(name)\n\
             os.symlink('b.txt', os.path.join(d, 'rel'))\nassert open(os.path.join(d, 'rel')).read() == 'hi'"
        ),
    );
    // Checkpoints save and load inside the folder.
    runs(
        &host,
        &format!(
            "import torch, safetensors.torch\nt = {{'w': torch.arange(6.0).reshape(2, 3)}}\n\
             torch.save(t, {d} + '/ck.pt')\nassert torch.equal(torch.load({d} + '/ck.pt')['w'], t['w'])\n\
             safetensors.torch.save_file(t, {d} + '/ck.safetensors')\n\
             assert torch.equal(safetensors.torch.load_file({d} + '/ck.safetensors')['w'], t['w'])"
        ),
    );
    let o = lit(&outside);
    for source in [
        format!(
            "import os\nos.rename({}, {o} + '/moved')",
            lit(&dir.join("b.txt"))
        ),
        format!("import os\nos.rename({o} + '/keep.txt', {d} + '/stolen')"),
        format!("import os\nos.remove({o} + '/keep.txt')"),
        format!("import os\nos.mkdir({o} + '/new')"),
        format!("import os\nos.chmod({o} + '/keep.txt', 0o777)"),
        format!("import os\nos.utime({o} + '/keep.txt')"),
        format!("import os\nos.truncate({o} + '/keep.txt', 0)"),
        format!("import shutil\nshutil.rmtree({o})"),
        format!("import tempfile\ntempfile.mkstemp(dir={o})"),
        format!("import torch\ntorch.save({{}}, {o} + '/ck.pt')"),
        // A link is a door: made to lead out, it is refused; made by the
        // embedding program, it does not open.
        format!("import os\nos.symlink({o} + '/keep.txt', {d} + '/door')"),
        format!("import os\nos.link({o} + '/keep.txt', {d} + '/hard')"),
    ] {
        refused(&host, &source, "PermissionError", "allow_");
    }
    std::os::unix::fs::symlink(&outside, dir.join("door")).unwrap();
    refused(
        &host,
        &format!("open({d} + '/door/keep.txt', 'w')"),
        "PermissionError",
        "allow_write(dir)",
    );
    refused(
        &host,
        &format!("open({d} + '/door/new.txt', 'w')"),
        "PermissionError",
        "allow_write(dir)",
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("keep.txt")).unwrap(),
        "keep"
    );
    assert!(!outside.join("new.txt").exists());
}

#[test]
fn network_is_refused_unless_granted() {
    let host = host(Host::builder());
    for source in [
        "import socket",
        "import _socket",
        "import ssl",
        "import select",
        "import selectors",
        "import urllib.request",
        "import http.client",
        "__import__('_socket')",
        "import importlib\nimportlib.import_module('_socket')",
        "import builtins\nbuiltins.__import__('socket')",
        "__builtins__.__dict__['__import__']('_socket') if hasattr(__builtins__, '__dict__') else __builtins__['__import__']('_socket')",
        // A hand-made spec straight to the loader's primitive.
        "import _imp, importlib.machinery as m\n_imp.create_builtin(m.ModuleSpec('_socket', None))",
    ] {
        refused(&host, source, "ImportError", "allow_network()");
    }
    // A spec whose name changes between the check and the load gets what
    // was checked.
    runs(
        &host,
        "import _imp\nclass S:\n    n = 0\n    @property\n    def name(self):\n        S.n += 1\n        return 'math' if S.n == 1 else '_socket'\n\
         m = _imp.create_builtin(S())\nassert m.__name__ == 'math', m",
    );
    runs(
        &host,
        "try:\n    import socket\nexcept ImportError as e:\n    assert 'allow_network' in str(e)\nelse:\n    raise AssertionError",
    );
    let open = self::host(Host::builder().allow_network());
    runs(&open, "import socket\ns = socket.socket()\ns.close()");
}

#[test]
fn processes_are_refused_unless_granted() {
    let host = host(Host::builder());
    refused(
        &host,
        "import subprocess",
        "ImportError",
        "allow_processes()",
    );
    refused(
        &host,
        "import _posixsubprocess",
        "ImportError",
        "allow_processes()",
    );
    refused(
        &host,
        "import signal\nsignal.signal(signal.SIGTERM, print)",
        "PermissionError",
        "allow_processes()",
    );
    for source in [
        "import os\nos.system('true')",
        "import os\nos.fork()",
        "import os\nos.execv('/bin/true', ['true'])",
        "import os\nos.posix_spawn('/bin/true', ['true'], {})",
        "import os\nos.kill(os.getpid(), 0)",
        "import os\nos._exit(3)",
        "import os\nos.abort()",
        "import os\nos.popen('true')",
        "import _signal\n_signal.signal(2, lambda *a: None)",
        "import _signal\n_signal.raise_signal(15)",
        "import sys\nsys.modules['posix'].system('true')",
        "import os\ngetattr(os, 'sys' + 'tem')('true')",
        // A fresh posix module would carry the original functions.
        "import sys\ndel sys.modules['posix']\nimport posix\nposix.system('true')",
    ] {
        let e = host.run_str(source).expect_err(source);
        assert!(
            e.message.contains("HostBuilder::allow_processes()")
                || e.message.contains("HostBuilder::allow_native()"),
            "{source}\n{e}"
        );
    }
    // The host is still alive and usable.
    runs(&host, "import os\nassert os.getpid() > 0");
    // subprocess reads the environment when imported (children inherit it).
    let open = self::host(Host::builder().allow_processes().allow_environment());
    runs(
        &open,
        "import subprocess\nassert subprocess.run(['true']).returncode == 0",
    );
}

#[test]
fn the_environment_is_refused_unless_granted() {
    let host = host(Host::builder());
    for source in [
        "import os\nos.environ['PATH']",
        "import os\nos.getenv('PATH')",
        "import os\n'PATH' in os.environ",
        "import os\nos.environ.copy()",
        "import os\nlist(os.environ)",
        "import os\nos.environb[b'PATH']",
        "import os\nos.environ['X'] = '1'",
        "import os\nos.putenv('X', '1')",
        "import posix\nposix.environ[b'PATH']",
        "import posix\nposix._create_environ()",
        "import os\nos.chdir('/')",
        "import os\nos.umask(0)",
    ] {
        refused(&host, source, "PermissionError", "allow_environment()");
    }
    refused(
        &host,
        "import getpass\ngetpass.getuser()",
        "ImportError",
        "allow_environment()",
    );
    refused(&host, "import pwd", "ImportError", "allow_environment()");
    // Standard input is the embedding program's: empty, and fd 0 refused.
    runs(
        &host,
        "import sys\ntry:\n    input()\nexcept EOFError:\n    pass\nelse:\n    raise AssertionError\nassert sys.__stdin__.read() == ''",
    );
    refused(
        &host,
        "import os\nos.read(0, 1)",
        "PermissionError",
        "allow_read(dir)",
    );
    refused(&host, "open(0)", "PermissionError", "allow_read(dir)");
    let open = self::host(Host::builder().allow_environment());
    runs(
        &open,
        "import os\nassert os.environ['PATH'] == os.getenv('PATH')",
    );
}

#[test]
fn threads_are_refused_unless_granted() {
    let host = host(Host::builder());
    for source in [
        "import threading\nthreading.Thread(target=print).start()",
        "import _thread\n_thread.start_new_thread(print, ())",
        "import _thread\n_thread.start_joinable_thread(print)",
    ] {
        refused(&host, source, "PermissionError", "allow_threads()");
    }
    // Locks work without threads (libraries take them); waiting for a lock
    // nobody else can release is an error, not a hang.
    runs(&host, "import threading\nwith threading.Lock():\n    pass");
    runs(
        &host,
        "import threading\nl = threading.Lock()\nl.acquire()\nassert not l.acquire(timeout=10)\nassert not l.acquire(False)",
    );
    for source in [
        "import threading\nl = threading.Lock()\nl.acquire()\nl.acquire()",
        "import threading\nl = threading.Lock()\nwith l:\n    with l:\n        pass",
        "import threading\nthreading.Event().wait()",
        "import queue\nqueue.Queue().get()",
    ] {
        let e = host.run_str(source).expect_err(source);
        assert_eq!(e.exception_type(), Some("RuntimeError"), "{source}\n{e}");
        assert!(
            e.message.contains("deadlock") && e.message.contains("allow_threads()"),
            "{e}"
        );
    }
    let open = self::host(Host::builder().allow_threads());
    runs(
        &open,
        "import threading\nout = []\nt = threading.Thread(target=out.append, args=(1,))\nt.start()\nt.join()\nassert out == [1]",
    );
}

#[test]
fn imports_outside_the_allow_list_are_refused_unless_granted() {
    let host = host(Host::builder());
    refused(&host, "import zipapp", "ImportError", "allow_import(name)");
    refused(
        &host,
        "import importlib\nimportlib.import_module('pdb')",
        "ImportError",
        "allow_import(name)",
    );
    refused(
        &host,
        "import _imp\n_imp.init_frozen('zipapp')",
        "ImportError",
        "allow_import(name)",
    );
    refused(
        &host,
        "import _imp\n_imp.get_frozen_object('zipapp')",
        "ImportError",
        "allow_import(name)",
    );
    // What the default list holds imports, torch.fx first.
    runs(
        &host,
        "import torch, torch.fx, torch.nn.functional, math, json, re, dataclasses, collections, typing, inspect",
    );
    runs(
        &host,
        "import einops_is_missing_anyway\n"
            .replace(
                "import einops_is_missing_anyway\n",
                "try:\n    import zipapp\nexcept ImportError:\n    pass\n",
            )
            .as_str(),
    );
    let granted = self::host(Host::builder().allow_import("zipapp"));
    runs(&granted, "import zipapp");
    let all = self::host(Host::builder().allow_all_imports());
    runs(&all, "import zipapp, pdb");
}

#[test]
fn native_code_is_refused_unless_granted() {
    let host = host(Host::builder());
    for source in [
        "import ctypes",
        "import _ctypes",
        "import mmap",
        "import fcntl",
        "import sqlite3",
    ] {
        refused(&host, source, "ImportError", "allow_native()");
    }
    // Code from bytes: RustPython trusts the bytecode it runs.
    for source in [
        "def f():\n    return 1\nf.__code__.replace(co_code=b'\\xff\\x00' * 8)",
        "def f():\n    return 1\nf.__code__.replace(co_consts=())",
        "def f():\n    return 1\nf.__code__.replace(co_flags=f.__code__.co_flags | 0x20)",
        "def f(a):\n    return a\nf.__code__.replace(co_argcount=50)",
        "import types\ndef f():\n    return 1\nc = f.__code__\ntypes.CodeType(c.co_argcount, 0, 0, c.co_nlocals, c.co_stacksize, c.co_flags, b'', (), (), (), '', '', '', 1, b'', b'')",
        "import types\ntypes.CodeType.__new__(types.CodeType)",
        "import marshal\ndef f():\n    return 1\nmarshal.loads(marshal.dumps(f.__code__))",
        "import _imp\n_imp.get_frozen_object('os', b'\\xe3')",
    ] {
        refused(&host, source, "PermissionError", "allow_native()");
    }
    // The signature may change: the tracer rewrites `*args` functions so.
    runs(
        &host,
        "import torch, torch.fx\nclass M(torch.nn.Module):\n    def forward(self, x, *rest):\n        return x + 1\n\
         gm = torch.fx.symbolic_trace(M())\nassert [n.op for n in gm.graph.nodes] == ['placeholder', 'placeholder', 'call_function', 'output'], gm.graph\n\
         def g(*args):\n    return args\nc = g.__code__.replace(co_argcount=1, co_flags=g.__code__.co_flags & ~0x04, co_name='h')\n\
         assert c.co_name == 'h' and c.co_argcount == 1",
    );
    let open = self::host(Host::builder().allow_native());
    runs(&open, "import mmap\nm = mmap.mmap(-1, 16)\nm.close()");
}

/// Walks what a script reaches from its modules — attributes, containers,
/// functions' defaults, closures and globals, classes and their subclasses —
/// and lists the native functions named in `names`.
const REACH: &str = r#"import sys, types
def reach(names):
    seen, stack, hits = set(), list(sys.modules.values()), []
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        if isinstance(o, types.BuiltinFunctionType) and getattr(o, '__name__', None) in names:
            hits.append(o)
        if isinstance(o, dict):
            stack.extend(o.keys()); stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif isinstance(o, type):
            stack.extend(vars(o).values()); stack.extend(type.__subclasses__(o))
        elif isinstance(o, types.FunctionType):
            stack.extend([o.__globals__, o.__defaults__ or (), o.__kwdefaults__ or {}])
            stack.extend(c.cell_contents for c in o.__closure__ or () if c.cell_contents is not None)
        elif isinstance(o, types.MethodType):
            stack.extend([o.__self__, o.__func__])
        elif isinstance(o, types.BuiltinFunctionType):
            stack.append(getattr(o, '__self__', None))
        elif isinstance(getattr(o, '__dict__', None), dict):
            stack.append(o.__dict__)
    return seen, hits
"#;

#[test]
fn guarded_functions_cannot_be_unwrapped() {
    // A full-access host in the same process: its originals, and its
    // classes, must be out of the sandboxed host's reach too.
    let full = host(Host::builder().allow_all());
    let _secret = full
        .import_source(
            "secretmod",
            "import os\nclass FullHostSecret:\n    system = os.system\n",
        )
        .unwrap();
    let host = host(Host::builder());
    runs(
        &host,
        &format!(
            "{REACH}import os, _imp, _thread
guards = {{id(os.system), id(os.fork), id(os.putenv), id(os.open), id(_imp.create_builtin), id(_thread.start_new_thread)}}
seen, hits = reach({{'system', 'fork', 'putenv', 'open', 'create_builtin', 'start_new_thread'}})
assert len(seen) > 10000, len(seen)
leaks = [(h.__module__, h.__name__) for h in hits if h.__module__ in ('posix', '_imp', '_thread') and id(h) not in guards]
assert not leaks, leaks
assert len(hits) >= len(guards), hits
assert not [c for c in object.__subclasses__() if c.__name__ == 'FullHostSecret']
assert getattr(os.system, '__wrapped__', None) is None"
        ),
    );
    // The full host still sees its own classes.
    runs(
        &full,
        "assert [c for c in object.__subclasses__() if c.__name__ == 'FullHostSecret']",
    );
    for source in [
        "import gc\ngc.get_objects()",
        "import gc\ngc.get_referrers(object)",
        "import gc\ngc.get_referents(object)",
    ] {
        refused(&host, source, "PermissionError", "allow_native()");
    }
}

#[test]
fn a_full_host_has_what_fxvm_run_has() {
    let dir = scratch("full");
    let host = host(Host::builder().allow_all());
    runs(
        &host,
        &format!(
            "import os, socket, subprocess, threading, ctypes\nopen({}, 'w').write('x')\nos.environ.get('PATH')",
            lit(&dir.join("f"))
        ),
    );
}

#[test]
fn a_missing_granted_folder_is_an_error() {
    let e = Host::builder()
        .allow_read("/no/such/folder/fxvm")
        .build()
        .err()
        .expect("a missing folder");
    assert_eq!(e.kind, fxvm::ErrorKind::Io);
    assert!(e.message.contains("/no/such/folder/fxvm"), "{e}");
}
