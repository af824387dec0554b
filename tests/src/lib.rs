//! Helpers for running the built `fxvm` binary the way a user does.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `fxvm` binary of the profile these tests were built with
/// (`target/<profile>/fxvm`, two levels above the test executable).
pub fn fxvm_path() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("test executables live in target/<profile>/deps");
    let bin = profile_dir.join(format!("fxvm{}", std::env::consts::EXE_SUFFIX));
    assert!(
        bin.exists(),
        "{} is missing: build it first (`cargo build --release`), as README.md's test command does",
        bin.display()
    );
    bin
}

/// A `Command` for `fxvm` with the given arguments and no stdin.
pub fn fxvm(args: &[&str]) -> Command {
    let mut cmd = Command::new(fxvm_path());
    cmd.args(args).stdin(Stdio::null());
    cmd
}

/// What a finished `fxvm` run printed and returned.
#[derive(Debug)]
pub struct Run {
    pub status: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Run {
            status: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Runs `fxvm` with `args` and collects its output.
pub fn run(args: &[&str]) -> Run {
    fxvm(args).output().expect("spawn fxvm").into()
}

/// Runs `fxvm` in `dir` with `args` and collects its output.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    fxvm(args)
        .current_dir(dir)
        .output()
        .expect("spawn fxvm")
        .into()
}

/// A fresh scratch folder under the target directory, removed on drop.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = fxvm_path()
            .parent()
            .expect("profile dir")
            .join("scratch")
            .join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create scratch dir");
        Scratch(dir)
    }

    /// Writes `text` to `name` inside the folder (making its folders) and
    /// returns its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create scratch subfolder");
        }
        std::fs::write(&path, text).expect("write scratch file");
        path
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The repository's `fixtures/` folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

/// A unified diff of `expected` against `actual`, empty when they are equal:
/// `fxvm check`'s own diff, so CI shows a mismatch as a user would see it.
pub fn unified_diff(expected: &str, actual: &str, golden: &str) -> String {
    fxvm_tracer::diff::unified_diff(expected, actual, golden, "actual", false)
}
