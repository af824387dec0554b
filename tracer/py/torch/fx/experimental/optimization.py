"""Inference-time graph rewrites on traced modules: folding an eval-mode
BatchNorm into the Conv/Linear layer before it (``fuse``), dropping
``nn.Dropout`` layers (``remove_dropout``), and cutting a list of nodes out
as a module of its own (``extract_subgraph``)."""

import copy

import torch.fx as fx
import torch.nn as nn
from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval

__all__ = ["matches_module_pattern", "replace_node_module", "fuse", "remove_dropout", "extract_subgraph"]

# (producer, BatchNorm) pairs that fold, tried in this order as torch.fx does.
_FUSABLE = (
    (nn.Conv1d, nn.BatchNorm1d),
    (nn.Conv2d, nn.BatchNorm2d),
    (nn.Conv3d, nn.BatchNorm3d),
    (nn.Linear, nn.BatchNorm1d),
)


def _parent_name(target):
    """``'a.b.c'`` -> ``('a.b', 'c')``; a top-level name has parent ``''``."""
    parent, _, name = target.rpartition(".")
    return parent, name


def matches_module_pattern(pattern, node, modules):
    """True when ``node`` and its first argument are ``call_module`` nodes of
    exactly the two module types of ``pattern`` (first argument first)."""
    if not node.args:
        return False
    for expected, current in zip(pattern, (node.args[0], node)):
        if not isinstance(current, fx.Node) or current.op != "call_module":
            return False
        if not isinstance(current.target, str) or current.target not in modules:
            return False
        if type(modules[current.target]) is not expected:
            return False
    return True


def replace_node_module(node, modules, new_module):
    """Installs ``new_module`` where ``node``'s target points, in the module
    tree and in the ``modules`` map."""
    assert isinstance(node.target, str), f"Expected str target, got {type(node.target)}"
    parent, name = _parent_name(node.target)
    modules[node.target] = new_module
    setattr(modules[parent], name, new_module)


def fuse(model, inplace=False, no_trace=False):
    """``model`` with each Conv1d/2d/3d or Linear whose only user is a
    BatchNorm (tracking running statistics) replaced by one layer computing
    both, for inference. Copies the model unless ``inplace``; ``no_trace``
    reuses a GraphModule's graph instead of tracing again."""
    if not inplace:
        model = copy.deepcopy(model)
    traced = model if no_trace and isinstance(model, fx.GraphModule) else fx.symbolic_trace(model)
    modules = dict(traced.named_modules())
    graph = copy.deepcopy(traced.graph)
    for pattern in _FUSABLE:
        for node in graph.nodes:
            if not matches_module_pattern(pattern, node, modules):
                continue
            producer = node.args[0]
            if len(producer.users) > 1:
                continue  # the un-normalised output is needed elsewhere
            bn = modules[node.target]
            if not bn.track_running_stats:
                continue
            first = modules[producer.target]
            fold = fuse_linear_bn_eval if pattern[0] is nn.Linear else fuse_conv_bn_eval
            replace_node_module(producer, modules, fold(first, bn))
            node.replace_all_uses_with(producer)
            graph.erase_node(node)
    return fx.GraphModule(traced, graph)


class _DropoutRemover(fx.Transformer):
    def call_module(self, target, args, kwargs):
        if isinstance(self.submodules[target], nn.Dropout):
            assert len(args) == 1, f"Expected 1 arg for Dropout, got {len(args)}"
            return args[0]
        return super().call_module(target, args, kwargs)


def remove_dropout(model):
    """A traced copy of ``model`` without its ``nn.Dropout`` layers (the
    other dropout kinds, which are not subclasses, stay)."""
    return _DropoutRemover(fx.symbolic_trace(model)).transform()


def extract_subgraph(orig_module, nodes, inputs, outputs):
    """A GraphModule over ``orig_module`` running ``nodes`` (in order) with
    ``inputs`` as placeholders and returning the list of ``outputs``."""
    graph = fx.Graph()
    env = {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
    for node in nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output([env[node] for node in outputs])
    graph.lint()
    return fx.GraphModule(orig_module, graph)
