//! pytest (from PyPI, pure Python) runs a suite under fxvm as under CPython:
//! collection, fixtures, parametrize, marks, assertion rewriting and the
//! failure report. The package comes from `fixtures/pytest/install.sh`
//! (`.ci/run` runs it) in `target/pytest-site`, or from `FXVM_PYTEST_SITE`.

use std::path::PathBuf;

use fxvm_tests::{fixtures, unified_diff};

fn pytest_site() -> Option<PathBuf> {
    let site = match std::env::var_os("FXVM_PYTEST_SITE") {
        Some(dir) => PathBuf::from(dir),
        None => fixtures().join("../target/pytest-site"),
    };
    site.join("pytest").is_dir().then_some(site)
}

/// Object addresses and the run time differ between runs and interpreters.
fn normalize(report: &str) -> String {
    let mut out = String::with_capacity(report.len());
    let mut rest = report;
    while let Some(at) = rest.find(" at 0x") {
        let (head, tail) = rest.split_at(at + " at 0x".len());
        out.push_str(head);
        out.push('…');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out.lines()
        .map(strip_run_time)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `1 failed, 2 passed in 1.98s` without ` in 1.98s`.
fn strip_run_time(line: &str) -> &str {
    if let Some(at) = line.rfind(" in ")
        && let Some(seconds) = line[at + 4..].strip_suffix('s')
        && seconds.parse::<f64>().is_ok()
    {
        return &line[..at];
    }
    line
}

#[test]
fn a_pytest_suite_reports_as_under_cpython() {
    let Some(site) = pytest_site() else {
        // Without network access to PyPI there is no pytest to run.
        eprintln!("skipped: pytest is not installed (run fixtures/pytest/install.sh)");
        return;
    };
    let dir = fixtures().join("pytest");
    let golden = dir.join("suite.out");
    let expected = std::fs::read_to_string(&golden).expect("golden file");
    let out = fxvm_tests::fxvm(&[
        "run",
        "--site-packages",
        site.to_str().unwrap(),
        "-m",
        "pytest",
        "-q",
        "-rfEsxX",
        "suite",
    ])
    .current_dir(&dir)
    .env("COLUMNS", "80")
    // pytest stops shortening its summary lines when it sees a CI runner.
    .env_remove("CI")
    .env_remove("BUILD_NUMBER")
    .output()
    .expect("spawn fxvm");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // pytest's status for a run with failing tests.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = unified_diff(
        &normalize(&expected),
        &normalize(&stdout),
        &golden.display().to_string(),
    );
    assert!(
        diff.is_empty(),
        "pytest under fxvm differs from CPython's:\n{diff}"
    );
}

#[test]
fn normalizing_drops_addresses_and_the_run_time() {
    assert_eq!(
        normalize("<A object at 0x7fa5>.x\n1 failed, 2 passed in 1.98s"),
        "<A object at 0x…>.x\n1 failed, 2 passed"
    );
}

#[test]
fn unittest_discovery_and_expecttest_accept_rewrite_the_test_file() {
    let Some(site) = pytest_site() else {
        eprintln!("skipped: expecttest is not installed (run fixtures/pytest/install.sh)");
        return;
    };
    let dir = fxvm_tests::Scratch::new("expecttest");
    let test = dir.write(
        "test_inline.py",
        "import expecttest\n\n\nclass T(expecttest.TestCase):\n    def test_sum(self):\n        self.assertExpectedInline(str(sum(range(4))), \"\"\"7\"\"\")\n",
    );
    let run = |accept: bool| {
        let mut cmd = fxvm_tests::fxvm(&["run", "-m", "unittest"]);
        // The rewrite keeps the file's size within the same second: a cached
        // module would look fresh (to CPython's cache check as to fxvm's).
        cmd.current_dir(dir.path())
            .env("PYTHONPATH", &site)
            .env("PYTHONDONTWRITEBYTECODE", "1");
        if accept {
            cmd.env("EXPECTTEST_ACCEPT", "1");
        }
        cmd.output().expect("spawn fxvm")
    };
    let failing = run(false);
    assert_eq!(failing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failing.stderr).contains("FAILED (failures=1)"));
    let accepted = run(true);
    assert_eq!(accepted.status.code(), Some(0), "{accepted:?}");
    let text = std::fs::read_to_string(&test).unwrap();
    assert!(
        text.contains("str(sum(range(4))), \"\"\"6\"\"\")"),
        "{text}"
    );
    assert_eq!(run(false).status.code(), Some(0));
}
