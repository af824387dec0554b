//! Embedding costs: creating a host and importing torch, calling a Python
//! function from Rust, and what the capability policy costs a trace
//! (targets: ≤ 40 ms, ≤ 2 µs, < 2 %).
//!
//! `cargo bench -p fxvm --bench host`

use std::time::{Duration, Instant};

use fxvm::{Host, Value};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .min()
        .expect("runs > 0")
}

fn main() {
    let bare = best(5, || Host::new().expect("host"));
    println!(
        "host alone              {:>9.1} ms",
        bare.as_secs_f64() * 1e3
    );
    let create = best(5, || {
        let host = Host::new().expect("host");
        host.run_str("import torch").expect("torch imports");
        host
    });
    println!(
        "host + import torch     {:>9.1} ms  (target ≤ 40)",
        create.as_secs_f64() * 1e3
    );
    // What a model script needs (torch.nn loads on first use).
    let with_nn = best(5, || {
        let host = Host::new().expect("host");
        host.run_str("import torch.nn").expect("torch.nn imports");
        host
    });
    println!(
        "host + import torch.nn  {:>9.1} ms",
        with_nn.as_secs_f64() * 1e3
    );
    let plain = per_call(&Host::new().expect("host"));
    println!("call a Python function  {plain:>9.2} µs  (target ≤ 2)");
    let limited = Host::builder()
        .time_limit(Duration::from_secs(60))
        .build()
        .expect("host");
    println!("  … with a time limit   {:>9.2} µs", per_call(&limited));
    let full = best(5, || Host::builder().allow_all().build().expect("host"));
    println!(
        "host, full access       {:>9.1} ms  (a sandboxed host: {:+.1} ms)",
        full.as_secs_f64() * 1e3,
        (bare.as_secs_f64() - full.as_secs_f64()) * 1e3
    );
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/cli/resnet50.py"
    );
    // Several hosts of each kind, made and measured interleaved, so both
    // kinds see the same machine load and heap layouts.
    let hosts: Vec<(bool, Host)> = (0..6)
        .map(|i| {
            let sandboxed = i % 2 == 0;
            let builder = if sandboxed {
                Host::builder()
            } else {
                Host::builder().allow_all()
            };
            (sandboxed, builder.build().expect("host"))
        })
        .collect();
    let models: Vec<_> = hosts
        .iter()
        .map(|(sandboxed, h)| {
            let model = h
                .import_file(fixture)
                .and_then(|m| m.eval_expr("ResNet50()"))
                .expect("model");
            (*sandboxed, model)
        })
        .collect();
    let (mut s, mut o) = (Duration::MAX, Duration::MAX);
    for _ in 0..8 {
        for (sandboxed, model) in &models {
            let t = best(1, || model.trace().expect("trace"));
            if *sandboxed {
                s = s.min(t);
            } else {
                o = o.min(t);
            }
        }
    }
    println!(
        "trace ResNet-50 sandboxed {:>7.1} ms vs full access {:.1} ms: {:.3}×  (target < 1.02)",
        s.as_secs_f64() * 1e3,
        o.as_secs_f64() * 1e3,
        s.as_secs_f64() / o.as_secs_f64()
    );
}

/// Microseconds per call of a two-argument Python function from Rust.
fn per_call(host: &Host) -> f64 {
    const N: u32 = 20_000;
    let m = host
        .import_source("f", "def add(a, b):\n    return a + b\n")
        .expect("module");
    let add = m.attr("add").expect("function");
    let args = [Value::Int(1), Value::Int(2)];
    let calls = best(5, || {
        for _ in 0..N {
            std::hint::black_box(add.call_self(&args).expect("call"));
        }
    });
    calls.as_secs_f64() * 1e6 / f64::from(N)
}
