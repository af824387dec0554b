"""Splitting a graph by the ``tag`` each computing node carries: one
submodule per tag, called in the order of the tag list."""

import copy
from dataclasses import dataclass, field

import torch
from torch.fx.graph_module import GraphModule
from torch.fx.node import map_arg
from torch.fx.passes.utils.common import HolderModule, lift_subgraph_as_module

__all__ = ["getattr_recursive", "setattr_recursive", "Component", "split_by_tags"]


def getattr_recursive(obj, name):
    """``obj.a.b.c`` for ``name='a.b.c'``, or None where a step is missing."""
    for atom in name.split("."):
        if isinstance(obj, torch.nn.ModuleList):
            if atom not in obj._modules:
                return None
            obj = obj._modules[atom]
        elif hasattr(obj, atom):
            obj = getattr(obj, atom)
        else:
            return None
    return obj


def setattr_recursive(obj, attr, value):
    """Sets ``obj.a.b.c = value`` for ``attr='a.b.c'``."""
    *path, leaf = attr.split(".")
    for atom in path:
        obj = getattr(obj, atom)
    setattr(obj, leaf, value)


@dataclass
class Component:
    """A tag's subgraph while it is built: its graph, its rank in the tag
    list, the original nodes it takes as placeholders and gives as outputs,
    and its copies of the original's get_attr nodes."""

    graph: torch.fx.Graph
    order: int
    name: str
    input_placeholders: list = field(default_factory=list)
    orig_inputs: list = field(default_factory=list)
    orig_outputs: list = field(default_factory=list)
    getattr_maps: dict = field(default_factory=dict)
    constructor_args: list = field(default_factory=list)
    gm: GraphModule | None = None


def _flatten(arg):
    nodes = []
    map_arg(arg, nodes.append)
    return nodes


def split_by_tags(gm, tags, return_fqn_mapping=False, return_tuple=False, GraphModuleCls=GraphModule):
    """``gm`` split into one submodule per tag (placeholders stay in the top
    graph, get_attr nodes are copied where they are used). A tag's nodes may
    only use values of tags earlier in ``tags``. With
    ``return_fqn_mapping``, also the map from each original module/attribute
    path to its path after the split."""
    node_remapping = {}
    node_to_component = {}
    used_in_main = {}
    main_graph = torch.fx.Graph()
    main_remapping = {}
    output_node = None
    components = [Component(torch.fx.Graph(), i, f"{tag}") for i, tag in enumerate(tags)]
    by_tag = dict(zip(tags, components))

    for node in gm.graph.nodes:
        if node.op == "output":
            if output_node is not None:
                raise RuntimeError("Multiple output nodes in graph!")
            output_node = node
            continue
        if node.op == "placeholder":
            main_remapping[node] = main_graph.placeholder(node.name, type_expr=node.type)
            main_remapping[node].meta = copy.copy(node.meta)
            continue
        if node.op == "get_attr":
            continue
        assert hasattr(node, "tag"), f"Node does not have tag: {node.format_node()}"
        upstream = [
            node_to_component[n]
            for n in _flatten(node.args) + _flatten(node.kwargs)
            if n.op not in ("placeholder", "get_attr")
        ]
        comp = by_tag[node.tag]
        node_to_component[node] = comp
        highest = max((c.order for c in upstream), default=0)
        assert comp.order >= highest, (
            f"Component {comp.name} order must be >= max of its upstream components, order={comp.order} and max={highest}"
        )

        def remap(x, comp=comp):
            if x.op == "get_attr":
                if x not in comp.getattr_maps:
                    comp.getattr_maps[x] = comp.graph.get_attr(x.target, type_expr=x.type)
                    comp.getattr_maps[x].meta = copy.copy(x.meta)
                return comp.getattr_maps[x]
            if x.op != "placeholder" and node_to_component[x] == comp:
                return node_remapping[x]
            if x not in comp.orig_inputs:
                comp.orig_inputs.append(x)
                placeholder = comp.graph.placeholder(x.name, type_expr=x.type)
                placeholder.meta = copy.copy(x.meta)
                comp.input_placeholders.append(placeholder)
                used_in_main[x] = None
            return comp.input_placeholders[comp.orig_inputs.index(x)]

        copied = comp.graph.node_copy(node, remap)
        copied.tag = node.tag
        node_remapping[node] = copied
        node_to_component[copied] = comp

    if output_node is None:
        raise RuntimeError("Graph had no output node!")
    for x in _flatten(output_node.args[0]):
        if x.op == "get_attr":
            main_remapping[x] = main_graph.get_attr(x.name, type_expr=x.type)
        else:
            used_in_main[x] = None
    for node in used_in_main:
        if node.op != "placeholder":
            node_to_component[node].orig_outputs.append(node)

    fqn_mapping = {}
    for comp in components:
        outs = tuple(node_remapping[n] for n in comp.orig_outputs)
        comp.graph.output(outs if return_tuple or len(outs) != 1 else outs[0])
        comp.gm, mapping = lift_subgraph_as_module(gm, subgraph=comp.graph, comp_name=comp.name)
        fqn_mapping.update(mapping)
        call = main_graph.call_module(comp.name, args=tuple(main_remapping[n] for n in comp.orig_inputs), kwargs=None)
        if len(outs) == 1 and not return_tuple:
            main_remapping[comp.orig_outputs[0]] = call
        else:
            for i, out in enumerate(comp.orig_outputs):
                main_remapping[out] = torch.fx.Proxy(call)[i].node

    main_graph.output(map_arg(output_node.args[0], main_remapping.__getitem__))
    root = HolderModule({comp.name: comp.gm for comp in components})
    main_graph._codegen = gm.graph._codegen
    for x in _flatten(output_node.args[0]):
        if x.op == "get_attr":
            setattr(root, x.name, getattr_recursive(gm, x.target))
    result = GraphModuleCls(root, main_graph)
    return (result, fqn_mapping) if return_fqn_mapping else result
