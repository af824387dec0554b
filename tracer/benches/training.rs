//! Training steps, fxvm side by side with real PyTorch in one run.
//!
//! `cargo bench -p fxvm-tracer --bench training` runs `py/training.py`
//! under fxvm and under CPython + PyTorch (see `common`), alternating
//! rounds. Targets: one training step (zero_grad, forward, loss, backward,
//! optimizer step) at most 1.0× PyTorch's time on an MLP 64→256→256→10 at
//! batch 32 with SGD+momentum, pytorch/examples' mnist Net at batch 64 with
//! Adadelta, and a 4-layer GPT (width 128, T=64, batch 8) with AdamW. The
//! `update_*` cases time the optimizer step alone (one native update per
//! group here, PyTorch's per-tensor loop there). The `*_captured` cases
//! run the same step through `fxvm.global_function` (recorded once,
//! replayed natively): targets ≥ 1.5× faster than fxvm's eager step and
//! ≤ 0.7× PyTorch's eager step on the MLP.

mod common;

const ROUNDS: usize = 3;

fn main() {
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = {
        let (fxvm, torch) = common::commands("training.py");
        common::measure(&fxvm, torch.as_ref(), ROUNDS)
    };
    println!(
        "{:<28} {:>12} {:>12} {:>9}  meaning",
        "case", "fxvm", "PyTorch", "ratio"
    );
    for (name, &t) in &ours {
        if let Some(eager) = name.strip_suffix("_captured") {
            if let (Some(&p), Some(&e)) = (theirs.get(eager), ours.get(eager)) {
                println!(
                    "{name:<28} {:>9.1} µs {:>9.1} µs {:>8.2}×  ÷ PyTorch's eager step (target ≤ 0.7); {:.2}× faster than fxvm's eager step (target ≥ 1.5)",
                    t * 1e6,
                    p * 1e6,
                    t / p,
                    e / t
                );
            }
            continue;
        }
        let target = if name.starts_with("update_") {
            "the update alone"
        } else {
            "target ≤ 1.0"
        };
        match theirs.get(name) {
            Some(&p) => println!(
                "{name:<28} {:>9.1} µs {:>9.1} µs {:>8.2}×  fxvm time ÷ PyTorch's ({target})",
                t * 1e6,
                p * 1e6,
                t / p
            ),
            None => println!("{name:<28} {:>9.1} µs", t * 1e6),
        }
    }
}
