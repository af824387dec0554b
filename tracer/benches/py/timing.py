"""Timing shared by the bench scripts (under fxvm and under CPython)."""

import time


def best(fn, repeat=5):
    """The fastest of ``repeat`` calls of ``fn``, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def best_within(f, budget=0.4, repeats=5):
    """The best mean time per call over ``repeats`` rounds that each call
    ``f`` for ``budget / repeats`` seconds, after one warm-up call: short
    cases get many calls, so a noisy neighbour inflates less."""
    f()
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
