//! numpy, fxvm's native one side by side with CPython's numpy in one run.
//!
//! `cargo bench -p fxvm-tracer --bench numpy_ops` runs `py/numpy_ops.py`
//! under fxvm and, when a Python with numpy is found (`$FXVM_TORCH_PYTHON`,
//! else `/tmp/torchref/bin/python`), under CPython, alternating rounds so
//! machine noise hits both alike, and prints each case's best time and the
//! ratio fxvm/numpy. Targets: elementwise, reductions and matmul on 1M
//! float32 elements at most 1.2× numpy's time; opening and slicing a 500 MB
//! `np.memmap` at most 1.0×.

mod common;

const ROUNDS: usize = 3;

fn main() {
    let (fxvm, python) = common::commands("numpy_ops.py");
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = common::measure(&fxvm, python.as_ref(), ROUNDS);
    println!(
        "{:<26} {:>12} {:>12} {:>9}  meaning",
        "case", "fxvm", "numpy", "ratio"
    );
    for (name, &t) in &ours {
        let target = if name.starts_with("memmap") { 1.0 } else { 1.2 };
        match theirs.get(name) {
            Some(&n) => println!(
                "{name:<26} {:>9.1} µs {:>9.1} µs {:>8.2}×  fxvm time ÷ numpy's (target ≤ {target})",
                t * 1e6,
                n * 1e6,
                t / n
            ),
            None => println!("{name:<26} {:>9.1} µs", t * 1e6),
        }
    }
}
