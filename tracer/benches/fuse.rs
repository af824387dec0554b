//! Conv+BatchNorm fusion, fxvm side by side with real PyTorch in one run.
//!
//! `cargo bench -p fxvm-tracer --bench fuse` runs `py/fuse.py`: a
//! ResNet-50-like forward (batch 1, 224²) before and after
//! `torch.fx.experimental.optimization.fuse`, under fxvm and (when found)
//! CPython + PyTorch. It prints each time, fused ÷ unfused for both, and
//! fxvm ÷ PyTorch for the fused model.

mod common;

const ROUNDS: usize = 2;

fn main() {
    let (fxvm, torch) = common::commands("fuse.py");
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = common::measure(&fxvm, torch.as_ref(), ROUNDS);
    let row = |label: &str, m: &std::collections::BTreeMap<String, f64>| {
        let (Some(&plain), Some(&fused)) = (m.get("resnet50_unfused"), m.get("resnet50_fused"))
        else {
            return;
        };
        println!(
            "{label:<9} unfused {:>7.1} ms  fused {:>7.1} ms  fused ÷ unfused {:.2}×",
            plain * 1e3,
            fused * 1e3,
            fused / plain
        );
    };
    row("fxvm", &ours);
    row("PyTorch", &theirs);
    if let (Some(a), Some(b)) = (ours.get("resnet50_fused"), theirs.get("resnet50_fused")) {
        println!("fused forward, fxvm ÷ PyTorch: {:.2}×", a / b);
    }
}
