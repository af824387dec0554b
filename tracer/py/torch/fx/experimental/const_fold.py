"""Constant folding: the part of a graph that depends only on attributes
(parameters, buffers, constants) is split into its own graph, run once on the
first call, and its results stored as attributes the rest of the graph reads."""

import operator
import re

import torch
import torch.fx
from torch.fx.node import map_arg
from torch.fx.passes.split_module import split_module

__all__ = ["FoldedGraphModule", "get_unique_attr_name_in_module", "split_const_subgraphs"]


class FoldedGraphModule(torch.fx.GraphModule):
    """A GraphModule whose ``const_subgraph_module`` computes, on the first
    call, the attribute named ``fx_const_folded_attrs_name`` (a Parameter,
    or a ParameterList for several results) that its graph reads."""

    def __init__(
        self, root, graph, const_subgraph=None, fx_const_folded_attrs_name=None, device_for_folded_attrs="cuda"
    ):
        super().__init__(root, graph)
        self.const_subgraph_module = None if const_subgraph is None else torch.fx.GraphModule(root, const_subgraph)
        self.has_folding_been_run = False
        self.fx_const_folded_attrs_name = fx_const_folded_attrs_name
        self.device_for_folded_attrs = device_for_folded_attrs

    def __call__(self, *args, **kwargs):
        if not self.has_folding_been_run:
            self.run_folding()
        return super().__call__(*args)

    def run_folding(self):
        """Runs the constant graph and stores its results (once)."""
        if self.const_subgraph_module is None or self.fx_const_folded_attrs_name is None:
            return
        assert not self.has_folding_been_run, "Folding has already been run"
        self.has_folding_been_run = True
        folded = self.const_subgraph_module()

        def as_param(value):
            if isinstance(value, int):
                return torch.nn.Parameter(
                    torch.Tensor([value]).to(device=self.device_for_folded_attrs), requires_grad=False
                )
            return torch.nn.Parameter(value.detach().clone(), requires_grad=value.requires_grad)

        params = (
            torch.nn.ParameterList([as_param(v) for v in folded]) if isinstance(folded, tuple) else as_param(folded)
        )
        setattr(self, self.fx_const_folded_attrs_name, params)


def _inline_module(gm, inline_mod_name, run_dce=True, is_impure_node=None):
    """Copies the graph of the submodule ``inline_mod_name`` into ``gm`` in
    place of its call (getitems of its tuple result become the values
    themselves). Returns the map from its nodes to their copies."""
    inline_mod = dict(gm.named_modules())[inline_mod_name]
    assert isinstance(inline_mod, torch.fx.GraphModule), f"Expected GraphModule, got {type(inline_mod)}"
    call = next((n for n in gm.graph.nodes if n.op == "call_module" and n.target == inline_mod_name), None)
    assert call is not None, f"Could not find call_module node for {inline_mod_name}"

    mapping = {}
    placeholders_seen = 0

    def replace(node):
        new = mapping[node]
        new.meta = node.meta.copy()
        return new

    for node in inline_mod.graph.nodes:
        if node.op == "placeholder":
            mapping[node] = call.kwargs[node.name] if node.name in call.kwargs else call.args[placeholders_seen]
            placeholders_seen += 1
            continue
        if node.op == "output":
            outputs = map_arg(node.args[0], replace)
            getitems = []
            if isinstance(outputs, (list, tuple)):
                getitems = [
                    u
                    for u in call.users
                    if u.op == "call_function" and u.target is operator.getitem and isinstance(u.args[1], int)
                ]
            call.replace_all_uses_with(outputs)
            for user in getitems:
                user.replace_all_uses_with(outputs[user.args[1]])
                gm.graph.erase_node(user)
                mapping[user] = outputs[user.args[1]]
            continue
        with gm.graph.inserting_before(call):
            mapping[node] = gm.graph.node_copy(node, replace)
    gm.graph.erase_node(call)
    if run_dce:
        gm.graph.eliminate_dead_code(is_impure_node=is_impure_node)
    return mapping


def get_unique_attr_name_in_module(mod_traced, name):
    """``name`` made a valid identifier and not yet an attribute of
    ``mod_traced`` (a trailing ``_<n>`` counts up)."""
    name = re.sub("[^0-9a-zA-Z_]+", "_", name)
    if name[0].isdigit():
        name = f"_{name}"
    while hasattr(mod_traced, name):
        match = re.match(r"(.*)_(\d+)$", name)
        name = name + "_1" if match is None else f"{match.group(1)}_{int(match.group(2)) + 1}"
    return name


def _has_impure_node(module):
    for node in module.graph.nodes:
        if node.op == "call_function" and node.is_impure():
            return True
        if node.op == "call_module":
            sub = module.get_submodule(node.target)
            if isinstance(sub, torch.fx.GraphModule):
                return _has_impure_node(sub)
    return False


def _has_skipped_node(module, skip):
    for node in module.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if skip(node):
            return True
        if node.op == "call_module":
            sub = module.get_submodule(node.target)
            if isinstance(sub, torch.fx.GraphModule) and _has_skipped_node(sub, skip):
                return True
    return False


def _resolves_to_tensor_attr(gm, target):
    value = gm
    for atom in target.split("."):
        if not hasattr(value, atom):
            return False
        value = getattr(value, atom)
    return not isinstance(value, (torch.nn.Module, type(torch)))


def _constant_nodes(gm, skip):
    """The nodes computed from attributes only (and whether any of them is
    more than a get_attr), honouring ``skip``, impurity and submodules."""
    const = set()
    found = False
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        if node.op == "get_attr":
            if not _resolves_to_tensor_attr(gm, node.target):
                continue
        elif not set(node.all_input_nodes).issubset(const):
            continue
        sub = gm.get_submodule(node.target) if node.op == "call_module" else None
        graph_sub = sub if isinstance(sub, torch.fx.GraphModule) else None
        if skip is not None and (skip(node) or (graph_sub is not None and _has_skipped_node(graph_sub, skip))):
            continue
        if node.is_impure() or (graph_sub is not None and _has_impure_node(graph_sub)):
            continue
        const.add(node)
        found = found or node.op != "get_attr"
    return const, found


def split_const_subgraphs(module, skip_folding_node_fn=None, device_for_folded_attrs="cpu", is_impure_node=None):
    """A FoldedGraphModule computing ``module`` (traced if it is not a
    GraphModule) whose constant part runs once, on the first call.
    ``skip_folding_node_fn(node)`` keeps chosen nodes out of it;
    ``is_impure_node`` is given to dead-code elimination."""
    traced = module if isinstance(module, torch.fx.GraphModule) else torch.fx.symbolic_trace(module)
    const, found = _constant_nodes(traced, skip_folding_node_fn)
    if not found:
        return FoldedGraphModule(traced, traced.graph)

    split = split_module(traced, module, lambda node: 0 if node in const else 1)
    const_gm = split.submod_0
    rest_gm = getattr(split, "submod_1", None)
    # Modules the partitions call (their paths flattened) move to the top.
    for gm in (rest_gm, const_gm):
        if gm is None:
            continue
        for node in gm.graph.nodes:
            if node.op == "call_module":
                setattr(split, node.target, getattr(gm, node.target))

    call_args = next(n.args for n in split.graph.nodes if n.op == "call_module" and n.target == "submod_0")
    # The constant graph reads the attributes itself instead of taking them.
    root_const_gm = torch.fx.GraphModule(split, const_gm.graph)
    multiple_outputs = None
    index = 0
    for node in root_const_gm.graph.nodes:
        if node.op == "output":
            multiple_outputs = isinstance(node.args[0], tuple)
            continue
        if node.op != "placeholder":
            continue
        source = call_args[index]
        index += 1
        assert source.op == "get_attr", f"Expected get_attr, got {source.op}"
        with root_const_gm.graph.inserting_before(node):
            attr = root_const_gm.graph.get_attr(source.target)
        attr.meta = node.meta.copy()
        node.replace_all_uses_with(attr)
        root_const_gm.graph.erase_node(node)

    name = get_unique_attr_name_in_module(traced, "_FX_CONST_FOLDED_ATTRS")
    setattr(split, name, torch.nn.ParameterList() if multiple_outputs else torch.nn.Parameter())
    for node in split.graph.nodes:
        if node.op == "call_module" and node.target == "submod_0":
            with node.graph.inserting_before(node):
                folded = node.graph.get_attr(name)
            folded.meta = node.meta.copy()
            node.replace_all_uses_with(folded)
            break
    if hasattr(split, "submod_1"):
        _inline_module(split, "submod_1", is_impure_node=is_impure_node)
    split.graph.eliminate_dead_code(is_impure_node=is_impure_node)
    return FoldedGraphModule(split, split.graph, root_const_gm.graph, name, device_for_folded_attrs)
