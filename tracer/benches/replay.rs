//! Capture once, replay: `torch.compile` in fxvm (capture, then native
//! replay) against fxvm's own eager execution and PyTorch's eager on
//! CPython, side by side in one run.
//!
//! `cargo bench -p fxvm-tracer --bench replay` runs `py/replay.py`: a small
//! MLP on [2, 16], a CIFAR-size CNN at batch 1 and 32, a GPT-like block at
//! T=16 and T=256. Targets: replay ≥ 2× faster than fxvm eager on the small
//! inputs and never slower on the large ones; the MLP replayed at most 1.0×
//! PyTorch eager.

mod common;

const ROUNDS: usize = 3;

fn main() {
    let (fxvm, torch) = common::commands("replay.py");
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = common::measure(&fxvm, torch.as_ref(), ROUNDS);
    println!(
        "{:<16} {:>11} {:>11} {:>11} {:>14} {:>14}",
        "case", "fxvm eager", "replay", "PyTorch", "eager÷replay", "replay÷PyTorch"
    );
    for case in [
        "mlp_2x16",
        "cnn_b1",
        "cnn_b32",
        "gpt_block_t16",
        "gpt_block_t256",
    ] {
        let eager = ours[&format!("{case}_eager")];
        let replay = ours[&format!("{case}_replay")];
        let pytorch = theirs.get(&format!("{case}_eager")).copied();
        let us = |s: f64| format!("{:.1}µs", s * 1e6);
        println!(
            "{case:<16} {:>11} {:>11} {:>11} {:>13.2}× {:>14}",
            us(eager),
            us(replay),
            pytorch.map_or("-".into(), us),
            eager / replay,
            pytorch.map_or("-".into(), |p| format!("{:.2}×", replay / p)),
        );
    }
}
