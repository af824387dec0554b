"""``torch._dynamo``: the parts model libraries import (see ``torch.compiler``),
and ``config.cache_size_limit``, the most graphs a compiled function keeps."""

from torch.compiler import allow_in_graph, assume_constant_result, disable, is_compiling, reset

__all__ = ["allow_in_graph", "assume_constant_result", "config", "disable", "is_compiling", "reset"]


class _Config:
    cache_size_limit = 8
    # Accepted and ignored: fxvm replays whole graphs.
    suppress_errors = False
    verbose = False


config = _Config()
