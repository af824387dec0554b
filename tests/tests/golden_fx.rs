//! torch.fx scripts whose output must equal real torch.fx's, byte for byte
//! (goldens made by `fixtures/regen.sh`); a mismatch shows a unified diff.

use fxvm_tests::{fixtures, run, unified_diff};

fn check(name: &str) {
    let script = fixtures().join("fx").join(format!("{name}.py"));
    let golden = script.with_extension("out");
    let expected = std::fs::read_to_string(&golden).expect("golden file");
    let out = run(&["run", script.to_str().unwrap()]);
    assert_eq!(out.status, Some(0), "{name} failed:\n{}", out.stderr);
    let diff = unified_diff(&expected, &out.stdout, &golden.display().to_string());
    assert!(diff.is_empty(), "{name} differs from torch.fx:\n{diff}");
}

#[test]
fn graphs_built_and_edited_print_and_generate_code_as_torch_fx() {
    check("graph_edit");
}

#[test]
fn graph_modules_and_passes_behave_as_torch_fx() {
    check("graph_module");
}

#[test]
fn to_folder_writes_a_package_that_rebuilds_the_module() {
    check("to_folder");
}
