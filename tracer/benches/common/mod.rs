//! What the side-by-side benches share: a timing script in `py/` run under
//! fxvm and, when a PyTorch interpreter is found (`$FXVM_TORCH_PYTHON`, else
//! `/tmp/torchref/bin/python`), under CPython + PyTorch, alternating rounds
//! so machine noise hits both alike; each case keeps its best time.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Each case's best seconds under both interpreters.
pub struct SideBySide {
    pub fxvm: BTreeMap<String, f64>,
    pub torch: BTreeMap<String, f64>,
}

/// The `name seconds` lines a timing script prints.
fn run(argv: &[String]) -> BTreeMap<String, f64> {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", argv[0]));
    assert!(
        out.status.success(),
        "{argv:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let (name, secs) = l.split_once(' ')?;
            Some((name.to_owned(), secs.trim().parse().ok()?))
        })
        .collect()
}

fn keep_best(acc: &mut BTreeMap<String, f64>, round: BTreeMap<String, f64>) {
    for (k, v) in round {
        let e = acc.entry(k).or_insert(f64::INFINITY);
        *e = e.min(v);
    }
}

/// The command lines that run `py/<script>`: `[fxvm, "run", script]`, and
/// `[python, script]` when a PyTorch interpreter is found.
#[allow(dead_code)] // Each bench binary compiles this module; not all use it.
pub fn commands(script: &str) -> (Vec<String>, Option<Vec<String>>) {
    commands_with(script, &[])
}

/// [`commands`], with `fxvm_args` (e.g. `--site-packages DIR`) before the script.
#[allow(dead_code)] // Each bench binary compiles this module; not all use it.
pub fn commands_with(script: &str, fxvm_args: &[&str]) -> (Vec<String>, Option<Vec<String>>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/py")
        .join(script)
        .to_str()
        .expect("utf-8 path")
        .to_owned();
    let mut fxvm_argv = vec![env!("CARGO_BIN_EXE_fxvm").to_owned(), "run".into()];
    fxvm_argv.extend(fxvm_args.iter().map(|a| a.to_string()));
    fxvm_argv.push(script.clone());
    let torch =
        std::env::var("FXVM_TORCH_PYTHON").unwrap_or_else(|_| "/tmp/torchref/bin/python".into());
    let torch_argv = if Path::new(&torch).exists() {
        Some(vec![torch, script])
    } else {
        println!("no PyTorch interpreter at {torch}: fxvm times only (set FXVM_TORCH_PYTHON)");
        None
    };
    (fxvm_argv, torch_argv)
}

/// Runs the two command lines for `rounds` alternating rounds.
pub fn measure(
    fxvm_argv: &[String],
    torch_argv: Option<&Vec<String>>,
    rounds: usize,
) -> SideBySide {
    let (mut ours, mut theirs) = (BTreeMap::new(), BTreeMap::new());
    for _ in 0..rounds {
        keep_best(&mut ours, run(fxvm_argv));
        if let Some(argv) = torch_argv {
            keep_best(&mut theirs, run(argv));
        }
    }
    SideBySide {
        fxvm: ours,
        torch: theirs,
    }
}
