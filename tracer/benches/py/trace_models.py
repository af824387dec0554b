"""Trace time of models written in plain torch: a ResNet-50-like and a
GPT-2-small-like model, and models in the style of torchvision's resnet18,
mobilenet_v2, ConvNeXt-tiny and EfficientNet-b0 definitions (written here,
at reduced widths: tracing cost is per node, not per weight). Prints
`case seconds` (best of a few runs) and the node counts. Runs under fxvm
and under CPython + PyTorch."""

import math
import os
import sys

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F
from timing import best

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "cli"))
from resnet50 import ResNet50  # noqa: E402


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=50257, block=1024, n_layer=12, n_head=12, n_embd=768):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        pos = torch.arange(0, idx.size(1), dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class BasicBlock(nn.Module):
    def __init__(self, inplanes, planes, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = None
        if stride != 1 or inplanes != planes:
            self.downsample = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False), nn.BatchNorm2d(planes))

    def forward(self, x):
        identity = x if self.downsample is None else self.downsample(x)
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    def __init__(self, width=16, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        stages, inplanes = [], width
        for i, planes in enumerate((width, 2 * width, 4 * width, 8 * width)):
            stride = 1 if i == 0 else 2
            stages.append(nn.Sequential(BasicBlock(inplanes, planes, stride), BasicBlock(planes, planes)))
            inplanes = planes
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(inplanes, num_classes)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


class ConvNormActivation(nn.Sequential):
    """Conv2d, BatchNorm2d and an activation, as torchvision's Conv2dNormActivation."""

    def __init__(self, cin, cout, kernel=3, stride=1, groups=1, activation=nn.ReLU6):
        layers = [nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
        if activation is not None:
            layers.append(activation(inplace=True))
        super().__init__(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res_connect = stride == 1 and cin == cout
        layers = [] if expand == 1 else [ConvNormActivation(cin, hidden, 1)]
        layers += [ConvNormActivation(hidden, hidden, stride=stride, groups=hidden), nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        settings = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 3, 2), (6, 32, 4, 2), (6, 48, 3, 1), (6, 80, 3, 2), (6, 160, 1, 1)]
        layers, cin = [ConvNormActivation(3, 16, stride=2)], 16
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(ConvNormActivation(cin, 320, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(320, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


class Permute(nn.Module):
    def __init__(self, dims):
        super().__init__()
        self.dims = dims

    def forward(self, x):
        return torch.permute(x, self.dims)


class StochasticDepth(nn.Module):
    """Row-wise stochastic depth; the identity when not training."""

    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if not self.training or self.p == 0.0:
            return x
        keep = torch.empty([x.shape[0]] + [1] * (x.ndim - 1)).bernoulli_(1.0 - self.p)
        return x * keep / (1.0 - self.p)


class LayerNorm2d(nn.LayerNorm):
    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, p):
        super().__init__()
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, 7, padding=3, groups=dim),
            Permute([0, 2, 3, 1]),
            nn.LayerNorm(dim, eps=1e-6),
            nn.Linear(dim, 4 * dim),
            nn.GELU(),
            nn.Linear(4 * dim, dim),
            Permute([0, 3, 1, 2]),
        )
        self.layer_scale = nn.Parameter(torch.ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(p)

    def forward(self, x):
        return self.stochastic_depth(self.layer_scale * self.block(x)) + x


class ConvNeXtTiny(nn.Module):
    def __init__(self, dims=(24, 48, 96, 192), depths=(3, 3, 9, 3), num_classes=10):
        super().__init__()
        layers = [nn.Sequential(nn.Conv2d(3, dims[0], 4, stride=4), LayerNorm2d(dims[0], eps=1e-6))]
        total, done = sum(depths), 0
        for i, (dim, depth) in enumerate(zip(dims, depths)):
            blocks = []
            for _ in range(depth):
                blocks.append(CNBlock(dim, 1e-6, 0.1 * done / (total - 1)))
                done += 1
            layers.append(nn.Sequential(*blocks))
            if i + 1 < len(dims):
                layers.append(nn.Sequential(LayerNorm2d(dim, eps=1e-6), nn.Conv2d(dim, dims[i + 1], 2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(LayerNorm2d(dims[-1], eps=1e-6), nn.Flatten(1), nn.Linear(dims[-1], num_classes))

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


class SqueezeExcitation(nn.Module):
    def __init__(self, cin, squeeze):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(cin, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, cin, 1)
        self.activation = nn.SiLU()
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class MBConv(nn.Module):
    def __init__(self, cin, cout, kernel, stride, expand, p):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        hidden = cin * expand
        layers = [] if hidden == cin else [ConvNormActivation(cin, hidden, 1, activation=nn.SiLU)]
        layers += [
            ConvNormActivation(hidden, hidden, kernel, stride, groups=hidden, activation=nn.SiLU),
            SqueezeExcitation(hidden, max(1, cin // 4)),
            ConvNormActivation(hidden, cout, 1, activation=None),
        ]
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(p)

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result = self.stochastic_depth(result) + x
        return result


class EfficientNetB0(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        settings = [(1, 3, 1, 16, 8, 1), (6, 3, 2, 8, 12, 2), (6, 5, 2, 12, 20, 2), (6, 3, 2, 20, 40, 3), (6, 5, 1, 40, 56, 3), (6, 5, 2, 56, 96, 4), (6, 3, 1, 96, 160, 1)]
        total = sum(s[-1] for s in settings)
        layers, done = [ConvNormActivation(3, 16, stride=2, activation=nn.SiLU)], 0
        for expand, kernel, stride, cin, cout, n in settings:
            stage = []
            for i in range(n):
                stage.append(MBConv(cin if i == 0 else cout, cout, kernel, stride if i == 0 else 1, expand, 0.2 * done / total))
                done += 1
            layers.append(nn.Sequential(*stage))
        layers.append(ConvNormActivation(160, 320, 1, activation=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2, inplace=True), nn.Linear(320, num_classes))

    def forward(self, x):
        return self.classifier(torch.flatten(self.avgpool(self.features(x)), 1))


# Small widths keep building the models cheap; tracing cost is per node.
resnet = ResNet50(width=64, num_classes=10)
gpt = GPT2(vocab=512, block=64, n_embd=96)
models = [
    ("resnet50", resnet),
    ("gpt2_small", gpt),
    ("resnet18", ResNet18().eval()),
    ("mobilenet_v2", MobileNetV2().eval()),
    ("convnext_tiny", ConvNeXtTiny().eval()),
    ("efficientnet_b0", EfficientNetB0().eval()),
]
for name, model in models:
    nodes = len(fx.symbolic_trace(model).graph.nodes)
    print(name, best(lambda: fx.symbolic_trace(model)))
    print(name + "_nodes", nodes)
    # The trace plus its forward ready to run (fxvm compiles the generated
    # code on first use; torch.fx at the end of symbolic_trace).
    print(name + "_compiled", best(lambda: fx.symbolic_trace(model).forward))



# A user's tracer that overrides one hook (calling super()), as passes that
# tag nodes do: only that hook runs in Python.
class TaggingTracer(fx.Tracer):
    def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
        node = super().create_node(kind, target, args, kwargs, name, type_expr)
        node.meta["tagged"] = True
        return node


print("resnet50_custom_tracer", best(lambda: TaggingTracer().trace(resnet)))

# Tracing with example shapes (fxvm only): the GPT-2-like model with its
# length symbolic, against symbolic_trace of the same model in this process.
try:
    from torch.fx.experimental.shape_trace import shape_trace
except ImportError:
    shape_trace = None
if shape_trace is not None:
    idx = torch.zeros(1, 8, dtype=torch.long)
    print("gpt2_small_plain", best(lambda: fx.symbolic_trace(gpt)))
    print("gpt2_small_shapes", best(lambda: shape_trace(gpt, (idx,), dynamic={"idx": [1]})))

# Pictures (fxvm only): the HTML page of a ~2,000-node GPT (layout, SVG and
# node table), against tracing the same model.
try:
    from torch.fx.passes.graph_drawer import render
except ImportError:
    render = None
if render is not None:
    deep = GPT2(vocab=64, block=16, n_layer=80, n_embd=16, n_head=2)
    traced = fx.symbolic_trace(deep)
    print("gpt_deep_nodes", len(traced.graph.nodes))
    print("gpt_deep_trace", best(lambda: fx.symbolic_trace(deep), repeat=3))
    print("gpt_deep_html", best(lambda: render(traced, "gpt", "html"), repeat=3))
