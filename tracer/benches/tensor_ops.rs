//! Tensor kernels, fxvm side by side with real PyTorch in one run.
//!
//! `cargo bench -p fxvm-tracer --bench tensor_ops` runs `py/tensor_ops.py`
//! under fxvm and, when a PyTorch interpreter is found (`$FXVM_TORCH_PYTHON`,
//! else `/tmp/torchref/bin/python`), under CPython + PyTorch, alternating
//! rounds so machine noise hits both alike. It prints each case's best time
//! and the ratio fxvm/PyTorch (for matmul, of GFLOP/s PyTorch/fxvm inverted:
//! higher is better there). Targets: matmul ≥ 0.7× PyTorch's GFLOP/s; conv2d,
//! add and softmax at most 1.5× PyTorch's time; the per-op overhead cases
//! (`op_*`: 4-element add and relu, a 3-layer MLP on a [2, 16] input) at
//! most 1.0× PyTorch's time, net of each interpreter's timing loop
//! (`op_loop`, an empty call; RustPython runs it ~8× slower than CPython, a
//! cost of the interpreter rather than of fxvm's op path). Raw ratios print too.

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

fn best_of(acc: &mut BTreeMap<String, f64>, round: BTreeMap<String, f64>) {
    for (k, v) in round {
        let e = acc.entry(k).or_insert(f64::INFINITY);
        *e = e.min(v);
    }
}

fn main() {
    let fxvm = env!("CARGO_BIN_EXE_fxvm");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/py/tensor_ops.py");
    let script = script.to_str().expect("utf-8 path");
    let torch =
        std::env::var("FXVM_TORCH_PYTHON").unwrap_or_else(|_| "/tmp/torchref/bin/python".into());
    let have_torch = Path::new(&torch).exists();
    if !have_torch {
        println!("no PyTorch interpreter at {torch}: fxvm times only (set FXVM_TORCH_PYTHON)");
    }
    let (mut ours, mut theirs) = (BTreeMap::new(), BTreeMap::new());
    for _ in 0..ROUNDS {
        best_of(&mut ours, run(&[fxvm, "run", script]));
        if have_torch {
            best_of(&mut theirs, run(&[&torch, script]));
        }
    }
    println!(
        "{:<14} {:>12} {:>12} {:>9}  meaning",
        "case", "fxvm", "PyTorch", "ratio"
    );
    let lo = |m: &BTreeMap<String, f64>| m.get("op_loop").copied().unwrap_or(0.0);
    let (loop_ours, loop_theirs) = (lo(&ours), lo(&theirs));
    for (name, &t) in &ours {
        let matmul = name
            .strip_prefix("matmul_")
            .and_then(|n| n.parse::<f64>().ok());
        let fmt = |secs: f64| match matmul {
            Some(n) => format!("{:.1} GF/s", 2.0 * n * n * n / secs / 1e9),
            None => format!("{:.1} µs", secs * 1e6),
        };
        match theirs.get(name) {
            Some(&p) if matmul.is_some() => println!(
                "{name:<14} {:>12} {:>12} {:>8.2}×  fxvm GFLOP/s ÷ PyTorch's (target ≥ 0.7)",
                fmt(t),
                fmt(p),
                p / t
            ),
            Some(&p) if name == "op_loop" => println!(
                "{name:<14} {:>12} {:>12} {:>8.2}×  the timing loop alone (subtracted above)",
                fmt(t),
                fmt(p),
                t / p
            ),
            Some(&p) if name.starts_with("op_") => println!(
                "{name:<14} {:>12} {:>12} {:>8.2}×  net of the loop ({:.2}× raw), target ≤ 1.0",
                fmt(t),
                fmt(p),
                (t - loop_ours) / (p - loop_theirs),
                t / p
            ),
            Some(&p) => println!(
                "{name:<14} {:>12} {:>12} {:>8.2}×  fxvm time ÷ PyTorch's (target ≤ 1.5)",
                fmt(t),
                fmt(p),
                t / p
            ),
            None => println!("{name:<14} {:>12}", fmt(t)),
        }
    }
}
