"""Times loading a large float32 state_dict; run by fxvm and by CPython +
PyTorch side by side (benches/load.rs). Both read the same files, written
once by whichever runs first under $TMPDIR/fxvm-bench-load (size from
$FXVM_BENCH_LOAD_MB, default 500). Prints `name value` lines: seconds for
each way of loading (once per process), and megabytes of resident memory a
memory-mapped load adds before and after one tensor is read."""
import os
import tempfile
import time

import torch

megabytes = int(os.environ.get("FXVM_BENCH_LOAD_MB", "500"))
folder = os.path.join(tempfile.gettempdir(), "fxvm-bench-load")
pt = os.path.join(folder, f"state_dict_{megabytes}mb.pt")
st = os.path.join(folder, f"state_dict_{megabytes}mb.safetensors")
if not (os.path.exists(pt) and os.path.exists(st)):
    from safetensors.torch import save_file

    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    # 4 MB matrices, as a large model's layers.
    sd = {f"layers.{i}.weight": torch.randn(1024, 1024) for i in range(megabytes // 4)}
    torch.save(sd, pt)
    save_file(sd, st)
    del sd

from safetensors.torch import load_file


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return 0.0


def once(f):
    # One load per process, as a program loads its weights: a second load
    # in the same process reuses memory the allocator kept from the first
    # (PyTorch's then takes a fifth of the time), which is not what users
    # see. The harness keeps each case's best over its rounds.
    start = time.perf_counter()
    loaded = f()
    elapsed = time.perf_counter() - start
    del loaded
    return elapsed


# Warm up: the modules loading needs are imported before timing.
tiny = os.path.join(folder, "tiny.pt")
torch.save({"x": torch.ones(2)}, tiny)
torch.load(tiny)
torch.load(tiny, mmap=True)
load_file(st)
print("load", once(lambda: torch.load(pt)), flush=True)
print("load_mmap", once(lambda: torch.load(pt, mmap=True)), flush=True)
print("safetensors", once(lambda: load_file(st)), flush=True)
before = rss_mb()
mapped = torch.load(pt, mmap=True)
print("rss_mmap_mb", rss_mb() - before)
float(mapped["layers.0.weight"].sum())
print("rss_touched_mb", rss_mb() - before)
