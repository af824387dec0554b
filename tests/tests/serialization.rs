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

#[test]
fn a_failed_save_leaves_the_old_checkpoint_and_no_temporary_file() {
    // The new archive goes to a temporary file renamed over the old one: when
    // the rename (standing for any failure while writing) fails, the old
    // checkpoint is intact and the temporary file is gone.
    let scratch = fxvm_tests::Scratch::new("atomic-save");
    let code = format!(
        "import os, torch\n\
         d = {dir:?}\n\
         path = os.path.join(d, 'ck.pt')\n\
         torch.save({{'w': torch.ones(2)}}, path)\n\
         real = os.replace\n\
         def broken(a, b):\n    raise OSError('disk full')\n\
         os.replace = broken\n\
         try:\n    torch.save({{'w': torch.zeros(3)}}, path)\n\
         except OSError as e:\n    print('OSError', e)\n\
         os.replace = real\n\
         print(torch.load(path)['w'].tolist(), sorted(os.listdir(d)))",
        dir = scratch.path().to_str().unwrap()
    );
    let out = run_code(&code);
    assert_eq!(out.status, Some(0), "{}", out.stderr);
    assert_eq!(out.stdout, "OSError disk full\n[1.0, 1.0] ['ck.pt']\n");
}
