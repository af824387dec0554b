//! `fxvm check` as a snapshot tool over a project's manifest: pending
//! snapshots, review and accept, CI mode, partitions, JUnit reports and
//! numeric snapshots, run from the built binary as a user would.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use fxvm_tests::{Run, Scratch, fixtures, run_in};

const MLP: &str = "import torch.nn as nn\n\n\nclass MLP(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.l = nn.Linear(4, 3)\n\n    def forward(self, x):\n        return self.l(x).relu()\n";

/// A project with a `[tool.fxvm]` table: three cases, one numeric.
fn project(name: &str) -> Scratch {
    let scratch = Scratch::new(name);
    let block = std::fs::read_to_string(fixtures().join("cli/gpt_block.py")).unwrap();
    scratch.write("models/block.py", &block);
    scratch.write("models/mlp.py", MLP);
    scratch.write(
        "pyproject.toml",
        "[project]\nname = \"demo\"\n\n[tool.fxvm]\nformats = [\"code\", \"graph\"]\n\n\
         [[tool.fxvm.case]]\nfile = \"models/block.py\"\n\n\
         [[tool.fxvm.case]]\nname = \"mlp\"\nfile = \"models/mlp.py\"\nformats = [\"code\", \"outputs\"]\nexample = [\"x=2x4\"]\n\n\
         [[tool.fxvm.case]]\nname = \"gelu\"\nfile = \"models/block.py\"\nfunction = \"gelu_tanh\"\nconcrete = [\"scale=2.0\"]\n",
    );
    scratch
}

fn pending_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".new"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_first_run_leaves_pending_snapshots_that_accept_takes() {
    let project = project("check-pending");
    let snapshots = project.path().join("snapshots");
    let first = run_in(&project.path().join("models"), &["check"]);
    assert_eq!(first.status, Some(1), "{}", first.stderr);
    assert!(
        first.stdout.contains(
            "FAILED: block (code): no golden ../snapshots/block.code; wrote ../snapshots/block.code.new\n"
        ),
        "paths are as seen from where fxvm ran: {}",
        first.stdout
    );
    assert!(
        first.stdout.ends_with("0 passed, 6 failed\n"),
        "{}",
        first.stdout
    );
    assert!(
        first.stderr.contains("6 pending snapshots"),
        "{}",
        first.stderr
    );
    assert_eq!(
        pending_files(&snapshots),
        [
            "block.code.new",
            "block.graph.new",
            "gelu.code.new",
            "gelu.graph.new",
            "mlp.code.new",
            "mlp.outputs.safetensors.new"
        ]
    );
    // The pending form is what `fxvm trace` prints.
    let gelu = std::fs::read_to_string(snapshots.join("gelu.code.new")).unwrap();
    let golden = std::fs::read_to_string(fixtures().join("cli/gelu_tanh.code")).unwrap();
    assert_eq!(gelu, golden);

    let accept = run_in(project.path(), &["check", "--accept"]);
    assert_eq!(accept.status, Some(0), "{}", accept.stderr);
    assert!(
        accept
            .stdout
            .contains("accepted: snapshots/mlp.outputs.safetensors\n")
    );
    assert!(accept.stdout.ends_with("6 accepted\n"), "{}", accept.stdout);
    assert!(pending_files(&snapshots).is_empty());

    let again = run_in(project.path(), &["check"]);
    assert_eq!(again.status, Some(0), "{}\n{}", again.stdout, again.stderr);
    assert_eq!(again.stdout, "6 passed, 0 failed\n");
    let nothing = run_in(project.path(), &["check", "--accept"]);
    assert_eq!(nothing.stdout, "no pending snapshots\n");
}

fn bless(project: &Scratch) {
    let out = run_in(project.path(), &["check", "--bless"]);
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("blessed: wrote snapshots/block.graph\n")
    );
}

#[test]
fn review_shows_each_difference_and_takes_an_answer_per_snapshot() {
    let project = project("check-review");
    bless(&project);
    let mlp = project.path().join("models/mlp.py");
    std::fs::write(&mlp, MLP.replace(".relu()", ".relu() * 2")).unwrap();
    let failing = run_in(project.path(), &["check"]);
    assert_eq!(failing.status, Some(1));
    assert!(
        failing
            .stdout
            .contains("-    return relu\n+    mul = relu * 2;  relu = None\n+    return mul\n"),
        "{}",
        failing.stdout
    );
    assert!(
        failing.stdout.contains(
            "outputs differ from snapshots/mlp.outputs.safetensors:\noutput: Tensor-likes are not close!\n\nMismatched elements: "
        ),
        "{}",
        failing.stdout
    );
    assert!(failing.stdout.contains("Greatest absolute difference: "));
    assert!(
        failing.stdout.ends_with("4 passed, 2 failed\n"),
        "{}",
        failing.stdout
    );

    let mut child = fxvm_tests::fxvm(&["check", "--review"])
        .current_dir(project.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(b"a\nr\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout.contains(
            "[1/2] mlp (code): snapshots/mlp.code.new\n--- snapshots/mlp.code\n+++ traced\n"
        ),
        "{stdout}"
    );
    assert!(
        stdout
            .contains("[2/2] mlp (outputs): snapshots/mlp.outputs.safetensors.new\noutputs differ")
    );
    assert!(
        stdout.ends_with("1 accepted, 1 rejected, 0 skipped\n"),
        "{stdout}"
    );
    let code = std::fs::read_to_string(project.path().join("snapshots/mlp.code")).unwrap();
    assert!(code.contains("mul = relu * 2"), "accepted: {code}");
    assert!(pending_files(&project.path().join("snapshots")).is_empty());
    let after = run_in(project.path(), &["check"]);
    assert!(
        after.stdout.ends_with("5 passed, 1 failed\n"),
        "rejected outputs still differ: {}",
        after.stdout
    );
}

#[test]
fn numeric_snapshots_compare_within_tolerances() {
    let project = project("check-outputs");
    bless(&project);
    let mlp = project.path().join("models/mlp.py");
    // A relative change of 1e-6 is within float32's default tolerance (1.3e-6).
    std::fs::write(&mlp, MLP.replace(".relu()", ".relu() * (1 + 1e-7)")).unwrap();
    let close = run_in(project.path(), &["check", "--ci"]);
    assert!(
        close.stdout.contains("FAILED: mlp (code)"),
        "{}",
        close.stdout
    );
    assert!(!close.stdout.contains("mlp (outputs)"), "{}", close.stdout);
    std::fs::write(&mlp, MLP.replace(".relu()", ".relu() * 1.01")).unwrap();
    let far = run_in(project.path(), &["check", "--ci"]);
    assert!(
        far.stdout.contains("FAILED: mlp (outputs)\n"),
        "{}",
        far.stdout
    );
    // A case may loosen its tolerances.
    let manifest = project.path().join("pyproject.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace(
            "example = [\"x=2x4\"]",
            "example = [\"x=2x4\"]\nrtol = 0.05\natol = 0.0",
        ),
    )
    .unwrap();
    let loose = run_in(project.path(), &["check", "--ci"]);
    assert!(!loose.stdout.contains("mlp (outputs)"), "{}", loose.stdout);
}

#[test]
fn ci_mode_never_writes_and_fails_on_a_missing_golden() {
    let project = project("check-ci");
    let out = run_in(project.path(), &["check", "--ci"]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stdout
            .contains("FAILED: mlp (outputs): no golden snapshots/mlp.outputs.safetensors\n"),
        "{}",
        out.stdout
    );
    assert!(
        !project.path().join("snapshots").exists(),
        "nothing written"
    );
    bless(&project);
    std::fs::write(project.path().join("models/block.py"), "syntax error(\n").unwrap();
    let out = run_in(project.path(), &["check", "--ci"]);
    assert_eq!(out.status, Some(1));
    // A case that raises fails alone; the others still pass.
    assert!(
        out.stdout
            .contains("FAILED: block (code): the trace raised\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.ends_with("2 passed, 4 failed\n"),
        "{}",
        out.stdout
    );
    assert!(out.stderr.contains("SyntaxError"), "{}", out.stderr);
    assert!(pending_files(&project.path().join("snapshots")).is_empty());
    // A golden that is not safetensors is one line, not a traceback.
    std::fs::write(
        project.path().join("snapshots/mlp.outputs.safetensors"),
        "garbage\n",
    )
    .unwrap();
    let out = run_in(project.path(), &["check", "--ci"]);
    assert!(
        out.stdout.contains(
            "FAILED: mlp (outputs): can't compare with 'snapshots/mlp.outputs.safetensors': safetensors.SafetensorError: Error while deserializing: header too large\n"
        ),
        "{}",
        out.stdout
    );
}

/// The testcases of a JUnit report: (classname, name, failure kind).
fn junit_cases(xml: &str) -> (Vec<(String, String, Option<String>)>, String) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut cases = vec![];
    let mut totals = String::new();
    loop {
        match reader.read_event().expect("well-formed JUnit XML") {
            Event::Start(e) | Event::Empty(e) => {
                let attr = |name: &str| {
                    e.try_get_attribute(name)
                        .unwrap()
                        .map(|a| a.unescape_value().unwrap().into_owned())
                };
                match e.name().as_ref() {
                    b"testsuite" => {
                        totals = format!(
                            "{} tests, {} failures, {} errors",
                            attr("tests").unwrap(),
                            attr("failures").unwrap(),
                            attr("errors").unwrap()
                        );
                    }
                    b"testcase" => {
                        cases.push((attr("classname").unwrap(), attr("name").unwrap(), None))
                    }
                    b"failure" | b"error" => {
                        let kind = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                        cases.last_mut().unwrap().2 =
                            Some(format!("{kind}: {}", attr("message").unwrap()));
                    }
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (cases, totals)
}

#[test]
fn partitions_shard_the_cases_and_junit_reports_each_snapshot() {
    let project = project("check-partition");
    bless(&project);
    std::fs::write(project.path().join("snapshots/gelu.graph"), "stale\n").unwrap();
    let mut seen = vec![];
    for k in 1..=2 {
        let report = format!("junit-{k}.xml");
        let partition = format!("{k}/2");
        let out = run_in(
            project.path(),
            &[
                "check",
                "--ci",
                "--partition",
                &partition,
                "--junit",
                &report,
            ],
        );
        let xml = std::fs::read_to_string(project.path().join(&report)).unwrap();
        let (cases, totals) = junit_cases(&xml);
        assert!(xml.contains(&format!("<testsuite name=\"fxvm check (partition {k}/2)\"")));
        if cases.iter().any(|c| c.0 == "gelu") {
            assert_eq!(out.status, Some(1));
            assert_eq!(totals, "4 tests, 1 failures, 0 errors");
            assert!(cases.contains(&(
                "gelu".into(),
                "graph".into(),
                Some("failure: differs from snapshots/gelu.graph".into())
            )));
            assert!(
                xml.contains("-stale\n+graph():"),
                "the failure carries the diff: {xml}"
            );
        } else {
            assert_eq!(out.status, Some(0), "{}", out.stdout);
        }
        seen.extend(
            cases
                .into_iter()
                .map(|(case, form, _)| format!("{case}.{form}")),
        );
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            "block.code",
            "block.graph",
            "gelu.code",
            "gelu.graph",
            "mlp.code",
            "mlp.outputs"
        ],
        "every snapshot in exactly one partition"
    );
}

#[test]
fn bad_manifests_and_flags_get_one_line_errors() {
    let scratch = Scratch::new("check-bad");
    let nothing = run_in(scratch.path(), &["check"]);
    assert_eq!(nothing.status, Some(2));
    assert!(
        nothing
            .stderr
            .starts_with("fxvm: error: no cases to check: no fxvm.toml"),
        "{}",
        nothing.stderr
    );
    scratch.write(
        "fxvm.toml",
        "[[case]]\nfile = \"m.py\"\nexamples = [\"x=2\"]\n",
    );
    let typo = run_in(scratch.path(), &["check"]);
    assert_eq!(
        typo.stderr,
        "fxvm: error: fxvm.toml:3:1: unknown field `examples`, expected one of `name`, `file`, `module`, `function`, `concrete`, `example`, `dynamic`, `formats`, `rtol`, `atol`, `seed`\n"
    );
    let partition = run_in(scratch.path(), &["check", "--partition", "3/2"]);
    assert_eq!(partition.status, Some(2));
    assert!(
        partition.stderr.contains("expected K/N with 1 <= K <= N"),
        "{}",
        partition.stderr
    );
    scratch.write("fxvm.toml", "[[case]]\nfile = \"missing.py\"\n");
    let missing = run_in(scratch.path(), &["check", "--ci"]);
    assert_eq!(missing.status, Some(1));
    assert_eq!(
        missing.stdout,
        "FAILED: missing (code): can't open file 'missing.py': No such file or directory\n0 passed, 1 failed\n"
    );
    let outputs = run_in(
        scratch.path(),
        &["check", "--ci", "fxvm.toml", "--example", "x=2"],
    );
    assert_eq!(outputs.status, Some(2));
    assert!(
        outputs.stderr.contains("gives each case its own"),
        "{}",
        outputs.stderr
    );
}

#[test]
fn outputs_need_example_inputs() {
    let project = project("check-no-examples");
    std::fs::write(
        project.path().join("fxvm.toml"),
        "[[case]]\nfile = \"models/mlp.py\"\nformats = [\"outputs\"]\n",
    )
    .unwrap();
    let out: Run = run_in(project.path(), &["check"]);
    assert_eq!(out.status, Some(1));
    assert!(
        out.stdout.contains("FAILED: mlp (outputs): the outputs format runs the model on its example inputs: give them with --example NAME=SHAPE[:DTYPE]"),
        "{}",
        out.stdout
    );
}

#[test]
fn the_readme_example_passes_against_pytorch_goldens() {
    // fixtures/check's goldens come from torch.fx and PyTorch (regen.sh):
    // the traced forms byte for byte, the outputs within the case's tolerances.
    let out = run_in(&fixtures().join("check"), &["check", "--ci"]);
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "4 passed, 0 failed\n");
    // A folder holding a manifest is read as that manifest.
    let out = run_in(
        &fixtures(),
        &["check", "check", "--ci", "--junit", "/dev/null"],
    );
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    assert_eq!(out.stdout, "4 passed, 0 failed\n");
}

#[test]
fn a_single_script_checks_outputs_with_tolerances_from_the_command_line() {
    let scratch = Scratch::new("check-single-outputs");
    let script = scratch.write("mlp.py", MLP);
    let script = script.to_str().unwrap();
    let golden = scratch.path().join("mlp.outputs.safetensors");
    let golden = golden.to_str().unwrap();
    let check = |extra: &[&str]| {
        let mut args = vec![
            "check",
            script,
            "--format",
            "outputs",
            "--expect",
            golden,
            "--example",
            "x=2x4",
            "-j",
            "1",
        ];
        args.extend_from_slice(extra);
        fxvm_tests::run(&args)
    };
    let bless = check(&["--bless"]);
    assert_eq!(
        bless.stdout,
        format!("blessed: wrote {golden}\n"),
        "{}",
        bless.stderr
    );
    let same = check(&[]);
    assert_eq!(same.stdout, format!("ok: {script} matches {golden}\n"));
    std::fs::write(script, MLP.replace(".relu()", ".relu() * 1.01")).unwrap();
    let far = check(&["--ci"]);
    assert_eq!(far.status, Some(1));
    assert!(
        far.stdout.contains("Greatest relative difference: "),
        "{}",
        far.stdout
    );
    let loose = check(&["--ci", "--rtol", "0.05", "--atol", "0"]);
    assert_eq!(loose.status, Some(0), "{}", loose.stdout);
}

#[test]
fn each_case_starts_from_torch_defaults_whatever_the_case_before_it_set() {
    let scratch = Scratch::new("check-defaults");
    scratch.write(
        "double.py",
        "import torch\nimport torch.nn as nn\n\ntorch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n\n\nclass D(nn.Module):\n    def forward(self, x):\n        return x + 1\n",
    );
    scratch.write("mlp.py", MLP);
    scratch.write(
        "fxvm.toml",
        "[[case]]\nfile = \"double.py\"\n\n[[case]]\nfile = \"mlp.py\"\nformats = [\"outputs\"]\nexample = [\"x=2x4\"]\n",
    );
    // One worker renders both cases, in order, in one interpreter.
    let out = run_in(scratch.path(), &["check", "--bless", "-j", "1"]);
    assert_eq!(out.status, Some(0), "{}\n{}", out.stdout, out.stderr);
    let golden = std::fs::read(scratch.path().join("snapshots/mlp.outputs.safetensors")).unwrap();
    let header = String::from_utf8_lossy(&golden[8..64]);
    assert!(header.contains("\"dtype\":\"F32\""), "{header}");
}
