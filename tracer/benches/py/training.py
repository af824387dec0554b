"""Times whole training steps (zero_grad, forward, loss, backward,
optimizer step) and the optimizer update alone; run by fxvm and by
CPython+PyTorch side by side (benches/training.rs). Prints one
`name seconds` line per case, the best of several repeats."""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

from timing import best_within as best

torch.manual_seed(0)
cases = {}


def step_case(name, model, opt, batch, loss_fn):
    def step():
        opt.zero_grad()
        loss_fn(model, *batch).backward()
        opt.step()

    cases[name] = step


# An MLP 64 -> 256 -> 256 -> 10 at batch 32, SGD with momentum.
mlp = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
step_case(
    "mlp_sgd_b32",
    mlp,
    torch.optim.SGD(mlp.parameters(), lr=0.01, momentum=0.9),
    (torch.randn(32, 64), torch.randint(0, 10, (32,))),
    lambda m, x, y: F.cross_entropy(m(x), y),
)


# pytorch/examples' mnist Net at batch 64 with Adadelta.
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(self.dropout1(x), 1)
        x = self.dropout2(F.relu(self.fc1(x)))
        return F.log_softmax(self.fc2(x), dim=1)


net = Net()
step_case(
    "mnist_adadelta_b64",
    net,
    torch.optim.Adadelta(net.parameters(), lr=1.0),
    (torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))),
    lambda m, x, y: F.nll_loss(m(x), y),
)


# A GPT of 4 layers, 4 heads, width 128, T=64, batch 8, AdamW (nanoGPT's block).
class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class GPT(nn.Module):
    def __init__(self, vocab=256, d=128, layers=4, heads=4, block=64):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx, targets):
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.ln(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


gpt = GPT()
decay = [p for p in gpt.parameters() if p.dim() >= 2]
no_decay = [p for p in gpt.parameters() if p.dim() < 2]
gpt_opt = torch.optim.AdamW(
    [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-4, betas=(0.9, 0.95)
)
step_case(
    "gpt_adamw_b8",
    gpt,
    gpt_opt,
    (torch.randint(0, 256, (8, 64)), torch.randint(0, 256, (8, 64))),
    lambda m, i, t: m(i, t),
)


# The autograd targets, per model: the forward pass (with its loss) with
# grad mode on and under no_grad (the bookkeeping's cost), and forward plus
# backward (the backward's cost is the difference).
def autograd_cases(label, model, batch, loss_fn):
    params = list(model.parameters())

    def forward_grad():
        loss_fn(model, *batch)

    def forward_nograd():
        with torch.no_grad():
            loss_fn(model, *batch)

    def forward_backward():
        for p in params:
            p.grad = None
        loss_fn(model, *batch).backward()

    cases[f"forward_grad_{label}"] = forward_grad
    cases[f"forward_nograd_{label}"] = forward_nograd
    cases[f"forward_backward_{label}"] = forward_backward


autograd_cases("mlp", mlp, (torch.randn(32, 64), torch.randint(0, 10, (32,))), lambda m, x, y: F.cross_entropy(m(x), y))
autograd_cases(
    "mnist", net, (torch.randn(64, 1, 28, 28), torch.randint(0, 10, (64,))), lambda m, x, y: F.nll_loss(m(x), y)
)
autograd_cases("gpt", gpt, (torch.randint(0, 256, (8, 64)), torch.randint(0, 256, (8, 64))), lambda m, i, t: m(i, t))

# The optimizer update alone, gradients in place: where a fused native
# update per group meets PyTorch's per-tensor loop.
for name, make in [
    ("adamw", lambda ps: torch.optim.AdamW(ps, lr=1e-3)),
    ("sgd_momentum", lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9)),
]:
    for label, shapes in [("mlp", [(256, 64), (256,), (256, 256), (256,), (10, 256), (10,)]), ("1M", [(1024, 1024)])]:
        params = [nn.Parameter(torch.randn(s)) for s in shapes]
        for p in params:
            p.grad = torch.randn_like(p)
        opt = make(params)
        cases[f"update_{name}_{label}"] = opt.step

# The same steps captured (fxvm.global_function: recorded once, replayed
# natively); fxvm only — the bench compares them with both eager steps.
try:
    import fxvm
except ImportError:
    fxvm = None
if fxvm is not None:
    for name in [n for n in cases if n.endswith(("_b32", "_b64", "_b8"))]:
        cases[f"{name}_captured"] = fxvm.global_function()(cases[name])

only = sys.argv[1:]
for name, f in cases.items():
    if not only or name in only:
        print(name, best(f), flush=True)
