"""Builds a 10,000-node chain graph, prints it and generates its code; prints
`case seconds` lines (best of a few runs). Runs under fxvm and CPython+PyTorch."""

import time

import torch
import torch.fx as fx

N = 10_000


def build():
    g = fx.Graph()
    x = g.placeholder("x")
    for i in range(N):
        x = g.call_function(torch.relu, (x,)) if i % 2 else g.call_method("add", (x, 1.0))
    g.output(x)
    return g


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


g = build()
build_t = best(build)
str_t = best(lambda: str(g))
code_t = best(lambda: g.python_code("self"))
print("build", build_t)
print("print", str_t)
print("codegen", code_t)
print("total", build_t + str_t + code_t)
