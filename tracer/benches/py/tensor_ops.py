"""Times fp32 kernels; run by fxvm and by CPython+PyTorch side by side
(benches/tensor_ops.rs). Prints one `name seconds` line per case: the best
of several repeats, so a noisy neighbour inflates less."""
import sys
import time

import torch
import torch.nn.functional as F


def best(f, budget=0.4, repeats=5):
    f()  # warm up
    times = []
    for _ in range(repeats):
        n, start = 0, time.perf_counter()
        while True:
            f()
            n += 1
            elapsed = time.perf_counter() - start
            if elapsed > budget / repeats:
                break
        times.append(elapsed / n)
    return min(times)


cases = {}
for n in (256, 1024, 2048):
    a, b = torch.randn(n, n), torch.randn(n, n)
    cases[f"matmul_{n}"] = lambda a=a, b=b: a @ b
# ResNet-50 layer shapes (batch 1 and 8): 3x3 in a stage, 1x1 projection, the stem.
for name, (n, c, h, o, k, s, p) in {
    "conv_stem": (1, 3, 224, 64, 7, 2, 3),
    "conv_3x3_56": (8, 64, 56, 64, 3, 1, 1),
    "conv_3x3_14": (8, 256, 14, 256, 3, 1, 1),
    "conv_1x1_28": (8, 512, 28, 128, 1, 1, 0),
}.items():
    x, w = torch.randn(n, c, h, h), torch.randn(o, c, k, k)
    cases[name] = lambda x=x, w=w, s=s, p=p: F.conv2d(x, w, stride=s, padding=p)
x, y = torch.randn(1_000_000), torch.randn(1_000_000)
cases["add_1M"] = lambda: x + y
cases["softmax_1M"] = lambda: torch.softmax(x.view(1000, 1000), dim=-1)
cases["relu_1M"] = lambda: torch.relu(x)
cases["sum_1M"] = lambda: x.sum()

only = sys.argv[1:]
torch.manual_seed(0)
for name, f in cases.items():
    if not only or name in only:
        print(name, best(f), flush=True)
