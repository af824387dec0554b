//! Start-up cost of `fxvm run`, side by side with CPython in one run.
//!
//! `cargo bench -p fxvm-tracer --bench startup` prints the median wall time
//! and peak RSS of each command, interleaved so machine noise hits all alike,
//! and the ratios to `python3 -c pass`. Targets: an empty script under 60 ms
//! and 50 MB.

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 25;

struct Sample {
    wall: Duration,
    max_rss_kb: i64,
}

/// Runs `argv` once and reports its wall time and peak RSS (from `wait4`).
fn measure(argv: &[&str]) -> Sample {
    let start = Instant::now();
    #[allow(clippy::zombie_processes)] // reaped by wait4 below
    let child = Command::new(argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {}: {e}", argv[0]));
    let mut status = 0;
    // SAFETY: rusage is plain data, and wait4 writes it for the child we spawned.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    assert_eq!(pid, child.id() as i32, "wait4 failed");
    let status = std::process::ExitStatus::from_raw(status);
    assert!(status.success(), "{argv:?} failed: {status}");
    Sample {
        wall,
        max_rss_kb: usage.ru_maxrss,
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The real CPython executable, not a version-manager shim in front of it.
fn python() -> String {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 on PATH");
    String::from_utf8(out.stdout)
        .expect("utf-8 path")
        .trim()
        .to_owned()
}

fn main() {
    let fxvm = env!("CARGO_BIN_EXE_fxvm");
    let python = python();
    let empty = std::env::temp_dir().join(format!("fxvm-empty-{}.py", std::process::id()));
    std::fs::write(&empty, "").expect("write empty script");
    let empty = empty.to_str().unwrap();

    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("python3 -c pass", vec![&python, "-c", "pass"]),
        ("fxvm run empty.py", vec![fxvm, "run", empty]),
        (
            "fxvm run -c 'import torch'",
            vec![fxvm, "run", "-c", "import torch"],
        ),
    ];
    let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let mut rss = vec![0i64; cases.len()];
    for (_, argv) in &cases {
        measure(argv); // warm the page cache
    }
    for _ in 0..ROUNDS {
        for (i, (_, argv)) in cases.iter().enumerate() {
            let s = measure(argv);
            walls[i].push(s.wall);
            rss[i] = rss[i].max(s.max_rss_kb);
        }
    }
    let _ = std::fs::remove_file(empty);

    let base = median(walls[0].clone()).as_secs_f64();
    println!(
        "{:<28} {:>10} {:>8} {:>12}",
        "command", "median", "ratio", "peak RSS"
    );
    for (i, (name, _)) in cases.iter().enumerate() {
        let m = median(walls[i].clone()).as_secs_f64();
        println!(
            "{name:<28} {:>8.1}ms {:>7.2}x {:>9.1} MB",
            m * 1e3,
            m / base,
            rss[i] as f64 / 1024.0
        );
    }
    let size = std::fs::metadata(fxvm).map(|m| m.len()).unwrap_or(0);
    println!("fxvm binary: {:.1} MB ({fxvm})", size as f64 / 1e6);
}
