//! The differential fuzzes, run by fxvm and compared with the outcomes real
//! PyTorch gave (expected.txt, made by fixtures/regen.sh):
//! - fixtures/fuzz: 3,000 fixed-seed torch calls (cases.txt, made by make.py)
//!   over 0-size, 0-dim, huge and negative sizes, dtypes and views;
//! - fixtures/fuzz/registry: 22,000 calls generated from the op registry's
//!   declarations (ops.txt) — every row at every place, all ten dtypes,
//!   layouts, scalars at dtype bounds, keyword forms, bad dims and wrong
//!   types — plus operators and subscripts.
//!
//! fxvm must not crash on any call, and must answer as PyTorch does except
//! for the differences each suite's known.txt lists with their reasons.

use std::collections::HashMap;
use std::path::Path;

use fxvm_tests::{fixtures, run};

/// Two outcome lines agree: the same words, and numbers (`key=value`, the
/// float sums of a summary) equal within float rounding — half precision's
/// when the line holds a float16 or bfloat16 tensor.
fn same_outcome(expected: &str, actual: &str) -> bool {
    let (e, a): (Vec<&str>, Vec<&str>) =
        (expected.split(' ').collect(), actual.split(' ').collect());
    let tolerance = if expected.contains("float16") {
        1e-2
    } else {
        1e-4
    };
    e.len() == a.len()
        && e.iter().zip(&a).all(|(x, y)| {
            if x == y {
                return true;
            }
            let (Some((kx, vx)), Some((ky, vy))) = (x.split_once('='), y.split_once('=')) else {
                return false;
            };
            fn tail(v: &str) -> &str {
                &v[v.trim_end_matches([',', ')', ']']).len()..]
            }
            let number = |v: &str| v.trim_end_matches([',', ')', ']']).parse::<f64>().ok();
            match (number(vx), number(vy)) {
                (Some(p), Some(q)) if kx == ky && tail(vx) == tail(vy) => {
                    (p - q).abs() <= tolerance * p.abs().max(q.abs()).max(1.0)
                }
                _ => false,
            }
        })
}

/// Runs `dir`'s cases under fxvm and compares; returns how many agree.
fn differential(dir: &Path) -> (usize, usize) {
    let cases = std::fs::read_to_string(dir.join("cases.txt")).expect("cases");
    let expected = std::fs::read_to_string(dir.join("expected.txt")).expect("expectations");
    let known: HashMap<String, String> = std::fs::read_to_string(dir.join("known.txt"))
        .expect("known differences")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once('\t'))
        .map(|(case, why)| (case.to_owned(), why.to_owned()))
        .collect();

    let out = run(&[
        "run",
        fixtures().join("fuzz/run.py").to_str().unwrap(),
        dir.join("cases.txt").to_str().unwrap(),
    ]);
    // A panic, an abort or a signal ends the run early: no status, or lines missing.
    assert_eq!(out.status, Some(0), "the fuzz run crashed:\n{}", out.stderr);
    let cases: Vec<&str> = cases.lines().collect();
    let expected: Vec<&str> = expected.lines().collect();
    let actual: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(cases.len(), expected.len(), "regenerate expected.txt");
    assert_eq!(actual.len(), cases.len(), "{}", out.stderr);

    let mut new_differences = vec![];
    let mut fixed = vec![];
    let mut same = 0;
    for ((case, e), a) in cases.iter().zip(&expected).zip(&actual) {
        assert!(
            !a.contains("SystemError"),
            "an internal error (a caught panic) in: {case}"
        );
        let agrees = same_outcome(e, a);
        same += usize::from(agrees);
        match (agrees, known.contains_key(*case)) {
            (false, false) => {
                new_differences.push(format!("{case}\n  PyTorch: {e}\n  fxvm:    {a}"))
            }
            (true, true) => fixed.push(case.to_string()),
            _ => {}
        }
    }
    assert!(
        new_differences.is_empty(),
        "{} calls answer differently from PyTorch:\n{}",
        new_differences.len(),
        new_differences.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "now answered as PyTorch does; remove from {}:\n{}",
        dir.join("known.txt").display(),
        fixed.join("\n")
    );
    (same, cases.len())
}

#[test]
fn three_thousand_random_calls_answer_as_pytorch_and_never_crash() {
    let (same, all) = differential(&fixtures().join("fuzz"));
    // The bar: at least 99% of outcomes the same as PyTorch's.
    assert!(same * 100 >= all * 99, "{same} of {all}");
}

#[test]
fn calls_generated_from_the_registry_answer_as_pytorch_and_never_crash() {
    let (_, all) = differential(&fixtures().join("fuzz/registry"));
    assert!(all >= 20_000, "only {all} calls");
}

#[test]
fn outcomes_compare_numbers_within_rounding_only() {
    let e = "T float32 [2] nan=0 inf=0 -inf=0 s=1.0000001 a=3.0";
    assert!(same_outcome(
        e,
        "T float32 [2] nan=0 inf=0 -inf=0 s=1.0000002 a=3.0"
    ));
    assert!(!same_outcome(
        e,
        "T float32 [2] nan=0 inf=0 -inf=0 s=1.5 a=3.0"
    ));
    assert!(!same_outcome(
        e,
        "T float64 [2] nan=0 inf=0 -inf=0 s=1.0000001 a=3.0"
    ));
    assert!(!same_outcome(
        e,
        "T float32 [2] nan=1 inf=0 -inf=0 s=1.0000001 a=3.0"
    ));
    assert!(!same_outcome("E RuntimeError", "E IndexError"));
    assert!(same_outcome(
        "(T int64 [1] s=2 a=2, int 3)",
        "(T int64 [1] s=2 a=2, int 3)"
    ));
    assert!(!same_outcome(
        "(T float32 [1] s=2.0)",
        "(T float32 [1] s=2.0,"
    ));
    let half = "T bfloat16 [2] nan=0 inf=0 -inf=0 s=1.0 a=3.0";
    assert!(same_outcome(
        half,
        "T bfloat16 [2] nan=0 inf=0 -inf=0 s=1.005 a=3.0"
    ));
    assert!(!same_outcome(
        half,
        "T bfloat16 [2] nan=0 inf=0 -inf=0 s=1.05 a=3.0"
    ));
}
