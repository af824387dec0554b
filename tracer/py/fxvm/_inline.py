"""The graph a replay plan runs: a captured graph with each module call
replaced by the ops of that module's forward (traced on its own, with no
module kept whole), so leaf layers such as ``nn.Linear`` replay as registry
ops. A module whose forward cannot be traced stays one call, which the
plan runs in Python."""

import torch.fx as fx
from torch.fx.experimental.shape_trace import ShapeTracer
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule


class _Inliner(ShapeTracer):
    """Traces through every module, its inputs being the fake values they
    had at the call: shape checks in a layer's forward (BatchNorm's rank
    check) are answered from them, and any guard they leave joins the
    captured graph's."""

    # A buffer a forward writes (BatchNorm's `num_batches_tracked.add_(1)`)
    # must be a graph input the write is recorded on; read as a constant,
    # the write would happen once, at capture, and never on replay.
    proxy_buffer_attributes = True

    def __init__(self, fakes, shape_env):
        fx.Tracer.__init__(self)
        self._fakes = fakes
        self.shape_env = shape_env
        self.example_inputs = {}
        self.dynamic = {}
        self.input_dims = {}

    def is_leaf_module(self, m, qualified_name):
        return False

    def _placeholder_value(self, name):
        return self._fakes.get(name.lstrip("*"))


def _subgraph(module, node, shape_env):
    """The graph of ``module``'s forward for the call ``node``, or None."""
    forward = type(module).forward
    code = forward.__code__
    names = list(code.co_varnames[1 : code.co_argcount])
    vals = [a.meta.get("val") if isinstance(a, fx.Node) else a for a in node.args]
    fakes = dict(zip(names, vals))
    for k, v in node.kwargs.items():
        fakes[k] = v.meta.get("val") if isinstance(v, fx.Node) else v
    try:
        return _Inliner(fakes, shape_env).trace(module)
    except Exception:  # any failure keeps the call whole
        return None


def inline_modules(gm, shape_env):
    """A GraphModule on ``gm``'s root whose graph has every traceable
    module call replaced by its forward's nodes (new nodes carry no
    ``meta["val"]``; see ``shape_trace.annotate``)."""
    graph = Graph()
    env = {}
    for node in gm.graph.nodes:
        if node.op != "call_module":
            env[node] = graph.node_copy(node, lambda n: env[n])
            continue
        module = gm.get_submodule(node.target)
        sub = _subgraph(module, node, shape_env) or False
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
                inner[sn] = graph.call_module(
                    f"{node.target}.{sn.target}",
                    fx.node.map_arg(sn.args, lambda n: inner[n]),
                    fx.node.map_arg(sn.kwargs, lambda n: inner[n]),
                )
            else:
                inner[sn] = graph.node_copy(sn, lambda n: inner[n])
        env[node] = result
    flat = GraphModule(gm, graph, gm.__class__.__name__)
    # What a layer computed only to check it (BatchNorm's `input.dim() != 4`)
    # goes; anything that writes — in-place ops, item assignment, module
    # calls left whole — stays.
    flat.graph.eliminate_dead_code(_writes)
    flat.recompile()
    return flat


def _writes(node):
    if node.op in ("placeholder", "output", "call_module"):
        return True
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return name.endswith("_") and not name.endswith("__") or name in ("setitem", "__setitem__") or node.is_impure()
