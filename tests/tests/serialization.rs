//! `torch.save`/`torch.load` paths the PyTorch golden (`fixtures/serialization`)
//! cannot cover, because PyTorch answers them differently or not at all.

use fxvm_tests::run;

fn run_code(code: &str) -> fxvm_tests::Run {
    run(&["run", "-c", code])
}

#[test]
fn rebuild_functions_called_directly_check_their_view() {
    let out = run_code(
        "import torch\nfrom torch._utils import _rebuild_tensor_v2\n\
         s = torch.arange(6.)\n\
         print(_rebuild_tensor_v2(s[2:], 1, (2, 2), (1, 2), True, None))\n\
         _rebuild_tensor_v2(s, 3, (2, 2), (1, 2), False, None)",
    );
    assert_eq!(out.status, Some(1), "{out:?}");
    assert!(
        out.stdout
            .starts_with("tensor([[1., 3.],\n        [2., 4.]], requires_grad=True)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.trim_end().ends_with(
            "RuntimeError: setStorage: sizes [2, 2], strides [1, 2], storage offset 3, and itemsize 4 requiring a storage size of 28 are out of bounds for storage of size 24"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn complex_storages_say_what_is_unsupported() {
    let out = run_code(&format!(
        "import torch\ntorch.load({:?})",
        fxvm_tests::fixtures()
            .join("checkpoints/complex.pt")
            .to_str()
            .unwrap()
    ));
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr.trim_end().ends_with(
            "NotImplementedError: fxvm cannot load tensors of type ComplexFloatStorage yet"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn map_location_other_than_the_cpu_is_refused() {
    let out = run_code(&format!(
        "import torch\ntorch.load({:?}, map_location='cuda')",
        fxvm_tests::fixtures()
            .join("checkpoints/tiny_state_dict.pt")
            .to_str()
            .unwrap()
    ));
    assert_eq!(out.status, Some(1));
    assert!(
        out.stderr
            .trim_end()
            .ends_with("RuntimeError: Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map your storages to the CPU."),
        "{}",
        out.stderr
    );
}

#[test]
fn truncated_and_malformed_pickles_raise_unpickling_error() {
    for data in [
        r"b'\x80\x02}q\x00(X'",
        r"b'\x80\x02K\x01K\x02K\x03\x82\x01.'",
        r"b'\x80\x02(u.'",
    ] {
        let out = run_code(&format!("import io, torch\ntorch.load(io.BytesIO({data}))"));
        assert_eq!(out.status, Some(1), "{data}: {out:?}");
        assert!(
            out.stderr.contains("pickle.UnpicklingError: "),
            "{data}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{data}: {}", out.stderr);
    }
}
