"""Timing cases for `cargo bench --bench replay`: a small MLP ([2, 16]), a
CIFAR-size CNN (batch 1 and 32) and a GPT-like block (T=16 and T=256), run
eagerly and — under fxvm — replayed by torch.compile (fxvm's capture and
native replay). Each line is `case seconds` (best of several rounds)."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
try:
    import fxvm  # noqa: F401

    FXVM = True
except ImportError:
    FXVM = False


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(torch.flatten(x, 1))


class Block(nn.Module):
    def __init__(self, n_embd=128, n_head=4):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.fc = nn.Linear(n_embd, 4 * n_embd)
        self.proj = nn.Linear(4 * n_embd, n_embd)
        self.n_head = n_head

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x))))


def repeats(fn, x):
    """How many calls make a round of at least 20 ms."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(x)
        if time.perf_counter() - t0 > 0.02 or n >= 1 << 14:
            return n
        n *= 2


def best(fns, x, rounds=7):
    """Each function's best seconds per call, rounds alternating between
    them so machine noise hits all alike."""
    ns = [repeats(fn, x) for fn in fns]
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, n, ts in zip(fns, ns, times):
            t0 = time.perf_counter()
            for _ in range(n):
                fn(x)
            ts.append((time.perf_counter() - t0) / n)
    return [min(ts) for ts in times]


mlp = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10)).eval()
cnn = CNN().eval()
block = Block().eval()
cases = [
    ("mlp_2x16", mlp, torch.randn(2, 16)),
    ("cnn_b1", cnn, torch.randn(1, 3, 32, 32)),
    ("cnn_b32", cnn, torch.randn(32, 3, 32, 32)),
    ("gpt_block_t16", block, torch.randn(1, 16, 128)),
    ("gpt_block_t256", block, torch.randn(1, 256, 128)),
]
with torch.no_grad():
    for name, model, x in cases:
        if not FXVM:
            print(f"{name}_eager", best([model], x)[0])
            continue
        compiled = torch.compile(model)
        compiled(x)
        assert torch.allclose(compiled(x), model(x), atol=1e-5), name
        eager, replay = best([model, compiled], x)
        print(f"{name}_eager", eager)
        print(f"{name}_replay", replay)
