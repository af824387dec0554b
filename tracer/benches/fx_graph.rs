//! The torch.fx IR, fxvm side by side with real torch.fx in one run.
//!
//! `cargo bench -p fxvm-tracer --bench fx_graph` runs `py/fx_graph.py` (build
//! a 10,000-node chain graph, `str(graph)`, `graph.python_code()`) under fxvm
//! and, when a PyTorch interpreter is found (`$FXVM_TORCH_PYTHON`, else
//! `/tmp/torchref/bin/python`), under CPython + torch.fx, alternating rounds
//! so machine noise hits both alike. Target: total at most 0.5× torch.fx's.

mod common;

const ROUNDS: usize = 3;

fn main() {
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = {
        let (fxvm, torch) = common::commands("fx_graph.py");
        common::measure(&fxvm, torch.as_ref(), ROUNDS)
    };
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
