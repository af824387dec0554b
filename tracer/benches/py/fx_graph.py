"""Builds a 10,000-node chain graph, prints it and generates its code; prints
`case seconds` lines (best of a few runs). Runs under fxvm and CPython+PyTorch."""

import torch
import torch.fx as fx
from timing import best

N = 10_000


def build():
    g = fx.Graph()
    x = g.placeholder("x")
    for i in range(N):
        x = g.call_function(torch.relu, (x,)) if i % 2 else g.call_method("add", (x, 1.0))
    g.output(x)
    return g


g = build()
build_t = best(build, 3)
str_t = best(lambda: str(g), 3)
code_t = best(lambda: g.python_code("self"), 3)
print("build", build_t)
print("print", str_t)
print("codegen", code_t)
print("total", build_t + str_t + code_t)
