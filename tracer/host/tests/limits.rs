//! The memory limit, in a test binary of its own and one host at a time:
//! with other hosts running concurrently in the process, a failed script's
//! tensors have sometimes outlived its MemoryError (see the README's note);
//! with no other host running, it is reliable.

use std::sync::Mutex;

use fxvm::Host;

/// Held by each test: no two hosts run at once in this binary.
static ALONE: Mutex<()> = Mutex::new(());

#[test]
fn a_script_past_the_memory_cap_gets_memory_error_and_the_host_goes_on() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let host = Host::builder().memory_limit(1 << 20).build().unwrap();
    let e = host
        .run_str("import torch\nkeep = [torch.zeros(1024, 64) for _ in range(8)]\n")
        .unwrap_err();
    assert_eq!(e.exception_type(), Some("MemoryError"), "{e}");
    assert!(e.message.contains("host's limit of 1048576 bytes"), "{e}");
    assert!(e.traceback.contains("line 2"), "{}", e.traceback);
    // What the failed script held is freed with it; the next script runs.
    host.run_str("import torch\nx = torch.ones(1024, 64)\nassert float(x.sum()) == 65536.0\n")
        .unwrap();
    // Kernel outputs count too.
    let e = host
        .run_str("import torch\na = torch.ones(512, 256)\nb = a @ a.t()\n")
        .unwrap_err();
    assert_eq!(e.exception_type(), Some("MemoryError"), "{e}");
}
