//! The torch.fx IR, fxvm side by side with real torch.fx in one run.
//!
//! `cargo bench -p fxvm-tracer --bench fx_graph` runs `py/fx_graph.py` (build
//! a 10,000-node chain graph, `str(graph)`, `graph.python_code()`) under fxvm
//! and, when a PyTorch interpreter is found (`$FXVM_TORCH_PYTHON`, else
//! `/tmp/torchref/bin/python`), under CPython + torch.fx, alternating rounds
//! so machine noise hits both alike. Target: total at most 0.5× torch.fx's.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

const ROUNDS: usize = 3;

fn run(argv: &[&str]) -> BTreeMap<String, f64> {
    let out = Command::new(argv[0])
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

fn main() {
    let fxvm = env!("CARGO_BIN_EXE_fxvm");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/py/fx_graph.py");
    let script = script.to_str().expect("utf-8 path");
    let torch =
        std::env::var("FXVM_TORCH_PYTHON").unwrap_or_else(|_| "/tmp/torchref/bin/python".into());
    let have_torch = Path::new(&torch).exists();
    if !have_torch {
        println!("no PyTorch interpreter at {torch}: fxvm times only (set FXVM_TORCH_PYTHON)");
    }
    let (mut ours, mut theirs): (BTreeMap<String, f64>, BTreeMap<String, f64>) =
        (BTreeMap::new(), BTreeMap::new());
    for _ in 0..ROUNDS {
        for (acc, argv) in [
            (&mut ours, vec![fxvm, "run", script]),
            (&mut theirs, vec![torch.as_str(), script]),
        ] {
            if argv[0] == torch && !have_torch {
                continue;
            }
            for (k, v) in run(&argv) {
                let e = acc.entry(k).or_insert(f64::INFINITY);
                *e = e.min(v);
            }
        }
    }
    println!(
        "{:<9} {:>10} {:>10} {:>8}",
        "case", "fxvm", "torch.fx", "ratio"
    );
    for case in ["build", "print", "codegen", "total"] {
        let t = ours[case];
        match theirs.get(case) {
            Some(&p) => println!(
                "{case:<9} {:>8.1}ms {:>8.1}ms {:>7.2}×",
                t * 1e3,
                p * 1e3,
                t / p
            ),
            None => println!("{case:<9} {:>8.1}ms", t * 1e3),
        }
    }
    if let Some(&p) = theirs.get("total") {
        println!(
            "fxvm time ÷ torch.fx's (target ≤ 0.5): {:.2}×",
            ours["total"] / p
        );
    }
}
