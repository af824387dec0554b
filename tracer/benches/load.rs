//! Loading a large state_dict, fxvm side by side with real PyTorch in one run.
//!
//! `cargo bench -p fxvm-tracer --bench load` runs `py/load.py` under fxvm and
//! (when found; see `common`) CPython + PyTorch, on the same 500 MB float32
//! checkpoint and safetensors file (`FXVM_BENCH_LOAD_MB` to change the size).
//! Targets: `torch.load` at most 1.0× PyTorch's time; `torch.load(mmap=True)`
//! and safetensors' `load_file` at most 0.2× PyTorch's plain `torch.load`,
//! with resident memory growing only as tensors are touched.

mod common;

/// Processes per interpreter: each loads once, and each case keeps its best.
const ROUNDS: usize = 5;

fn main() {
    let (fxvm, torch) = common::commands("load.py");
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = common::measure(&fxvm, torch.as_ref(), ROUNDS);
    let theirs_load = theirs.get("load").copied();
    println!(
        "{:<16} {:>12} {:>12} {:>9}  meaning",
        "case", "fxvm", "PyTorch", "ratio"
    );
    for (name, &value) in &ours {
        let other = theirs.get(name).copied();
        let show = |v: Option<f64>| match v {
            Some(v) if name.starts_with("rss") => format!("{v:.0} MB"),
            Some(v) => format!("{:.1} ms", v * 1e3),
            None => "-".into(),
        };
        let (ratio, meaning) = match name.as_str() {
            "load" => (
                other.map(|p| value / p),
                "fxvm time ÷ PyTorch's (target ≤ 1.0)",
            ),
            "load_mmap" | "safetensors" => (
                theirs_load.map(|p| value / p),
                "fxvm time ÷ PyTorch's plain torch.load (target ≤ 0.2)",
            ),
            _ => (
                None,
                "resident memory added by a mapped load (before/after one tensor is read)",
            ),
        };
        println!(
            "{name:<16} {:>12} {:>12} {:>9}  {meaning}",
            show(Some(value)),
            show(other),
            ratio.map_or("-".into(), |r| format!("{r:.2}×"))
        );
    }
}
