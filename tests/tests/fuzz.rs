//! The differential fuzz: 3,000 fixed-seed torch calls (fixtures/fuzz/cases.txt,
//! made by make.py) over 0-size, 0-dim, huge and negative sizes, every dtype
//! and non-contiguous views, run by fxvm and compared with the outcomes real
//! PyTorch gave (expected.txt, made by regen.sh). fxvm must not crash on any
//! of them, and must answer as PyTorch does except for the listed known
//! differences.

use std::collections::HashMap;

use fxvm_tests::{fixtures, run};

/// Two outcome lines agree: the same words, and numbers (`key=value`, the
/// float sums of a summary) equal within float rounding.
fn same_outcome(expected: &str, actual: &str) -> bool {
    let (e, a): (Vec<&str>, Vec<&str>) =
        (expected.split(' ').collect(), actual.split(' ').collect());
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
                    (p - q).abs() <= 1e-4 * p.abs().max(q.abs()).max(1.0)
                }
                _ => false,
            }
        })
}

#[test]
fn three_thousand_random_calls_answer_as_pytorch_and_never_crash() {
    let dir = fixtures().join("fuzz");
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
        dir.join("run.py").to_str().unwrap(),
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
        "now answered as PyTorch does; remove from fixtures/fuzz/known.txt:\n{}",
        fixed.join("\n")
    );
    // The bar: at least 99% of outcomes the same as PyTorch's.
    assert!(same * 100 >= cases.len() * 99, "{same} of {}", cases.len());
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
}
