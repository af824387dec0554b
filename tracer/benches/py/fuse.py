"""Conv+BatchNorm fusion (torch.fx.experimental.optimization.fuse) on a
ResNet-50-like model in eval mode: forward time unfused and fused, batch 1 at
224x224. Prints `case seconds` (best of a few runs). Runs under fxvm and
under CPython + PyTorch."""

import os
import sys

import torch
from torch.fx.experimental.optimization import fuse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "fixtures", "cli"))
from resnet50 import ResNet50  # noqa: E402
from timing import best  # noqa: E402


torch.manual_seed(0)
model = ResNet50(width=64, num_classes=1000).eval()
fused = fuse(model)
x = torch.randn(1, 3, 224, 224)
with torch.no_grad():
    assert torch.allclose(model(x), fused(x), rtol=1e-3, atol=1e-3)
    print("resnet50_unfused", best(lambda: model(x)))
    print("resnet50_fused", best(lambda: fused(x)))
