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
