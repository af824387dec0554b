"""Times numpy on 1M-element float32 arrays and a memory-mapped file; run by
fxvm (its native numpy) and by CPython + numpy side by side
(benches/numpy_ops.rs). Prints one `name seconds` line per case."""
import os
import tempfile

import numpy as np

from timing import best, best_within

cases = {}
np.random.seed(0)
x = np.random.rand(1_000_000).astype(np.float32)
y = np.random.rand(1_000_000).astype(np.float32)
m = x.reshape(1000, 1000)
cases["add_1M"] = lambda: x + y
cases["multiply_scalar_1M"] = lambda: x * 2.5
cases["exp_1M"] = lambda: np.exp(x)
cases["where_1M"] = lambda: np.where(x > 0.5, x, y)
cases["sum_1M"] = lambda: x.sum()
cases["mean_axis0_1M"] = lambda: m.mean(axis=0)
cases["max_1M"] = lambda: x.max()
cases["argmax_rows_1M"] = lambda: m.argmax(axis=1)
cases["matmul_1000"] = lambda: m @ m
cases["sort_1M"] = lambda: np.sort(x)
cases["slice_copy_1M"] = lambda: x[::2].copy()
cases["astype_int64_1M"] = lambda: x.astype(np.int64)
for name, f in cases.items():
    print(name, best_within(f))

# nanoGPT's loader: open a 500 MB uint16 token file as a memmap and slice a
# block out of it (the file is made once and kept in the temp folder).
path = os.path.join(tempfile.gettempdir(), "fxvm-bench-tokens-500MB.bin")
if not os.path.exists(path) or os.path.getsize(path) != 500_000_000:
    with open(path, "wb") as f:
        chunk = (np.arange(1_000_000) % 50257).astype(np.uint16).tobytes()
        for _ in range(250):
            f.write(chunk)


def open_and_slice():
    data = np.memmap(path, dtype=np.uint16, mode="r")
    block = data[123_456_789 : 123_456_789 + 1024].astype(np.int64)
    return block.sum()


print("memmap_open_slice_500MB", best(open_and_slice, repeat=20))
