//! `fxvm trace` and `fxvm check`, run from the built binary as a user would.

use fxvm_tests::{Scratch, fixtures, run, run_in};

fn cli(name: &str) -> String {
    fixtures()
        .join("cli")
        .join(name)
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(cli(name)).expect("golden")
}

#[test]
fn trace_prints_torch_fx_code_and_graph_of_the_only_buildable_module() {
    let out = run(&["trace", &cli("gpt_block.py")]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, golden("gpt_block.code"));
    let out = run(&["trace", &cli("gpt_block.py"), "--format", "graph"]);
    assert_eq!(out.stdout, golden("gpt_block.graph"));
    let out = run(&[
        "trace",
        &cli("gpt_block.py"),
        "--function",
        "gelu_tanh",
        "--concrete",
        "scale=2.0",
    ]);
    assert_eq!(out.stdout, golden("gelu_tanh.code"));
}

#[test]
fn trace_writes_other_forms_and_to_files() {
    let scratch = Scratch::new("trace-out");
    let out_file = scratch.path().join("block.txt");
    let out = run(&[
        "trace",
        &cli("gpt_block.py"),
        "--module",
        "Block(Config(dim=8, heads=4))",
        "--format",
        "tabular",
        "-o",
        out_file.to_str().unwrap(),
    ]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    let table = std::fs::read_to_string(&out_file).unwrap();
    assert!(table.starts_with("opcode         name"), "{table}");
    assert!(table.contains("call_module    attn_qkv"), "{table}");
    let out = run(&["trace", &cli("gpt_block.py"), "--format", "readable"]);
    assert!(
        out.stdout.starts_with("class Block(torch.nn.Module):\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "    def forward(self, x):\n        # No stacktrace found for following nodes\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn check_passes_fails_with_a_diff_and_blesses() {
    let scratch = Scratch::new("check");
    let script = scratch.write(
        "model.py",
        &std::fs::read_to_string(cli("gpt_block.py")).unwrap(),
    );
    let script = script.to_str().unwrap();
    let expect = scratch.path().join("model.code");
    let expect_str = expect.to_str().unwrap();

    // A missing golden fails and leaves the traced form pending beside it.
    let missing = run(&["check", script, "--expect", expect_str]);
    assert_eq!(missing.status, Some(1));
    assert!(
        missing.stdout.contains(&format!(
            "FAILED: {script} (code): no golden {expect_str}; wrote {expect_str}.new"
        )),
        "{}",
        missing.stdout
    );
    assert_eq!(
        std::fs::read_to_string(format!("{expect_str}.new")).unwrap(),
        golden("gpt_block.code")
    );

    let bless = run(&["check", script, "--expect", expect_str, "--bless"]);
    assert_eq!(bless.status, Some(0), "{}", bless.stderr);
    assert!(
        !std::path::Path::new(&format!("{expect_str}.new")).exists(),
        "blessing drops the pending snapshot"
    );
    assert_eq!(
        std::fs::read_to_string(&expect).unwrap(),
        golden("gpt_block.code")
    );

    let pass = run(&["check", script, "--expect", expect_str]);
    assert_eq!(pass.status, Some(0), "{}", pass.stderr);
    assert!(pass.stdout.starts_with("ok: "), "{}", pass.stdout);

    let edited = golden("gpt_block.code").replace("ln = self.ln(x)", "ln = self.ln(y)");
    std::fs::write(&expect, edited).unwrap();
    let fail = run(&["check", script, "--expect", expect_str]);
    assert_eq!(fail.status, Some(1));
    assert!(
        fail.stdout
            .contains(&format!("--- {expect_str}\n+++ traced\n")),
        "{}",
        fail.stdout
    );
    assert!(
        fail.stdout
            .contains("\n-    ln = self.ln(y)\n+    ln = self.ln(x)\n"),
        "{}",
        fail.stdout
    );
    assert!(
        !fail.stdout.contains('\x1b'),
        "no colour when stdout is not a terminal"
    );
}

#[test]
fn check_of_a_directory_summarises() {
    let out = run(&["check", &cli("")]);
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.ends_with("2 passed, 0 failed\n"),
        "{}",
        out.stdout
    );

    let scratch = Scratch::new("check-dir");
    scratch.write(
        "a.py",
        &std::fs::read_to_string(cli("gpt_block.py")).unwrap(),
    );
    scratch.write("a.code", "stale\n");
    scratch.write("a.graph", &golden("gpt_block.graph"));
    // A script that once overflowed the parser's stack and killed the run.
    scratch.write(
        "b.py",
        &format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000)),
    );
    scratch.write("b.code", "x\n");
    let out = run_in(scratch.path(), &["check", "."]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stdout.contains("FAILED: ./a.py (code)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("FAILED: ./b.py (code): the trace raised"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("1 passed, 2 failed\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn mistakes_get_one_line_errors() {
    let scratch = Scratch::new("trace-errors");
    let two = scratch.write("two.py", "import torch.nn as nn\nclass A(nn.Module):\n    def forward(self, x):\n        return x\nclass B(nn.Module):\n    def forward(self, x):\n        return -x\nclass C(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n");
    let none = scratch.write("none.py", "x = 1\n");
    let raises = scratch.write("raises.py", "import torch.nn as nn\nclass M(nn.Module):\n    def forward(self, x):\n        if x.sum() > 0:\n            return x\n        return -x\n");
    let two = two.to_str().unwrap();
    let cases: [(&[&str], u8, &str); 6] = [
        (
            &["trace", "missing.py"],
            2,
            "fxvm: error: can't open file 'missing.py': No such file or directory",
        ),
        (
            &["trace", two],
            2,
            "has several nn.Module subclasses that can be built without arguments: A, B; choose one with --module EXPR",
        ),
        (
            &["trace", two, "--module", "A("],
            2,
            "--module 'A(' is not an expression",
        ),
        (
            &["trace", two, "--function", "nope"],
            2,
            "has no function 'nope'",
        ),
        (&["trace", none.to_str().unwrap()], 2, "nothing to trace in"),
        (
            &["trace", two, "--module", "A()", "--concrete", "x"],
            2,
            "--concrete 'x' is not NAME=VALUE",
        ),
    ];
    for (args, status, message) in cases {
        let out = run(args);
        assert_eq!(
            out.status,
            Some(i32::from(status)),
            "{args:?}: {}",
            out.stderr
        );
        assert_eq!(out.stderr.lines().count(), 1, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
    }
    let out = run(&["trace", raises.to_str().unwrap()]);
    assert_eq!(out.status, Some(1));
    assert!(out.stderr.contains("line 4, in forward"), "{}", out.stderr);
    assert!(
        out.stderr.trim_end().ends_with(
            "TraceError: symbolically traced variables cannot be used as inputs to control flow"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn help_names_the_built_in_packages() {
    let out = run(&["--help"]);
    assert_eq!(out.status, Some(0));
    for package in ["torch", "numpy", "safetensors"] {
        assert!(out.stdout.contains(package), "{}", out.stdout);
    }
}

#[test]
fn each_command_has_help_with_examples() {
    for command in ["trace", "check", "lint"] {
        let out = run(&[command, "--help"]);
        assert_eq!(out.status, Some(0));
        assert!(
            out.stdout.contains("Examples:"),
            "{command}: {}",
            out.stdout
        );
    }
}

#[test]
fn lint_reports_every_untraceable_construct_with_its_position() {
    let file = cli("untraceable.py");
    let out = run(&["lint", &file]);
    assert_eq!(out.status, Some(1), "{}", out.stderr);
    let positions: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            l.strip_prefix(&format!("{file}:"))
                .expect("file prefix")
                .splitn(3, ':')
                .take(2)
                .collect::<Vec<_>>()
                .join(":")
        })
        .collect();
    assert_eq!(
        positions,
        [
            "15:12", "17:15", "19:13", "20:17", "21:32", "22:20", "24:9", "28:16", "29:28", "30:23"
        ],
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(":15:12: `if` depends on the traced value 'h'"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(":19:13: `len()` of the traced value 'h' needs a concrete value"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains(":24:9: `try` around code on the traced value 'h'"),
        "{}",
        out.stdout
    );

    let clean = run(&["lint", &cli("gpt_block.py")]);
    assert_eq!((clean.status, clean.stdout.as_str()), (Some(0), ""));

    let scratch = Scratch::new("lint");
    let bad = scratch.write(
        "bad.py",
        "class M:\n    def forward(self, x)\n        return x\n",
    );
    let out = run(&["lint", bad.to_str().unwrap()]);
    assert_eq!(out.status, Some(2));
    assert!(
        out.stderr
            .trim_end()
            .ends_with("bad.py:2:25: syntax error: Expected `:`, found newline"),
        "{}",
        out.stderr
    );
    let missing = run(&["lint", "missing.py"]);
    assert_eq!(missing.status, Some(2));
    assert_eq!(
        missing.stderr.trim_end(),
        "fxvm: error: can't open file 'missing.py': No such file or directory"
    );
}

#[test]
fn trace_into_a_closed_pipe_ends_quietly() {
    // `fxvm trace m.py | head -c0`: the reader is gone before anything is written.
    let mut child = fxvm_tests::fxvm(&["trace", &cli("gpt_block.py")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn fxvm");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("wait for fxvm");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn trace_sends_what_the_model_prints_to_stderr() {
    let scratch = Scratch::new("print_in_forward");
    let script = scratch.write(
        "noisy.py",
        "import torch\n\nclass Noisy(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n        print('building')\n\n    def forward(self, x):\n        print('tracing')\n        return x.relu()\n",
    );
    let out = run(&["trace", script.to_str().unwrap(), "--format", "graph"]);
    assert_eq!(out.status, Some(0), "{out:?}");
    assert!(
        !out.stdout.contains("building") && !out.stdout.contains("tracing"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains("building\n") && out.stderr.contains("tracing\n"),
        "{}",
        out.stderr
    );
    assert!(out.stdout.starts_with("graph():"), "{}", out.stdout);
}

#[test]
fn a_model_whose_init_raises_shows_the_users_traceback() {
    let scratch = Scratch::new("init_raises");
    let file = scratch.write(
        "badinit.py",
        "import torch.nn as nn\n\n\nclass Bad(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.l = nn.Linear(n, undefined_name)\n",
    );
    let out = run(&["trace", file.to_str().unwrap(), "--module", "Bad(3)"]);
    assert_eq!(out.status, Some(1), "{out:?}");
    let expected_tail = format!(
        "Traceback (most recent call last):\n  File \"--module\", line 1, in <module>\n    Bad(3)\n    ~~~^^^\n  File \"{}\", line 7, in __init__\n",
        file.display()
    );
    assert!(out.stderr.starts_with(&expected_tail), "{}", out.stderr);
    assert!(
        out.stderr
            .trim_end()
            .ends_with("NameError: name 'undefined_name' is not defined"),
        "{}",
        out.stderr
    );
    // A mistake in the expression itself stays a one-line usage error.
    let out = run(&["trace", file.to_str().unwrap(), "--module", "Bax(3)"]);
    assert_eq!(out.status, Some(2));
    assert_eq!(
        out.stderr.trim_end(),
        "fxvm: error: --module 'Bax(3)' failed: NameError: name 'Bax' is not defined"
    );
}

/// `--example`/`--dynamic`: a length assert and a causal mask sliced by
/// the traced length trace, with symbolic shapes in the readable form and
/// the guard (file:line) after it; bad specs are one-line errors.
#[test]
fn trace_with_example_shapes_prints_symbolic_shapes_and_guards() {
    // Beside `fixtures/cli`, whose goldens `fxvm check DIR` traces without examples.
    let shapes = fixtures().join("shapes");
    let script = shapes
        .join("causal_lm.py")
        .to_str()
        .expect("utf-8 path")
        .to_owned();
    let out = run(&[
        "trace",
        &script,
        "--example",
        "idx=2x8:int64",
        "--dynamic",
        "idx:1",
        "--format",
        "readable",
    ]);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(
        out.stdout.replace(&script, "causal_lm.py"),
        std::fs::read_to_string(shapes.join("causal_lm.readable")).expect("golden")
    );
    // Without examples, torch.fx's own error at the assert.
    let out = run(&["trace", &script]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.contains("causal_lm.py\", line 20") && out.stderr.contains("TraceError"),
        "{}",
        out.stderr
    );
    for (args, message) in [
        (
            &["--example", "idx=2xq"][..],
            "fxvm: error: --example 'idx=2xq' is not NAME=SHAPE[:DTYPE[:HIGH]] (e.g. idx=2x8:int64:100)\n",
        ),
        (
            &["--example", "idx=2x8:foo"][..],
            "fxvm: error: --example 'idx=2x8:foo': 'foo' is not a dtype (e.g. float32, int64)\n",
        ),
        (
            &["--example", "idx=2x8", "--dynamic", "idx:5"][..],
            "fxvm: error: --dynamic 'idx:5': idx has 2 dims\n",
        ),
        (
            &["--example", "idx=2x8", "--dynamic", "x:0"][..],
            "fxvm: error: --dynamic 'x:0' is not NAME:DIM[,DIM] for an --example input\n",
        ),
    ] {
        let mut argv = vec!["trace", script.as_str()];
        argv.extend_from_slice(args);
        let out = run(&argv);
        assert_eq!(out.status, Some(2), "{args:?}: {out:?}");
        assert_eq!(out.stderr, message);
    }
}

/// Node names and `(from, to)` edges of an SVG picture, parsed as XML (a
/// parse error fails the test: the file must be well-formed).
fn svg_graph(svg: &str) -> (Vec<String>, Vec<(String, String)>) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut nodes, mut edges, mut depth) = (vec![], vec![], 0i64);
    let attr = |e: &quick_xml::events::BytesStart, key: &[u8]| -> Option<String> {
        e.attributes()
            .map(|a| a.expect("attribute"))
            .find(|a| a.key.as_ref() == key)
            .map(|a| a.unescape_value().expect("escaped value").into_owned())
    };
    loop {
        match reader.read_event().expect("well-formed SVG") {
            Event::Eof => break,
            Event::Start(e) => {
                depth += 1;
                if e.name().as_ref() == b"g"
                    && attr(&e, b"class").is_some_and(|c| c.starts_with("node "))
                {
                    nodes.push(attr(&e, b"data-name").expect("data-name"));
                }
            }
            Event::End(_) => depth -= 1,
            Event::Empty(e) if attr(&e, b"class").as_deref() == Some("edge") => {
                edges.push((
                    attr(&e, b"data-from").unwrap(),
                    attr(&e, b"data-to").unwrap(),
                ));
            }
            _ => {}
        }
    }
    assert_eq!(depth, 0, "unbalanced SVG");
    (nodes, edges)
}

/// The DOT text's node names (weights excluded: their names have a dot)
/// and edges between graph nodes (which are `node.users`).
fn dot_graph(dot: &str) -> (Vec<String>, Vec<(String, String)>) {
    let unquote = |s: &str| s.trim().trim_matches('"').to_owned();
    let mut nodes = vec![];
    let mut edges = vec![];
    for line in dot.lines() {
        if let Some((a, b)) = line.strip_suffix(';').and_then(|l| l.split_once(" -> ")) {
            if !a.contains('.') {
                edges.push((unquote(a), unquote(b)));
            }
            continue;
        }
        match line.split_once(" [label=") {
            Some((name, _)) if !name.contains('.') => nodes.push(unquote(name)),
            _ => {}
        }
    }
    (nodes, edges)
}

#[test]
fn trace_draws_the_graph_as_dot_svg_and_html() {
    let model = cli("resnet50.py");
    let dot = run(&["trace", &model, "--format", "dot"]);
    assert_eq!(dot.status, Some(0), "{}", dot.stderr);
    assert!(
        dot.stdout.starts_with("digraph ResNet50 {\nrankdir=TB;\n"),
        "{}",
        &dot.stdout[..80]
    );
    let (dot_nodes, dot_edges) = dot_graph(&dot.stdout);
    assert_eq!(dot_nodes.len(), 177);

    let svg = run(&[
        "trace",
        &model,
        "--format",
        "svg",
        "--example",
        "x=1x3x64x64",
    ]);
    assert_eq!(svg.status, Some(0), "{}", svg.stderr);
    let (nodes, mut edges) = svg_graph(&svg.stdout);
    // Every node drawn once, every edge is a use, in both pictures.
    assert_eq!(nodes, dot_nodes);
    let mut expected = dot_edges.clone();
    expected.sort();
    edges.sort();
    assert_eq!(edges, expected);
    // Labels carry the target, the shape from the example and the user's line.
    assert!(
        svg.stdout.contains(">layer1.0.conv1: Conv2d</text>"),
        "module targets"
    );
    assert!(svg.stdout.contains(">f32[1, 16, 16, 16]</text>"), "shapes");
    assert!(
        svg.stdout.contains(">resnet50.py:22</text>"),
        "source lines"
    );
    assert!(svg.stdout.contains("class=\"node op-call_module\""));

    let html = run(&[
        "trace",
        &model,
        "--format",
        "html",
        "--example",
        "x=1x3x64x64",
    ]);
    assert_eq!(html.status, Some(0), "{}", html.stderr);
    let page = &html.stdout;
    assert!(page.starts_with("<!DOCTYPE html>") && page.trim_end().ends_with("</html>"));
    assert_eq!(page.matches("<tr data-name=").count(), 177);
    // The module tree folds by path: layer1 holds its three bottlenecks.
    assert!(page.contains("<summary>layer1 <span class=\"count\">(32)</span></summary>"));
    // Self-contained: nothing is fetched (the SVG namespace is a name, not a fetch).
    assert!(!page.contains("src=") && !page.contains("href=\"http"));
    let start = page.find("<svg").expect("svg in page");
    let end = page.find("</svg>").expect("svg end") + "</svg>".len();
    assert_eq!(svg_graph(&page[start..end]).0.len(), 177);
}

#[test]
fn html_pictures_open_in_a_browser() {
    let Some(browser) = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
    else {
        eprintln!("skipped: no chromium on PATH (apt-get install chromium to run this check)");
        return;
    };
    let scratch = Scratch::new("picture");
    for model in ["resnet50", "gpt_block"] {
        let page = scratch.path().join(format!("{model}.html"));
        let shot = scratch.path().join(format!("{model}.png"));
        let script = cli(&format!("{model}.py"));
        let out = run(&[
            "trace",
            &script,
            "--format",
            "html",
            "-o",
            page.to_str().unwrap(),
        ]);
        assert_eq!(out.status, Some(0), "{}", out.stderr);
        let status = std::process::Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--window-size=1200,900",
            ])
            .arg(format!("--screenshot={}", shot.display()))
            .arg(&page)
            .output()
            .expect("browser runs");
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let png = std::fs::read(&shot).expect("screenshot written");
        assert_eq!(&png[1..4], b"PNG");
        // A blank page compresses to a few KB; boxes, text and edges do not.
        assert!(
            png.len() > 30_000,
            "{model}: screenshot of {} bytes looks blank",
            png.len()
        );
    }
}

#[test]
fn check_of_a_picture_lists_the_nodes_that_changed() {
    let scratch = Scratch::new("check-structure");
    let source = std::fs::read_to_string(cli("gpt_block.py")).unwrap();
    let script = scratch.write("model.py", &source);
    let script = script.to_str().unwrap();
    for (format, added) in [
        ("svg", "+ relu  call_function torch.relu\n"),
        (
            "dot",
            "+ relu  {name=%relu|op_code=call_function\\n|target=torch.relu\\n|num_users=1\\n}\n",
        ),
        (
            "graph",
            "+ relu  call_function[target=torch.relu](args = (%attn_proj,), kwargs = {})\n",
        ),
    ] {
        std::fs::write(script, &source).unwrap();
        let golden = scratch.path().join(format!("model.{format}"));
        let golden = golden.to_str().unwrap();
        let bless = run(&[
            "check", script, "--format", format, "--expect", golden, "--bless",
        ]);
        assert_eq!(bless.status, Some(0), "{}", bless.stderr);
        let edited = source.replace(
            "return x + self.attn(self.ln(x))",
            "return x + torch.relu(self.attn(self.ln(x)))",
        );
        assert_ne!(edited, source);
        std::fs::write(script, edited).unwrap();
        let fail = run(&["check", script, "--format", format, "--expect", golden]);
        assert_eq!(fail.status, Some(1), "{format}: {}", fail.stderr);
        assert!(
            fail.stdout.contains("+++ traced\n"),
            "{format}: the text diff comes first"
        );
        assert!(
            fail.stdout.contains("structure: 1 nodes added, 0 removed"),
            "{format}: {}",
            fail.stdout
        );
        assert!(fail.stdout.contains(added), "{format}: {}", fail.stdout);
    }
}
