//! Expressions built by real PyTorch's sympy functions
//! (`fixtures/symbolic/table.txt`, from `make.py`), rebuilt here: each must
//! print as PyTorch printed it and evaluate to the same value.

use std::collections::HashMap;

use fxvm_symbolic::{Expr, Value};

/// Parses the table's prefix notation: `add(a,b)`, `sub`, `mul`, `neg(a)`,
/// `fd(a,k)`, `mod(a,k)`, `pow(a,k)`, symbols and integers.
fn parse(text: &str) -> (Expr, &str) {
    let end = text.find(['(', ',', ')']).unwrap_or(text.len());
    let (head, rest) = text.split_at(end);
    let Some(mut rest) = rest.strip_prefix('(') else {
        let atom = match head.parse::<i128>() {
            Ok(k) => Expr::int(k),
            Err(_) => Expr::symbol(head),
        };
        return (atom, rest);
    };
    let mut args = Vec::new();
    loop {
        let (arg, after) = parse(rest);
        args.push(arg);
        match after.as_bytes()[0] {
            b',' => rest = &after[1..],
            _ => {
                rest = &after[1..];
                break;
            }
        }
    }
    let e = match (head, args.as_slice()) {
        ("add", [a, b]) => a.add(b),
        ("sub", [a, b]) => a.sub(b),
        ("mul", [a, b]) => a.mul(b),
        ("neg", [a]) => a.neg(),
        ("fd", [a, k]) => a.floor_div(k),
        ("mod", [a, k]) => a.modulo(k),
        ("pow", [a, k]) => a.pow(k),
        _ => panic!("unknown form {head} in the table"),
    }
    .expect("the table holds only expressions PyTorch built");
    (e, rest)
}

#[test]
fn expressions_print_and_evaluate_as_pytorch_built_them() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/symbolic/table.txt"
    );
    let table = std::fs::read_to_string(path).expect("fixtures/symbolic/table.txt");
    let bindings: HashMap<String, Value> = [("s0", 5), ("s1", 7), ("s2", 3)]
        .into_iter()
        .map(|(n, v)| (n.to_string(), Value::Int(v)))
        .collect();
    let mut mismatches = Vec::new();
    let mut rows = 0;
    for line in table.lines() {
        let [text, printed, value] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("malformed row {line:?}");
        };
        rows += 1;
        let (e, rest) = parse(text);
        assert!(rest.is_empty(), "trailing text in {text}");
        let ours = e.to_string();
        let evaluated = e.eval(&bindings).expect("evaluates");
        let want = Value::Int(value.parse().expect("an integer value"));
        if ours != printed || evaluated != want {
            mismatches.push(format!(
                "{text}: printed {ours} (PyTorch {printed}), value {evaluated:?} (PyTorch {value})"
            ));
        }
    }
    assert!(rows >= 400, "the table has {rows} rows");
    let known_path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../fixtures/symbolic/known.txt"
    );
    let known: Vec<String> = std::fs::read_to_string(known_path)
        .expect("fixtures/symbolic/known.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(str::to_owned)
        .collect();
    let differing: Vec<String> = mismatches
        .iter()
        .map(|m| m.split(':').next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        differing,
        known,
        "rows that differ from PyTorch (update known.txt only for a known limit):\n{}",
        mismatches.join("\n")
    );
}
