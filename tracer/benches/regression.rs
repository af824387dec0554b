//! Regression testing's wall times, side by side in one run.
//!
//! `cargo bench -p fxvm-tracer --bench regression` builds a project of 100
//! small models (two forms each), blesses it, then times `fxvm check --ci`
//! with two workers and with one, and — when pytest is installed in
//! `target/pytest-site` (`fixtures/pytest/install.sh`) — a 10-test pytest
//! suite under fxvm and under CPython (`python3`) with the same pytest.
//! Rounds alternate so machine noise hits all alike; medians are shown.
//! Targets: 100 cases in ≤ 0.5 s on 2 cores; pytest ≤ 2× CPython's wall time.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 9;
const CASES: usize = 100;

const SUITE: &str = r#"import pytest


@pytest.fixture
def numbers():
    return [3, 1, 2]


@pytest.mark.parametrize("a,b,total", [(1, 2, 3), (2, 2, 4), (5, 5, 10)])
def test_sum(a, b, total):
    assert a + b == total


def test_sorted(numbers):
    assert sorted(numbers) == [1, 2, 3]


def test_approx():
    assert 0.1 + 0.2 == pytest.approx(0.3)


def test_raises():
    with pytest.raises(ZeroDivisionError, match="division"):
        1 / 0


def test_tmp_path(tmp_path):
    (tmp_path / "a.txt").write_text("hi")
    assert (tmp_path / "a.txt").read_text() == "hi"


class TestGroup:
    def test_one(self):
        assert "x" in "xyz"

    def test_two(self, numbers):
        assert len(numbers) == 3


def test_dict():
    assert {"a": 1} == dict(a=1)
"#;

fn project(dir: &Path) {
    let models = dir.join("models");
    std::fs::create_dir_all(&models).expect("create the project");
    let mut manifest = String::from("formats = [\"code\", \"graph\"]\n");
    for i in 0..CASES {
        let act = ["relu", "tanh", "sigmoid", "nn.functional.gelu"][i % 4];
        let n = 2 + i % 3;
        let layers: String = (0..n)
            .map(|j| format!("        self.l{j} = nn.Linear(8, 8)\n"))
            .collect();
        let calls: String = (0..n)
            .map(|j| format!("        x = torch.{act}(self.l{j}(x))\n"))
            .collect();
        std::fs::write(
            models.join(format!("m{i}.py")),
            format!(
                "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n    def __init__(self):\n        super().__init__()\n{layers}\n    def forward(self, x):\n{calls}        return x\n"
            ),
        )
        .expect("write a model");
        manifest.push_str(&format!("\n[[case]]\nfile = \"models/m{i}.py\"\n"));
    }
    std::fs::write(dir.join("fxvm.toml"), manifest).expect("write the manifest");
    std::fs::write(dir.join("test_suite.py"), SUITE).expect("write the suite");
}

/// One command timed in every round.
struct Row {
    name: &'static str,
    argv: Vec<String>,
    /// Import pytest from here (`PYTHONPATH`).
    site: Option<PathBuf>,
}

fn measure(row: &Row, dir: &Path) -> Duration {
    let start = Instant::now();
    let mut cmd = Command::new(&row.argv[0]);
    cmd.args(&row.argv[1..])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(site) = &row.site {
        cmd.env("PYTHONPATH", site);
    }
    // Both interpreters cache compiled modules, as users run them.
    cmd.env_remove("PYTHONDONTWRITEBYTECODE");
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", row.argv[0]));
    let wall = start.elapsed();
    assert!(status.success(), "{:?} failed: {status}", row.argv);
    wall
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn argv(program: &str, args: &[&str]) -> Vec<String> {
    std::iter::once(program)
        .chain(args.iter().copied())
        .map(str::to_owned)
        .collect()
}

fn main() {
    let fxvm = env!("CARGO_BIN_EXE_fxvm");
    let dir = std::env::temp_dir().join(format!("fxvm-regression-{}", std::process::id()));
    project(&dir);
    let site = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/pytest-site");
    let bless = Row {
        name: "bless",
        argv: argv(fxvm, &["check", "--bless"]),
        site: None,
    };
    measure(&bless, &dir);

    let mut rows = vec![
        Row {
            name: "fxvm check: 100 cases, -j 2",
            argv: argv(fxvm, &["check", "--ci", "-j", "2"]),
            site: None,
        },
        Row {
            name: "fxvm check: 100 cases, -j 1",
            argv: argv(fxvm, &["check", "--ci", "-j", "1"]),
            site: None,
        },
    ];
    let pytest = [
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "test_suite.py",
    ];
    if site.join("pytest").is_dir() {
        rows.push(Row {
            name: "pytest, 10 tests: CPython",
            argv: argv("python3", &pytest),
            site: Some(site.clone()),
        });
        rows.push(Row {
            name: "pytest, 10 tests: fxvm",
            argv: argv(fxvm, &[&["run"][..], &pytest[..]].concat()),
            site: Some(site),
        });
    } else {
        println!(
            "(pytest is not in target/pytest-site: run fixtures/pytest/install.sh for the pytest rows)"
        );
    }
    let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); rows.len()];
    for _ in 0..ROUNDS {
        for (i, row) in rows.iter().enumerate() {
            walls[i].push(measure(row, &dir));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);

    println!("{:<32} {:>10} {:>8}", "command", "median", "ratio");
    let medians: Vec<f64> = walls.into_iter().map(median).collect();
    for (i, row) in rows.iter().enumerate() {
        // fxvm check against the target (0.5 s); pytest under fxvm against CPython's.
        let reference = match i {
            0 | 1 => 0.5,
            3 => medians[2],
            _ => medians[i],
        };
        println!(
            "{:<32} {:>8.0}ms {:>7.2}x",
            row.name,
            medians[i] * 1e3,
            medians[i] / reference
        );
    }
    println!("(ratios: fxvm check to the 0.5 s target; pytest under fxvm to CPython)");
}
