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
//! ≤ 0.7× PyTorch's eager step on the MLP. The `forward_*` cases give the
//! autograd targets per model: a backward pass (forward plus backward less
//! the forward with grad mode on) at most 1.0× PyTorch's, and the
//! bookkeeping of a forward pass with grad mode on at most 5% over
//! `no_grad`.

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
        if let Some(model) = name.strip_prefix("forward_backward_") {
            autograd_targets(model, &ours, &theirs);
            continue;
        }
        if name.starts_with("forward_") {
            continue;
        }
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

/// A model's backward pass (forward plus backward, less the forward with
/// grad mode on) side by side, and each side's bookkeeping: the forward
/// with grad mode on over the forward under `no_grad`.
fn autograd_targets(
    model: &str,
    ours: &std::collections::BTreeMap<String, f64>,
    theirs: &std::collections::BTreeMap<String, f64>,
) {
    let times = |side: &std::collections::BTreeMap<String, f64>| -> Option<(f64, f64, f64)> {
        Some((
            *side.get(&format!("forward_backward_{model}"))?,
            *side.get(&format!("forward_grad_{model}"))?,
            *side.get(&format!("forward_nograd_{model}"))?,
        ))
    };
    let Some((both, forward, plain)) = times(ours) else {
        return;
    };
    let backward = both - forward;
    let bookkeeping = forward / plain - 1.0;
    match times(theirs) {
        Some((p_both, p_forward, p_plain)) => {
            let p_backward = p_both - p_forward;
            println!(
                "{:<28} {:>9.1} µs {:>9.1} µs {:>8.2}×  fxvm time ÷ PyTorch's (target ≤ 1.0)",
                format!("backward_{model}"),
                backward * 1e6,
                p_backward * 1e6,
                backward / p_backward
            );
            println!(
                "{:<28} {:>10.1}% {:>10.1}%            grad mode on over no_grad (target ≤ 5%)",
                format!("bookkeeping_{model}"),
                bookkeeping * 100.0,
                (p_forward / p_plain - 1.0) * 100.0
            );
        }
        None => println!(
            "{:<28} {:>9.1} µs; bookkeeping {:.1}%",
            format!("backward_{model}"),
            backward * 1e6,
            bookkeeping * 100.0
        ),
    }
}
