"""``torch._dynamo``: the parts model libraries import (see ``torch.compiler``)."""

from torch.compiler import allow_in_graph, assume_constant_result, disable, is_compiling

__all__ = ["allow_in_graph", "assume_constant_result", "disable", "is_compiling"]
