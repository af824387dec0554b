"""``torch.fx``: graphs of Python operations, the code generated from them,
and passes over them. The IR (``Graph``, ``Node``) is native Rust."""

from torch.fx.graph import CodeGen, Graph
from torch.fx.graph_module import GraphModule
from torch.fx.interpreter import Interpreter, Transformer
from torch.fx.node import Node, has_side_effect, map_arg
from torch.fx.proxy import Proxy
from torch.fx._symbolic_trace import PH, ProxyableClassMeta, Tracer, symbolic_trace, wrap
from torch.fx.subgraph_rewriter import replace_pattern

__all__ = [
    "Graph",
    "CodeGen",
    "GraphModule",
    "Interpreter",
    "Transformer",
    "Node",
    "Proxy",
    "map_arg",
    "has_side_effect",
    "replace_pattern",
    "symbolic_trace",
    "Tracer",
    "wrap",
    "PH",
    "ProxyableClassMeta",
]
