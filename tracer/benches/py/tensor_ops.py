"""Times fp32 kernels; run by fxvm and by CPython+PyTorch side by side
(benches/tensor_ops.rs). Prints one `name seconds` line per case: the best
of several repeats, so a noisy neighbour inflates less."""
import sys

import torch
import torch.nn.functional as F

from timing import best_within as best

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
    "conv_3x3_56_b1": (1, 64, 56, 64, 3, 1, 1),
    "conv_3x3_56_b32": (32, 64, 56, 64, 3, 1, 1),
}.items():
    x, w = torch.randn(n, c, h, h), torch.randn(o, c, k, k)
    cases[name] = lambda x=x, w=w, s=s, p=p: F.conv2d(x, w, stride=s, padding=p)
# Depthwise convolutions (MobileNetV2's 3x3 at two strides, EfficientNet's 5x5),
# forward and (dw_*_grad) input and weight gradients.
for name, (n, c, h, k, s) in {
    "dw_3x3_112_s2": (1, 32, 112, 3, 2),
    "dw_3x3_14": (1, 384, 14, 3, 1),
    "dw_5x5_28_b8": (8, 144, 28, 5, 1),
}.items():
    x, w = torch.randn(n, c, h, h), torch.randn(c, 1, k, k)
    cases[name] = lambda x=x, w=w, s=s, k=k, c=c: F.conv2d(x, w, stride=s, padding=k // 2, groups=c)
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()
    yg = F.conv2d(xg, wg, stride=s, padding=k // 2, groups=c)
    gy = torch.randn_like(yg)
    cases[name + "_grad"] = lambda xg=xg, wg=wg, yg=yg, gy=gy: torch.autograd.grad(yg, (xg, wg), gy, retain_graph=True)
# DCGAN's generator: a 4x4 stride-2 transposed convolution doubling 16x16 to 32x32.
xt, wt = torch.randn(8, 256, 16, 16), torch.randn(256, 128, 4, 4)
cases["conv_transpose_dcgan"] = lambda: F.conv_transpose2d(xt, wt, stride=2, padding=1)
# A 2-layer LSTM, hidden 256, 64 steps, batch 8 (the target), inference.
lstm = torch.nn.LSTM(256, 256, 2).eval()
seq = torch.randn(64, 8, 256)
cases["lstm_2x256"] = lambda lstm=lstm: lstm(seq)
# A linear layer on a small batch (inference): 8 rows through a 512 -> 2048 weight.
xl, wl = torch.randn(8, 512), torch.randn(2048, 512)
cases["linear_8x512x2048"] = lambda xl=xl: F.linear(xl, wl)
for rows in (32, 64):
    xr = torch.randn(rows, 512)
    cases[f"linear_{rows}x512x2048"] = lambda xr=xr: F.linear(xr, wl)
x, y = torch.randn(1_000_000), torch.randn(1_000_000)
cases["topk_1M_k10"] = lambda: torch.topk(x, 10)
cases["topk_rows_k5"] = lambda: torch.topk(x.view(1000, 1000), 5)
cases["sort_1M"] = lambda: torch.sort(x)
cases["add_1M"] = lambda: x + y
cases["softmax_1M"] = lambda: torch.softmax(x.view(1000, 1000), dim=-1)
cases["relu_1M"] = lambda: torch.relu(x)
cases["sigmoid_1M"] = lambda: torch.sigmoid(x)
cases["tanh_1M"] = lambda: torch.tanh(x)
cases["sum_1M"] = lambda: x.sum()
# Per-op overhead: tiny tensors, so the time is the call path, not the kernel.
# `op_loop` times the timing loop itself (calling an empty lambda), which the
# harness subtracts: RustPython runs that loop several times slower than CPython.
x4, y4 = torch.randn(4), torch.randn(4)
cases["op_loop"] = lambda: None
cases["op_add_4"] = lambda: x4 + y4
cases["op_relu_4"] = lambda: torch.relu(x4)
mlp = torch.nn.Sequential(
    torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)
)
x2 = torch.randn(2, 16)
cases["op_mlp_2x16"] = lambda: mlp(x2)


def no_grad_mlp():
    with torch.no_grad():
        return mlp(x2)


# The same forward without recording: op_mlp_2x16 over this is what
# autograd's bookkeeping costs a forward pass.
cases["op_mlp_2x16_no_grad"] = no_grad_mlp
# Training steps (forward and backward; gradients dropped each time).
mlp_big = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))
xb, yb = torch.randn(64, 256), torch.randint(0, 10, (64,))


def train_mlp():
    mlp_big.zero_grad()
    F.cross_entropy(mlp_big(xb), yb).backward()


cases["train_mlp_64x256"] = train_mlp
cnn = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(32 * 8 * 8, 10),
)
xc, yc = torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))


def train_cnn():
    cnn.zero_grad()
    F.cross_entropy(cnn(xc), yc).backward()


cases["train_cnn_b8"] = train_cnn
lstm_small = torch.nn.LSTM(64, 64, num_layers=2)
x_seq = torch.randn(35, 20, 64)


def train_lstm():
    lstm_small.zero_grad()
    out, _ = lstm_small(x_seq)
    out.sum().backward()


# word_language_model's shape at a quarter of its width.
cases["train_lstm_35x20"] = train_lstm

only = sys.argv[1:]
torch.manual_seed(0)
for name, f in cases.items():
    if not only or name in only:
        print(name, best(f), flush=True)
