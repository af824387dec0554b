//! Tensor kernels, fxvm side by side with real PyTorch in one run.
//!
//! `cargo bench -p fxvm-tracer --bench tensor_ops` runs `py/tensor_ops.py`
//! under fxvm and, when a PyTorch interpreter is found (`$FXVM_TORCH_PYTHON`,
//! else `/tmp/torchref/bin/python`), under CPython + PyTorch, alternating
//! rounds so machine noise hits both alike. It prints each case's best time
//! and the ratio fxvm/PyTorch (for matmul, of GFLOP/s PyTorch/fxvm inverted:
//! higher is better there). Targets (issue 39): matmul ≥ 1.0× PyTorch's
//! GFLOP/s; every kernel row (convolutions incl. depthwise and their
//! gradients, the LSTM, linear at 8/32/64 rows, topk, sort, elementwise,
//! softmax, sum, training steps) at most 1.0× PyTorch's time; the per-op
//! overhead cases
//! (`op_*`: 4-element add and relu, a 3-layer MLP on a [2, 16] input) at
//! most 1.0× PyTorch's time, net of each interpreter's timing loop
//! (`op_loop`, an empty call; RustPython runs it ~8× slower than CPython, a
//! cost of the interpreter rather than of fxvm's op path). Raw ratios print too.

mod common;

use std::collections::BTreeMap;

const ROUNDS: usize = 3;

fn main() {
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = {
        let (fxvm, torch) = common::commands("tensor_ops.py");
        common::measure(&fxvm, torch.as_ref(), ROUNDS)
    };
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
                "{name:<14} {:>12} {:>12} {:>8.2}×  fxvm GFLOP/s ÷ PyTorch's (target ≥ 1.0)",
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
                "{name:<14} {:>12} {:>12} {:>8.2}×  fxvm time ÷ PyTorch's (target ≤ 1.0)",
                fmt(t),
                fmt(p),
                t / p
            ),
            None => println!("{name:<14} {:>12}", fmt(t)),
        }
    }
}
