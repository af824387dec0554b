//! `symbolic_trace` time, fxvm side by side with real torch.fx in one run.
//!
//! `cargo bench -p fxvm-tracer --bench trace` runs `py/trace_models.py`
//! (tracing a ResNet-50-like and a GPT-2-small-like model and models in the
//! style of torchvision's resnet18, mobilenet_v2, ConvNeXt-tiny and
//! EfficientNet-b0, written in plain torch) under fxvm and, when a PyTorch
//! interpreter is found (`$FXVM_TORCH_PYTHON`, else
//! `/tmp/torchref/bin/python`), under CPython + torch.fx, alternating rounds
//! so machine noise hits both alike, and reports peak memory of each
//! process. Target: at most 0.5× torch.fx's time. Also `shape_trace` of the
//! GPT-2-like model with a symbolic length against fxvm's own
//! `symbolic_trace` of it (target ≤ 1.5×).

mod common;

use std::process::Command;

const ROUNDS: usize = 3;

/// Peak resident memory of one run of `argv` (from `wait4`).
fn peak_rss_mb(argv: &[String]) -> f64 {
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let child = Command::new(&argv[0])
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
    let (fxvm_argv, torch_argv) = common::commands("trace_models.py");
    let runs = common::measure(&fxvm_argv, torch_argv.as_ref(), ROUNDS);
    let (ours, theirs) = (&runs.fxvm, &runs.torch);
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
        let compiled = format!("{case}_compiled");
        if let (Some(t), Some(p)) = (ours.get(&compiled), theirs.get(&compiled)) {
            println!(
                "{:<15} {:>8.1}ms {:>8.1}ms {:>7.2}×  (the trace with its forward compiled)",
                "  + forward",
                t * 1e3,
                p * 1e3,
                t / p
            );
        }
    }
    if let (Some(t), Some(p)) = (
        ours.get("resnet50_custom_tracer"),
        theirs.get("resnet50_custom_tracer"),
    ) {
        println!(
            "{:<15} {:>8.1}ms {:>8.1}ms {:>7.2}×  (resnet50 by a Tracer overriding create_node; target ≤ 0.6)",
            "custom_tracer",
            t * 1e3,
            p * 1e3,
            t / p
        );
    }
    if let (Some(plain), Some(shapes)) =
        (ours.get("gpt2_small_plain"), ours.get("gpt2_small_shapes"))
    {
        println!(
            "{:<15} {:>8.1}ms {:>8.1}ms {:>7.2}×  (shape_trace, symbolic length ÷ fxvm symbolic_trace, target ≤ 1.5)",
            "gpt2_shapes",
            shapes * 1e3,
            plain * 1e3,
            shapes / plain
        );
    }
    if let (Some(nodes), Some(trace), Some(html)) = (
        ours.get("gpt_deep_nodes"),
        ours.get("gpt_deep_trace"),
        ours.get("gpt_deep_html"),
    ) {
        println!(
            "{:<15} {:>8.1}ms {:>8.1}ms {:>7.2}×  (--format html of {nodes} nodes ÷ tracing them; target < 2 s)",
            "picture_html",
            html * 1e3,
            trace * 1e3,
            html / trace
        );
    }
    for (label, argv) in [
        ("fxvm", Some(&fxvm_argv)),
        ("torch.fx", torch_argv.as_ref()),
    ] {
        if let Some(argv) = argv {
            println!("peak RSS {label:<9} {:>7.1} MB", peak_rss_mb(argv));
        }
    }
}
