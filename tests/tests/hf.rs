//! Hugging Face transformers (a pure-Python package from PyPI) under fxvm:
//! models built from configs give PyTorch's outputs, generations, training
//! losses and checkpoint round trips. The package comes from
//! `fixtures/hf/install.sh` (`.ci/run` runs it) in `target/hf-site`, or from
//! the folder `FXVM_HF_SITE` names.

use std::path::PathBuf;

use fxvm_tests::{fixtures, unified_diff};

fn hf_site() -> Option<PathBuf> {
    let site = match std::env::var_os("FXVM_HF_SITE") {
        Some(dir) => PathBuf::from(dir),
        None => fixtures().join("../target/hf-site"),
    };
    site.join("transformers").is_dir().then_some(site)
}

/// Runs `fixtures/hf/{name}.py` under fxvm with transformers and compares
/// with what it printed under CPython and PyTorch.
fn check(name: &str) {
    let Some(site) = hf_site() else {
        // Without network access to PyPI there is no transformers to run.
        eprintln!("skipped: transformers is not installed (run fixtures/hf/install.sh)");
        return;
    };
    let script = fixtures().join(format!("hf/{name}.py"));
    let golden = script.with_extension("out");
    let expected = std::fs::read_to_string(&golden).expect("golden file");
    let out = fxvm_tests::fxvm(&[
        "run",
        "--site-packages",
        site.to_str().unwrap(),
        script.to_str().unwrap(),
    ])
    .env("HF_HUB_OFFLINE", "1")
    .output()
    .expect("spawn fxvm");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let diff = unified_diff(&expected, &stdout, &golden.display().to_string());
    assert!(
        diff.is_empty(),
        "{name} differs from PyTorch and transformers:\n{diff}"
    );
}

#[test]
fn transformers_models_match_pytorch() {
    // GPT-2, BERT, Llama, T5 from configs: outputs, greedy and sampled
    // generation, AdamW steps, save_pretrained/from_pretrained.
    check("models");
}

#[test]
fn transformers_tokenizers_wrap_save_load_and_drive_generation() {
    // PreTrainedTokenizerFast over a trained tokenizers BPE, AutoTokenizer
    // from the saved folder, batches to tensors, left-padded generation.
    check("tokenizer");
}

#[test]
fn a_real_pretrained_model_and_tokenizer_embed_as_under_pytorch() {
    // all-MiniLM-L6-v2's own tokenizer.json and weights.
    check("minilm");
}
