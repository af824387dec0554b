//! A Rust program hosting a model script: it imports the script, runs the
//! model on a tensor made in Rust (shared, not copied), traces it with the
//! sequence length symbolic and prints the graph it walked.
//!
//! `cargo run --release -p fxvm --example embed [-- SCRIPT.py EXPR]`
//! (defaults: the GPT-like block in `fixtures/cli/gpt_block.py`, `Block()`).

use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use fxvm::tensor::Tensor;
use fxvm::{Host, Value};

/// Everything the example prints, for `script` and the model `expr` builds.
pub fn run(script: &Path, expr: &str) -> Result<String, fxvm::Error> {
    let host = Host::builder()
        .time_limit(Duration::from_secs(60))
        .build()?;
    let module = host.import_file(script)?;
    let model = module.eval_expr(expr)?;
    model.call("eval", &[])?;

    let (batch, seq, dim) = (2, 8, 16);
    let data: Vec<f32> = (0..batch * seq * dim)
        .map(|i| (i as f32 * 0.37).sin())
        .collect();
    let x = Tensor::from_vec(data, &[batch, seq, dim]);
    let y = model.call_self(&[Value::Tensor(x.clone())])?;
    let y = y.as_tensor().expect("the model returns a tensor");

    let mut out = String::new();
    let first: Vec<f32> = y.to_vec::<f32>().into_iter().take(4).collect();
    let _ = writeln!(out, "output {:?}, first values {first:?}", y.shape());
    let graph = model.trace_with_examples(&[Value::Tensor(x)], &[("x", &[1])])?;
    let _ = writeln!(out, "{} nodes:", graph.nodes.len());
    for node in &graph.nodes {
        let _ = writeln!(
            out,
            "  {:<12} {:<14} {:<28} {}",
            node.name,
            node.op,
            node.target_name,
            node.shape.as_deref().unwrap_or("")
        );
    }
    for guard in &graph.guards {
        let _ = writeln!(out, "guard: {guard}");
    }
    Ok(out)
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let default = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/cli/gpt_block.py");
    let script = args.next().map_or(default, PathBuf::from);
    let expr = args.next().unwrap_or_else(|| "Block()".to_owned());
    match run(&script, &expr) {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}", e.traceback);
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
