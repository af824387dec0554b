//! `fxvm run` as a user runs it: output, exit codes, tracebacks, imports, argv.

use fxvm_tests::{Scratch, run, run_in};

#[test]
fn prints_and_exits_zero() {
    let dir = Scratch::new("hello");
    let script = dir.write("hello.py", "print('hello', 6 * 7)\n");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "hello 42\n");
    assert_eq!(out.stderr, "");
}

#[test]
fn uncaught_exception_prints_traceback_with_file_and_line() {
    let dir = Scratch::new("boom");
    let script = dir.write(
        "boom.py",
        "print('before')\ndef f(x):\n    raise ValueError(f'bad value {x}')\nf(3)\n",
    );
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    // What was printed before the failure is flushed, not lost.
    assert_eq!(out.stdout, "before\n");
    assert!(
        out.stderr.starts_with("Traceback (most recent call last):"),
        "{}",
        out.stderr
    );
    let file_line = format!("File \"{}\", line 3, in f", script.display());
    assert!(
        out.stderr.contains(&file_line),
        "missing `{file_line}` in:\n{}",
        out.stderr
    );
    assert!(out.stderr.contains("line 4, in <module>"), "{}", out.stderr);
    assert!(
        out.stderr.trim_end().ends_with("ValueError: bad value 3"),
        "{}",
        out.stderr
    );
}

#[test]
fn system_exit_sets_the_status() {
    let out = run(&["run", "-c", "import sys; print('bye'); sys.exit(3)"]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(3), "bye\n"),
        "{out:?}"
    );

    let out = run(&["run", "-c", "raise SystemExit('fatal: no model')"]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert_eq!(out.stderr, "fatal: no model\n");

    let out = run(&["run", "-c", "raise SystemExit"]);
    assert_eq!(out.status, Some(0), "{out:?}");
}

#[test]
fn syntax_error_reports_file_line_and_column() {
    let dir = Scratch::new("syntax");
    let script = dir.write("bad.py", "x = 1\ny = (2 +\n    def)\n");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert!(
        out.stderr
            .contains(&format!("File \"{}\", line 3", script.display())),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);
    // The caret line marks the column of the offending token.
    let lines: Vec<&str> = out.stderr.lines().collect();
    let caret = lines
        .iter()
        .position(|l| l.trim() == "^" || l.trim_start().starts_with('^'));
    let caret = caret.unwrap_or_else(|| panic!("no caret in:\n{}", out.stderr));
    let source = lines[caret - 1];
    let col = lines[caret].find('^').unwrap();
    assert_eq!(
        &source[col..col + 3],
        "def",
        "caret under the wrong column:\n{}",
        out.stderr
    );
}

#[test]
fn missing_file_is_a_one_line_error() {
    let out = run(&["run", "no/such/model.py"]);
    assert_eq!(out.status, Some(2), "{out:?}");
    assert_eq!(
        out.stderr,
        "fxvm: error: can't open file 'no/such/model.py': No such file or directory\n"
    );
    assert_eq!(out.stdout, "");
}

#[test]
fn script_folder_comes_first_on_sys_path() {
    let dir = Scratch::new("sibling");
    dir.write("model.py", "class GPT:\n    name = 'gpt'\n");
    let script = dir.write("train.py", "from model import GPT\nprint(GPT.name)\n");
    // Run from elsewhere: the import must not depend on the working folder.
    let out = run_in(&std::env::temp_dir(), &["run", script.to_str().unwrap()]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), "gpt\n"),
        "{out:?}"
    );
}

#[test]
fn argv_is_the_script_then_its_arguments() {
    let dir = Scratch::new("argv");
    let script = dir.write(
        "args.py",
        "import sys\nprint(sys.argv[1:])\nprint(sys.argv[0].endswith('args.py'))\n",
    );
    let out = run(&["run", script.to_str().unwrap(), "--epochs", "3", "-v"]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "['--epochs', '3', '-v']\nTrue\n");

    let out = run(&["run", "-c", "import sys; print(sys.argv)", "a", "-b"]);
    assert_eq!(out.stdout, "['-c', 'a', '-b']\n", "{out:?}");
}

#[test]
fn dash_m_runs_a_module_as_python_does() {
    let dir = Scratch::new("dash_m");
    dir.write("pkg/__init__.py", "");
    dir.write(
        "pkg/__main__.py",
        "import sys\nprint(__name__, sys.argv[0].endswith('pkg/__main__.py'), sys.argv[1:])\n",
    );
    dir.write(
        "tool.py",
        "import sys\nprint(__name__, sys.argv[1:])\nsys.exit(3)\n",
    );
    // The working folder is on sys.path, so its packages and modules run.
    let out = run_in(dir.path(), &["run", "-m", "pkg", "a", "-q"]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), "__main__ True ['a', '-q']\n"),
        "{out:?}"
    );
    let out = run_in(dir.path(), &["run", "-m", "tool", "--x"]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(3), "__main__ ['--x']\n")
    );
    // A library module that closes stdout itself (json.tool's `with outfile:`)
    // ends quietly, as in python.
    dir.write("j.json", "[1]");
    let out = run_in(dir.path(), &["run", "-m", "json.tool", "j.json"]);
    assert_eq!(
        (out.status, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "[\n    1\n]\n", ""),
    );
    let out = run_in(dir.path(), &["run", "-m", "nosuch"]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.ends_with(": No module named nosuch\n"),
        "{out:?}"
    );
}

#[test]
fn imported_modules_are_cached_as_bytecode_and_keep_their_lines() {
    let scratch = Scratch::new("pycache");
    scratch.write(
        "helper.py",
        "def ok():\n    return 'fine'\n\n\ndef fail():\n    try:\n        pass\n    finally:\n        values = [i for i in range(3)]\n    raise ValueError(values)\n",
    );
    scratch.write(
        "main.py",
        "import helper\nprint(helper.ok())\nhelper.fail()\n",
    );
    let run = |extra: Option<&str>| {
        let mut cmd = fxvm_tests::fxvm(&["run", "main.py"]);
        cmd.current_dir(scratch.path())
            .env_remove("PYTHONDONTWRITEBYTECODE");
        if let Some(value) = extra {
            cmd.env("PYTHONDONTWRITEBYTECODE", value);
        }
        fxvm_tests::Run::from(cmd.output().expect("spawn fxvm"))
    };
    let cache = scratch.path().join("__pycache__");
    let off = run(Some("1"));
    assert_eq!(off.status, Some(1));
    assert!(
        !cache.exists(),
        "PYTHONDONTWRITEBYTECODE turns the cache off"
    );
    let tail = "  File \"helper.py\", line 10, in fail\n    raise ValueError(values)\nValueError: [0, 1, 2]\n";
    for round in ["writes", "reads"] {
        let out = run(None);
        assert_eq!(out.stdout, "fine\n", "{round}");
        assert!(
            out.stderr
                .replace(&format!("{}/", scratch.path().display()), "")
                .ends_with(tail),
            "{round}: {}",
            out.stderr
        );
        let cached: Vec<String> = std::fs::read_dir(&cache)
            .expect("a __pycache__ folder")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            cached.len() == 1
                && cached[0].starts_with("helper.fxvm-")
                && cached[0].ends_with(".pyc"),
            "{cached:?}"
        );
    }
}

#[test]
fn main_module_and_atexit_behave_as_in_python() {
    let code = "import atexit\natexit.register(lambda: print('atexit ran'))\nprint(__name__)\n";
    let out = run(&["run", "-c", code]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), "__main__\natexit ran\n"),
        "{out:?}"
    );
}

#[test]
fn torch_package_imports() {
    let out = run(&[
        "run",
        "-c",
        "import torch; print(torch.__version__, torch._C.__name__)",
    ]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "2.15.0+fxvm torch._C\n");
}

#[test]
fn importlib_metadata_knows_the_packages_fxvm_provides() {
    // transformers asks importlib.metadata for torch's version before it
    // imports; without an answer it maps every installed file to its package.
    let out = run(&[
        "run",
        "-c",
        "import importlib.metadata as m, torch, numpy, regex, tokenizers, safetensors\n\
         for p in (torch, numpy, regex, tokenizers, safetensors):\n\
         \x20   d = m.distribution(p.__name__)\n\
         \x20   print(p.__name__, m.version(p.__name__) == p.__version__, d.metadata['Name'], d.files)\n\
         print(m.packages_distributions()['torch'], m.version('Tokenizers'))\n\
         try:\n\
         \x20   m.version('not-a-package')\n\
         except m.PackageNotFoundError as e:\n\
         \x20   print('PackageNotFoundError', e)",
    ]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(
        out.stdout,
        "torch True torch None\nnumpy True numpy None\nregex True regex None\n\
         tokenizers True tokenizers None\nsafetensors True safetensors None\n\
         ['torch'] 0.23.3\nPackageNotFoundError No package metadata was found for not-a-package\n"
    );
}

#[test]
fn version_and_help() {
    let out = run(&["--version"]);
    assert_eq!(out.status, Some(0));
    assert_eq!(out.stdout, format!("fxvm {}\n", env!("CARGO_PKG_VERSION")));

    let out = run(&[]);
    assert_ne!(out.status, Some(0));
    assert!(out.stderr.contains("Usage: fxvm"), "{out:?}");
    assert!(out.stderr.contains("run"), "{out:?}");

    let out = run(&["run"]);
    assert_eq!(out.status, Some(2), "{out:?}");
    assert!(out.stderr.contains("needs a script"), "{out:?}");
}

#[cfg(unix)]
#[test]
fn ctrl_c_raises_keyboard_interrupt_in_the_script() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;

    // 'ready' is printed inside the `try`, so the signal cannot land outside it.
    let code = "import time\ntry:\n    print('ready', flush=True)\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    print('caught')\n";
    let mut child = fxvm_tests::fxvm(&["run", "-c", code])
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn fxvm");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    line.clear();
    stdout.read_line(&mut line).unwrap();
    assert_eq!(line, "caught\n");
    assert!(child.wait().unwrap().success());
}

#[test]
fn bundled_example_prints_runs_and_traces_the_model() {
    let script = fxvm_tests::fixtures().join("examples").join("mlp.py");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // The same text real PyTorch prints for this script.
    let expected = "MLP(\n  (fc1): Linear(in_features=4, out_features=8, bias=True)\n  (fc2): Linear(in_features=8, out_features=2, bias=False)\n)\nlogits: tensor([[-0.1030, -0.2733],\n        [-0.2957, -0.7834],\n        [-0.4883, -1.2934]])\n";
    assert!(out.stdout.starts_with(expected), "{}", out.stdout);
    // And the code torch.fx generates when it traces the model.
    let traced = "\n\ndef forward(self, x):\n    fc1 = self.fc1(x);  x = None\n    relu = torch.nn.functional.relu(fc1, inplace = False);  fc1 = None\n    fc2 = self.fc2(relu);  relu = None\n    return fc2\n    \ntraced module agrees: True\n";
    assert!(out.stdout.contains(traced), "{}", out.stdout);
}

/// Sources that overflowed RustPython's parser (SIGSEGV) get CPython's errors.
#[test]
fn deeply_nested_sources_get_cpythons_errors() {
    let dir = Scratch::new("nesting");
    let parens = dir.write(
        "parens.py",
        &format!(
            "print('ran')\nx = {}1{}\n",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
    );
    let out = run(&["run", parens.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert_eq!(
        out.stdout, "",
        "a syntax error stops the script before it runs"
    );
    assert!(
        out.stderr.contains("parens.py\", line 2")
            && out
                .stderr
                .ends_with("SyntaxError: too many nested parentheses\n"),
        "{}",
        out.stderr
    );
    let out = run(&["lint", parens.to_str().unwrap()]);
    assert_eq!(out.status, Some(2), "{out:?}");
    assert!(
        out.stderr
            .ends_with("parens.py:2:205: syntax error: too many nested parentheses\n"),
        "{}",
        out.stderr
    );

    let sum = dir.write(
        "sum.py",
        &format!("y = {}\n", vec!["1"; 20_000].join(" + ")),
    );
    let out = run(&["run", sum.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert!(
        out.stderr
            .ends_with("RecursionError: maximum recursion depth exceeded during compilation\n"),
        "{}",
        out.stderr
    );

    // An imported module compiles through the guarded `compile`.
    dir.write(
        "deep.py",
        &format!("x = {}1{}\n", "[".repeat(300), "]".repeat(300)),
    );
    let main = dir.write(
        "main.py",
        "try:\n    import deep\nexcept SyntaxError as e:\n    print(e.msg, e.lineno, e.filename.endswith('deep.py'))\n",
    );
    let out = run(&["run", main.to_str().unwrap()]);
    assert_eq!(
        out.stdout, "too many nested parentheses 1 True\n",
        "{out:?}"
    );

    let indent: String = (0..101)
        .map(|i| format!("{}if x:\n", " ".repeat(i)))
        .collect();
    let indent = dir.write("indent.py", &format!("{indent}{}pass\n", " ".repeat(101)));
    let out = run(&["run", indent.to_str().unwrap()]);
    assert!(
        out.stderr
            .ends_with("IndentationError: too many levels of indentation\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_script_that_is_not_utf8_names_the_file() {
    let dir = Scratch::new("latin1");
    let script = dir.path().join("latin1.py");
    std::fs::write(&script, b"x = '\xff'\nprint(x)\n").unwrap();
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    let expected = format!(
        "SyntaxError: Non-UTF-8 code starting with '\\xff' in file {} on line 1, but no encoding declared; see https://peps.python.org/pep-0263/ for details\n",
        script.display()
    );
    assert_eq!(out.stderr, expected);
}

#[test]
fn text_files_open_as_utf8_by_default() {
    // Model files carry `×`, `—` and the like in comments and docstrings;
    // scripts that read them (or any text) with a bare `open()` must not
    // fail on the first such character, whatever the locale says.
    let dir = Scratch::new("utf8");
    dir.write("notes.txt", "3×3 — ok\n");
    let script = dir.write(
        "read.py",
        "import sys\nwith open('notes.txt') as f:\n    print(f.encoding, f.read().strip())\nprint(sys.flags.utf8_mode)\n",
    );
    let out = run_in(dir.path(), &["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    // CPython in UTF-8 mode (`-X utf8`) spells it `utf-8` too.
    assert_eq!(out.stdout, "utf-8 3×3 — ok\n1\n");
}

#[test]
fn a_script_that_cannot_be_read_names_the_file() {
    // /proc/self/mem cannot be read at offset 0, even by root.
    let out = run(&["run", "/proc/self/mem"]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert!(
        out.stderr
            .starts_with("OSError: can't open file '/proc/self/mem': [Errno 5]"),
        "{}",
        out.stderr
    );
}

#[test]
fn user_packages_come_from_site_packages_pythonpath_and_a_virtualenv() {
    let scratch = Scratch::new("site-packages");
    let root = scratch.path();
    let make_package = |dir: &std::path::Path, name: &str| {
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(
            dir.join(name).join("__init__.py"),
            format!("WHO = {name:?}\n"),
        )
        .unwrap();
    };
    let explicit = root.join("explicit");
    make_package(&explicit, "alpha");
    std::fs::write(
        explicit.join("fastmath.cpython-311-x86_64-linux-gnu.so"),
        b"",
    )
    .unwrap();
    let on_path = root.join("on_path");
    make_package(&on_path, "beta");
    let venv_site = root.join("venv/lib/python3.11/site-packages");
    make_package(&venv_site, "gamma");
    // A venv's own `torch` stays behind fxvm's frozen one.
    make_package(&venv_site, "torch");
    let code = "import alpha, beta, gamma, torch\nprint(alpha.WHO, beta.WHO, gamma.WHO, torch.tensor([1]).tolist())\ntry:\n    import fastmath\nexcept ImportError as e:\n    print(type(e).__name__, e.name, 'compiled extension' in str(e))";
    let out = fxvm_tests::fxvm(&[
        "run",
        "--site-packages",
        explicit.to_str().unwrap(),
        "-c",
        code,
    ])
    .env("PYTHONPATH", &on_path)
    .env("VIRTUAL_ENV", root.join("venv"))
    .output()
    .expect("spawn fxvm");
    let out = fxvm_tests::Run::from(out);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "alpha beta gamma [1]\nCompiledExtensionError fastmath True\n"
    );
    // Without them, a clear ModuleNotFoundError.
    let out = run(&["run", "-c", "import alpha"]);
    assert!(
        out.stderr
            .trim_end()
            .ends_with("ModuleNotFoundError: No module named 'alpha'"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_library_importing_a_compiled_package_at_its_top_still_imports() {
    // `fastcore` needs its compiled core; `uses_core` imports it at the top
    // (as torchvision imports numpy and PIL) and subclasses one of its
    // classes. The library imports; using the package raises the error.
    let scratch = Scratch::new("deferred-compiled");
    let site = scratch.path();
    std::fs::create_dir_all(site.join("fastcore")).unwrap();
    std::fs::write(
        site.join("fastcore/__init__.py"),
        "from fastcore._core import speed\n",
    )
    .unwrap();
    std::fs::write(
        site.join("fastcore/_core.cpython-311-x86_64-linux-gnu.so"),
        b"",
    )
    .unwrap();
    std::fs::write(
        site.join("uses_core.py"),
        "import fastcore\nfrom fastcore import Engine\n\nclass Fast(Engine):\n    pass\n\n\
         def is_array(x):\n    return isinstance(x, fastcore.Array)\n\n\
         def run():\n    return fastcore.speed(3)\n",
    )
    .unwrap();
    let code = "import sys\nimport uses_core\nprint(uses_core.Fast.__name__, uses_core.is_array([1]), 'fastcore' in sys.modules)\n\
                for call in (uses_core.run, uses_core.Fast, lambda: __import__('fastcore')):\n    \
                try:\n        call()\n    except ImportError as e:\n        \
                print(type(e).__name__, 'fastcore._core' in str(e), 'compiled extension' in str(e))";
    let out = run(&["run", "--site-packages", site.to_str().unwrap(), "-c", code]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "Fast False False\nUnavailableError True True\nUnavailableError True True\nCompiledExtensionError True True\n"
    );
}

#[test]
fn a_compiled_module_added_to_a_listed_directory_is_still_named() {
    // The finder keeps each directory's listing until the directory's mtime
    // changes (the sleeps outlast coarse file-system timestamps).
    let scratch = Scratch::new("relisted-compiled");
    let site = scratch.path();
    let so = site.join("fastlib.cpython-311-x86_64-linux-gnu.so");
    let code = format!(
        "import os, time\n\
         def probe():\n    try:\n        import fastlib\n    except ImportError as e:\n        \
         return type(e).__name__\n\
         print(probe())\n\
         time.sleep(0.05)\n\
         open({so:?}, 'wb').close()\n\
         print(probe())\n\
         time.sleep(0.05)\n\
         os.remove({so:?})\n\
         print(probe())"
    );
    let out = run(&[
        "run",
        "--site-packages",
        site.to_str().unwrap(),
        "-c",
        &code,
    ]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "ModuleNotFoundError\nCompiledExtensionError\nModuleNotFoundError\n"
    );
}

#[test]
fn forcing_a_symbolic_size_records_a_guard_at_the_users_line() {
    let code = "import torch\n\
                from torch.fx.experimental.symbolic_shapes import ShapeEnv\n\
                from torch._dynamo.source import ConstantSource\n\
                env = ShapeEnv()\n\
                t = env.create_symintnode(env.create_symbol(8, ConstantSource('t')), hint=8)\n\
                if t > 4:\n    pass\n\
                n = int(t // 2)\n\
                assert t >= 0 and t != 1 and t % 3 < 3\n\
                print(n, t // 2, [(str(g.expr), g.line) for g in env.guards], env.replacements)";
    let out = run(&["run", "-c", code]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    // `t > 4` held at line 6; `int(t // 2)` at line 8 is not linear in t, so
    // t stays symbolic and the guard is the equality; what the facts about
    // sizes decide (line 9) needs no guard.
    assert_eq!(
        out.stdout,
        "4 (s60//2) [('s60 > 4', 6), ('Eq((s60//2), 4)', 8)] {}\n"
    );
}

/// Tracing with example shapes (`torch.fx.experimental.shape_trace`) and
/// capture/replay on it (`fxvm.global_function`, `torch.compile`): every
/// `fixtures/{shapes,compile}/*.py` with a `.out` golden — a GPT in nanoGPT's
/// style (graph, guards with file:line, re-runs at other lengths equal to
/// eager, the guard violation message) and the refusals of bad inputs.
#[test]
fn shape_trace_goldens() {
    let mut checked = 0;
    let dirs = ["shapes", "compile"].map(|d| fxvm_tests::fixtures().join(d));
    for entry in dirs
        .iter()
        .flat_map(|root| std::fs::read_dir(root).unwrap())
    {
        let script = entry.unwrap().path();
        let golden = script.with_extension("out");
        if script.extension().is_none_or(|e| e != "py") || !golden.exists() {
            continue;
        }
        let out = run(&["run", script.to_str().unwrap()]);
        assert_eq!(out.status, Some(0), "{}: {out:?}", script.display());
        let expected = std::fs::read_to_string(&golden).unwrap();
        let name = golden
            .strip_prefix(fxvm_tests::fixtures())
            .unwrap()
            .display()
            .to_string();
        let diff = fxvm_tests::unified_diff(&expected, &out.stdout, &format!("fixtures/{name}"));
        assert!(diff.is_empty(), "{diff}");
        checked += 1;
    }
    assert_eq!(checked, 12);
}

/// `fxvm run --profile` on a captured training step: its replays time the
/// forward rows, the backward pass's and the optimizer's native update.
#[test]
fn profile_shows_a_captured_steps_backward_and_update() {
    let dir = Scratch::new("profile_step");
    let script = dir.write(
        "step.py",
        "import torch, torch.nn as nn, torch.nn.functional as F, fxvm\n\
         m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))\n\
         opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)\n\
         @fxvm.global_function()\n\
         def step(x, y):\n    opt.zero_grad()\n    loss = F.cross_entropy(m(x), y)\n    loss.backward()\n    opt.step()\n    return loss\n\
         for _ in range(6):\n    step(torch.randn(3, 4), torch.tensor([0, 1, 1]))\n\
         print(step.stats()['replays'])\n",
    );
    let out = run(&["run", "--profile", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "4\n");
    let calls = |op: &str| {
        out.stderr
            .lines()
            .find(|l| l.split_whitespace().next() == Some(op))
            .and_then(|l| l.split_whitespace().nth(1))
    };
    assert_eq!(calls("linear"), Some("8"), "{}", out.stderr);
    assert_eq!(calls("_optim_sgd_"), Some("4"), "{}", out.stderr);
    assert!(
        out.stderr.contains("threshold_backward (backward)"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("accumulate grad"), "{}", out.stderr);
}

/// `fxvm run --profile`: the per-op time of replayed graphs on stderr at exit.
#[test]
fn profile_prints_per_op_time_of_replayed_graphs() {
    let dir = Scratch::new("profile");
    let script = dir.write(
        "mlp.py",
        "import gc, torch, torch.nn as nn\n\
         torch.set_grad_enabled(False)\n\
         m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).eval()\n\
         c = torch.compile(m)\n\
         for _ in range(5):\n    c(torch.randn(3, 4))\n\
         d = torch.compile(lambda x: torch.tanh(x) * 2)\n\
         for _ in range(3):\n    d(torch.randn(3))\n\
         del d\n\
         gc.collect()\n\
         e = torch.compile(lambda x: torch.exp(x) + 1)\n\
         for _ in range(2):\n    e(torch.randn(3))\n\
         e.reset()\n\
         for _ in range(2):\n    e(torch.randn(3))\n\
         print('ok')\n",
    );
    let out = run(&["run", "--profile", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert_eq!(out.stdout, "ok\n");
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert!(
        lines[0].starts_with("op") && lines[0].contains("calls"),
        "{}",
        out.stderr
    );
    let linear = lines
        .iter()
        .find(|l| l.starts_with("torch._C._nn.linear"))
        .expect("linear's row");
    assert_eq!(
        linear.split_whitespace().nth(1),
        Some("10"),
        "{}",
        out.stderr
    );
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("torch.nn.functional.relu")),
        "{}",
        out.stderr
    );
    // A function dropped before exit, and one reset and captured again,
    // still count every replay.
    let calls = |op: &str| {
        lines
            .iter()
            .find(|l| l.starts_with(op))
            .and_then(|l| l.split_whitespace().rev().nth(2))
    };
    assert_eq!(calls("torch.tanh"), Some("3"), "{}", out.stderr);
    assert_eq!(calls("torch.exp"), Some("4"), "{}", out.stderr);
}

/// In evaluation, a replay folds each batch normalization into the
/// convolution before it (the profile names it), not one whose
/// convolution output is read elsewhere, nor one in training.
#[test]
fn replays_fold_batch_norm_into_the_convolution_before_it_in_evaluation() {
    let dir = Scratch::new("fold");
    let script = dir.write(
        "convbn.py",
        "import torch, torch.nn as nn\n\
         torch.set_grad_enabled(False)\n\
         class Net(nn.Module):\n\
         \x20   def __init__(self):\n\
         \x20       super().__init__()\n\
         \x20       self.a, self.b = nn.Conv2d(3, 4, 3), nn.Conv2d(4, 4, 1)\n\
         \x20       self.bn_a, self.bn_b = nn.BatchNorm2d(4), nn.BatchNorm2d(4)\n\
         \x20   def forward(self, x):\n\
         \x20       y = self.a(x)\n\
         \x20       z = self.b(y)\n\
         \x20       return self.bn_a(y) + self.bn_b(z)\n\
         net = Net()\n\
         for mode in (net.eval, net.train):\n\
         \x20   mode()\n\
         \x20   c = torch.compile(net)\n\
         \x20   for _ in range(3):\n\
         \x20       x = torch.randn(2, 3, 8, 8)\n\
         \x20       assert torch.allclose(c(x), net(x), rtol=1e-5, atol=1e-5)\n\
         print('ok')\n",
    );
    let out = run(&["run", "--profile", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    let rows: Vec<&str> = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("torch.nn.functional.batch_norm"))
        .collect();
    // bn_b folded in evaluation (3 calls); bn_a (its convolution's output
    // also feeds conv b) and both in training (6 calls) run.
    let calls = |folded: bool| {
        rows.iter()
            .find(|l| l.contains("(folded into the convolution)") == folded)
            .and_then(|l| l.split_whitespace().rev().nth(2))
            .map(str::to_owned)
    };
    assert_eq!(calls(true).as_deref(), Some("3"), "{}", out.stderr);
    assert_eq!(calls(false).as_deref(), Some("9"), "{}", out.stderr);
}

/// A relu whose only reader is a max pooling runs after the pooling, on
/// its output (the profile names both); one read elsewhere too stays.
#[test]
fn replays_run_a_relu_before_max_pooling_after_it() {
    let dir = Scratch::new("relu-pool");
    let script = dir.write(
        "pool.py",
        "import torch, torch.nn.functional as F\n\
         def f(x):\n\
         \x20   a = F.max_pool2d(torch.relu(x), 2)\n\
         \x20   r = F.relu(x * 2)\n\
         \x20   return a, F.max_pool2d(r, 2) + r.sum()\n\
         c = torch.compile(f)\n\
         for _ in range(4):\n\
         \x20   x = torch.randn(1, 2, 6, 6)\n\
         \x20   assert all(torch.equal(p, q) for p, q in zip(c(x), f(x)))\n\
         print('ok')\n",
    );
    let out = run(&["run", "--profile", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    let calls = |label: &str| {
        out.stderr
            .lines()
            .filter(|l| l.contains(label))
            .map(|l| l.split_whitespace().rev().nth(2).unwrap_or("").to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        calls("(run after the pooling, on its output)"),
        ["4"],
        "{}",
        out.stderr
    );
    assert_eq!(calls("max_pool2d (then relu)"), ["4"], "{}", out.stderr);
    // The second pooling and relu run as written.
    assert_eq!(calls("max_pool2d  "), ["4"], "{}", out.stderr);
}

#[test]
fn garbage_of_a_loop_of_traces_is_collected_without_gc_collect() {
    // RustPython collects only its young generation by itself; each trace's
    // graph cycles were promoted and kept (~700 objects per trace here).
    let dir = Scratch::new("trace-loop");
    let script = dir.write(
        "loop.py",
        "import gc\nimport torch\nimport torch.fx as fx\nimport torch.nn as nn\n\n\
         class Block(nn.Module):\n    def __init__(self):\n        super().__init__()\n        \
         self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4))\n\n    \
         def forward(self, x):\n        return torch.relu(self.body(x) + x)\n\n\
         model = nn.Sequential(*[Block() for _ in range(20)])\nfx.symbolic_trace(model)\n\
         gc.collect()\nbefore = len(gc.get_objects())\nfor _ in range(100):\n    fx.symbolic_trace(model)\n\
         grown = len(gc.get_objects()) - before\n\
         print('objects kept by 100 traces:', 'few' if grown < 30000 else grown)\n",
    );
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), "objects kept by 100 traces: few\n"),
        "{out:?}"
    );
}

#[test]
fn strings_with_a_lone_surrogate_are_value_errors_not_crashes() {
    // No Rust string holds a lone surrogate; op arguments, names in graphs
    // and module paths holding one used to panic the process.
    let dir = Scratch::new("surrogates");
    let script = dir.write(
        "s.py",
        "import torch\nimport torch.fx as fx\nimport torch.nn as nn\nS = '\\ud800'\n\n\
         class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        \
         self.add_module(S, nn.ReLU())\n\n    def forward(self, x):\n        return getattr(self, S)(x)\n\n\
         def rename():\n    g = fx.Graph()\n    g.placeholder('x').name = S\n\n\
         def method():\n    g = fx.Graph()\n    g.call_method(S, (g.placeholder('x'),))\n    g.python_code('self')\n\n\
         cases = [lambda: torch.einsum(S, torch.ones(2)), lambda: torch.ones(2).type(S),\n         \
         lambda: torch.nn.functional.mse_loss(torch.ones(2), torch.ones(2), reduction=S),\n         \
         lambda: fx.symbolic_trace(M()), rename, method]\n\
         for case in cases:\n    try:\n        case()\n    except ValueError as e:\n        print(e)\n",
    );
    let out = run(&["run", script.to_str().unwrap()]);
    let line = "fxvm needs UTF-8 text here, and '\\ud800' has a lone surrogate\n";
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), line.repeat(6).as_str()),
        "{out:?}"
    );
}

#[test]
fn a_global_named_with_a_lone_surrogate_does_not_stop_autowrap() {
    // The autowrap scan reads every global's name; one that is not valid
    // UTF-8 panicked it. `math.sqrt` is still recorded as a call.
    let dir = Scratch::new("surrogate-global");
    let script = dir.write(
        "g.py",
        "import math\nimport torch.fx as fx\nimport torch.nn as nn\n\n\
         globals()['\\ud800'] = math.sqrt\n\n\
         class M(nn.Module):\n    def forward(self, x):\n        return x * math.sqrt(x.dim())\n\n\
         print(fx.symbolic_trace(M()).code.strip().splitlines()[-2].strip())\n",
    );
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (Some(0), "mul = x * sqrt;  x = sqrt = None\n"),
        "{out:?}"
    );
}

#[test]
fn traced_nodes_carry_their_source_location_in_meta() {
    // Kept natively until `meta` is read (a dict per node is a tracked
    // object), as is nn_module_stack; reading, replacing and extending
    // `meta` see them as its entries, in the order they were recorded.
    let dir = Scratch::new("source-loc");
    let script = dir.write(
        "m.py",
        "import torch\nimport torch.fx as fx\nimport torch.nn as nn\n\n\
         class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(2, 2)\n\n    \
         def forward(self, x):\n        y = torch.relu(x)\n        return self.lin(y)\n\n\
         g = fx.symbolic_trace(M()).graph\nrelu, lin = list(g.nodes)[1:3]\n\
         print(relu.meta)\nprint(list(lin.meta), lin.meta['nn_module_stack'])\nprint(lin.meta['source_loc'])\n\
         relu.meta['extra'] = 1\nprint(list(relu.meta))\nrelu.meta = {}\nprint(relu.meta)\n",
    );
    assert!(script.ends_with("m.py"));
    let out = run_in(dir.path(), &["run", "m.py"]);
    assert_eq!(
        (out.status, out.stdout.as_str()),
        (
            Some(0),
            "{'source_loc': 'm.py:11'}\n['nn_module_stack', 'source_loc'] {'lin': ('lin', <class 'torch.nn.modules.linear.Linear'>)}\nm.py:12\n['source_loc', 'extra']\n{}\n"
        ),
        "{out:?}"
    );
}

/// A thousand training steps keep memory flat: graphs and saved tensors are
/// freed by backward and with their last reference (a leaked graph of this
/// model would hold ~0.3 MB a step).
#[test]
fn training_steps_keep_memory_flat() {
    let script = fxvm_tests::fixtures().join("autograd/memory.py");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert!(out.stdout.ends_with("flat\n"), "{}", out.stdout);
}

/// `grad_fn.metadata` says it is not supported rather than handing out a
/// dict that forgets what is stored in it.
#[test]
fn grad_fn_metadata_raises_not_implemented() {
    let out = run(&[
        "run",
        "-c",
        "import torch\nx = torch.ones(2, requires_grad=True)\n(x * 2).grad_fn.metadata",
    ]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .contains("NotImplementedError: grad_fn.metadata is not supported by fxvm"),
        "{}",
        out.stderr
    );
}

#[test]
fn numpy_refuses_floating_point_error_modes_it_cannot_honour() {
    // fxvm's numpy never reports floating-point errors: asking it to raise
    // them is refused (at the user's line) rather than silently ignored.
    let dir = Scratch::new("seterr");
    let script = dir.write(
        "seterr.py",
        "import numpy as np\nnp.seterr(all='ignore')\nnp.seterr(divide='raise')\n",
    );
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(1), "{out:?}");
    assert!(out.stderr.contains("seterr.py\", line 3"), "{}", out.stderr);
    assert!(
        out.stderr.trim_end().ends_with(
            "NotImplementedError: fxvm's numpy does not report floating-point errors: seterr(divide='raise')"
        ),
        "{}",
        out.stderr
    );
}
