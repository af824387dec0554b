"""Fusing chosen nodes of a graph into submodules, in place: each partition
becomes a GraphModule called where its last node was."""

import copy
import heapq

import torch
from torch.fx.graph import Graph
from torch.fx.passes.tools_common import stable_topological_sort
from torch.fx.passes.utils.common import lift_subgraph_as_module

__all__ = [
    "topo_sort",
    "validate_partition",
    "fuse_as_graphmodule",
    "insert_subgm",
    "erase_nodes",
    "fuse_by_partitions",
]


def topo_sort(nodes):
    """``nodes`` sorted so each comes after those of them it uses, keeping the
    given order where dependencies allow."""
    indegree = dict.fromkeys(nodes, 0)
    position = {node: i for i, node in enumerate(nodes)}
    ready = []
    for node in nodes:
        indegree[node] = sum(1 for n in node.all_input_nodes if n in indegree)
        if indegree[node] == 0:
            heapq.heappush(ready, (position[node], node))
    ordered = []
    while ready:
        _, node = heapq.heappop(ready)
        ordered.append(node)
        for user in node.users:
            if user in indegree:
                indegree[user] -= 1
                if indegree[user] == 0:
                    heapq.heappush(ready, (position[user], user))
    assert len(nodes) == len(ordered), "topological sorted nodes doesn't have same length as input nodes"
    return ordered


def validate_partition(partition):
    """False when fusing ``partition`` would make a cycle: some path leaves
    the partition and comes back into it."""
    inside = set(partition)
    frontier = [user for node in inside for user in node.users if user not in inside]
    visited = set()
    while frontier:
        current = frontier.pop()
        visited.add(current)
        if current in inside:
            return False
        frontier.extend(user for user in current.users if user not in visited)
    return True


def fuse_as_graphmodule(gm, nodes, module_name, partition_lookup_table=None, *, always_return_tuple=False):
    """A GraphModule of class ``module_name`` computing ``nodes`` (in
    topological order), with the nodes they use from outside and the nodes
    used from outside, as (module, original inputs, original outputs)."""
    for node in nodes:
        assert node.graph.owning_module is gm, f"{node} doesn't belong to passed in graph module {gm._get_name()}"
        assert not node._erased, f"{node} has been removed from owning graph"
    if not validate_partition(nodes):
        raise AssertionError("Invalid partition, found dependency cycles")
    members = dict.fromkeys(nodes) if partition_lookup_table is None else partition_lookup_table

    subgraph = Graph()
    external = []
    for node in nodes:
        for n in node.all_input_nodes:
            if n not in members and n not in external:
                external.append(n)
    if external and all(n.op == "placeholder" for n in external):
        # Graph inputs keep the graph's order; other boundaries keep the order met.
        rank = {node: i for i, node in enumerate(gm.graph.nodes)}
        external.sort(key=rank.__getitem__)
    placeholders = {}
    for n in external:
        placeholders[n] = subgraph.placeholder(n.name, type_expr=n.type)
        placeholders[n].meta = copy.copy(n.meta)
    copies = {}
    for node in nodes:
        copies[node] = subgraph.node_copy(node, lambda x: copies[x] if x in members else placeholders[x])
    outputs = {}
    for node in nodes:
        if any(user not in members for user in node.users):
            outputs[node] = copies[node]
    outs = tuple(outputs.values())
    subgraph.output(outs if always_return_tuple or len(outs) != 1 else outs[0])
    subgraph.lint()
    fused, _ = lift_subgraph_as_module(gm, subgraph, comp_name="", class_name=module_name)
    return fused, tuple(placeholders), tuple(outputs)


def insert_subgm(gm, sub_gm, orig_inputs, orig_outputs, insertion_point=None):
    """Adds ``sub_gm`` to ``gm`` (named after its class), calls it after
    ``insertion_point`` (default: the last of ``orig_outputs``) and points
    the users of ``orig_outputs`` at its results. Returns ``gm``."""
    name = sub_gm.__class__.__name__
    gm.add_submodule(name, sub_gm)
    if insertion_point is None:
        insertion_point = next((node for node in reversed(gm.graph.nodes) if node in orig_outputs), None)
        assert insertion_point is not None, (
            "Cannot determine insertion point: no insertion_point provided and "
            "orig_outputs is empty. Pass the last partition node as insertion_point."
        )
    with gm.graph.inserting_after(insertion_point):
        call = gm.graph.call_module(name, args=orig_inputs, kwargs=None)
    output = sub_gm.graph.output_node()
    if orig_outputs:
        with gm.graph.inserting_before(call.next):
            if len(orig_outputs) == 1 and not isinstance(output.args[0], tuple):
                orig_outputs[0].replace_all_uses_with(call, propagate_meta=True)
            else:
                for i, orig in enumerate(orig_outputs):
                    orig.replace_all_uses_with(torch.fx.Proxy(call)[i].node, propagate_meta=True)
                call.meta["val"] = tuple(orig.meta.get("val", None) for orig in orig_outputs)
    return gm


def erase_nodes(gm, nodes):
    """Erases ``nodes`` (topologically sorted) from ``gm``'s graph, users first."""
    for node in reversed(nodes):
        gm.graph.erase_node(node)


def fuse_by_partitions(gm, partitions, prefix="fused_", always_return_tuple=False):
    """Each partition (a dict of nodes) of ``gm`` fused into a submodule
    ``<prefix><i>``, in place; the graph is then re-sorted stably."""
    for i, partition in enumerate(partitions):
        ordered = topo_sort(list(partition))
        sub_gm, inputs, outputs = fuse_as_graphmodule(
            gm, ordered, prefix + str(i), partition, always_return_tuple=always_return_tuple
        )
        insert_subgm(gm, sub_gm, inputs, outputs, ordered[-1])
        erase_nodes(gm, ordered)
    stable_topological_sort(gm)
    gm.graph.lint()
    return gm
