//! Embedding costs: creating a host and importing torch, and calling a
//! Python function from Rust (targets: ≤ 40 ms and ≤ 2 µs).
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
    let plain = per_call(&Host::new().expect("host"));
    println!("call a Python function  {plain:>9.2} µs  (target ≤ 2)");
    let limited = Host::builder()
        .time_limit(Duration::from_secs(60))
        .build()
        .expect("host");
    println!("  … with a time limit   {:>9.2} µs", per_call(&limited));
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
