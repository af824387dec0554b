"""The graph a replay plan runs: a captured graph with each module call
replaced by the ops of that module's forward (traced on its own, with no
module kept whole), so leaf layers such as ``nn.Linear`` replay as registry
ops. A module whose forward cannot be traced stays one call, which the
plan runs in Python."""

import torch.fx as fx
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule


class _Inliner(fx.Tracer):
    """Traces through every module."""

    def is_leaf_module(self, m, qualified_name):
        return False


def _subgraph(module):
    try:
        return _Inliner().trace(module)
    except Exception:  # any failure keeps the call whole
        return None


def inline_modules(gm):
    """A GraphModule on ``gm``'s root whose graph has every traceable
    module call replaced by its forward's nodes (new nodes carry no
    ``meta["val"]``; see ``shape_trace.annotate``)."""
    graph = Graph()
    env = {}
    cache = {}
    for node in gm.graph.nodes:
        if node.op != "call_module":
            env[node] = graph.node_copy(node, lambda n: env[n])
            continue
        module = gm.get_submodule(node.target)
        sub = cache.get(node.target)
        if sub is None:
            sub = cache[node.target] = _subgraph(module) or False
        out = [n for n in sub.nodes if n.op == "output"] if sub is not False else []
        if sub is False or not out or not isinstance(out[0].args[0], fx.Node):
            # Untraceable, or a forward returning a tuple or a constant:
            # the call stays whole (its uses expect one value).
            env[node] = graph.node_copy(node, lambda n: env[n])
            continue
        args = list(fx.node.map_arg(node.args, lambda n: env[n]))
        kwargs = fx.node.map_arg(node.kwargs, lambda n: env[n])
        inner = {}
        result = None
        for sn in sub.nodes:
            if sn.op == "placeholder":
                name = sn.target.lstrip("*")
                if args:
                    inner[sn] = args.pop(0)
                elif name in kwargs:
                    inner[sn] = kwargs[name]
                else:
                    inner[sn] = sn.args[0] if sn.args else None
            elif sn.op == "get_attr":
                inner[sn] = graph.get_attr(f"{node.target}.{sn.target}")
            elif sn.op == "output":
                result = fx.node.map_arg(sn.args[0], lambda n: inner[n])
            elif sn.op == "call_module":
                inner[sn] = graph.call_module(f"{node.target}.{sn.target}", fx.node.map_arg(sn.args, lambda n: inner[n]), fx.node.map_arg(sn.kwargs, lambda n: inner[n]))
            else:
                inner[sn] = graph.node_copy(sn, lambda n: inner[n])
        env[node] = result
    flat = GraphModule(gm, graph, gm.__class__.__name__)
    return flat
