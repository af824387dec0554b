//! `symbolic_trace` time, fxvm side by side with real torch.fx in one run.
//!
//! `cargo bench -p fxvm-tracer --bench trace` runs `py/trace_models.py`
//! (tracing a ResNet-50-like and a GPT-2-small-like model and models in the
//! style of torchvision's resnet18, mobilenet_v2, ConvNeXt-tiny and
//! EfficientNet-b0, written in plain torch) under fxvm and, when a PyTorch
//! interpreter is found (`$FXVM_TORCH_PYTHON`, else
//! `/tmp/torchref/bin/python`), under CPython + torch.fx, alternating rounds
//! so machine noise hits both alike, and reports peak memory of each
//! process. Target: at most 0.5× torch.fx's time.

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

/// Peak resident memory of one run of `argv` (from `wait4`).
fn peak_rss_mb(argv: &[&str]) -> f64 {
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let child = Command::new(argv[0])
        .args(&argv[1..])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    let mut status = 0;
    // SAFETY: rusage is plain data, and wait4 writes it for the child we spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    usage.ru_maxrss as f64 / 1024.0
}

fn main() {
    let fxvm = env!("CARGO_BIN_EXE_fxvm");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/py/trace_models.py");
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
        "{:<15} {:>10} {:>10} {:>8}",
        "case", "fxvm", "torch.fx", "ratio"
    );
    for case in [
        "resnet50",
        "gpt2_small",
        "resnet18",
        "mobilenet_v2",
        "convnext_tiny",
        "efficientnet_b0",
    ] {
        let t = ours[case];
        let nodes = ours[&format!("{case}_nodes")];
        match theirs.get(case) {
            Some(&p) => println!(
                "{case:<15} {:>8.1}ms {:>8.1}ms {:>7.2}×  ({nodes} nodes; fxvm ÷ torch.fx, target ≤ 0.5)",
                t * 1e3,
                p * 1e3,
                t / p
            ),
            None => println!("{case:<15} {:>8.1}ms  ({nodes} nodes)", t * 1e3),
        }
    }
    for (label, argv) in [
        ("fxvm", vec![fxvm, "run", script]),
        ("torch.fx", vec![torch.as_str(), script]),
    ] {
        if argv[0] == torch && !have_torch {
            continue;
        }
        println!("peak RSS {label:<9} {:>7.1} MB", peak_rss_mb(&argv));
    }
}
