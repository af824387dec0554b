"""``torch.fx.subgraph_rewriter``: replaces every match of a pattern in a
GraphModule with a replacement graph."""

import copy
from dataclasses import dataclass
from typing import NamedTuple

import torch
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    # The node the match was found from.
    anchor: Node
    # Pattern nodes to the graph nodes they matched.
    nodes_map: dict


@dataclass
class ReplacedPatterns:
    anchor: Node
    nodes_map: dict
    replacements: list


def _graph_of(pattern):
    if isinstance(pattern, GraphModule):
        return pattern.graph
    if isinstance(pattern, torch.fx.Graph):
        return pattern
    return torch.fx.symbolic_trace(pattern).graph


def _replace_attributes(gm, replacement):
    gm.delete_all_unused_submodules()
    if isinstance(replacement, GraphModule):
        replacement.graph.lint()

    def try_get_attr(mod, target):
        try:
            for atom in target.split("."):
                mod = getattr(mod, atom)
            return mod
        except AttributeError:
            return None

    for node in gm.graph.nodes:
        if node.op in ("call_module", "get_attr"):
            gm_attr = try_get_attr(gm, node.target)
            replacement_attr = try_get_attr(replacement, node.target)
            if gm_attr is not None:
                continue
            if replacement_attr is not None:
                new_attr = copy.deepcopy(replacement_attr)
                if isinstance(replacement_attr, torch.nn.Module):
                    gm.add_submodule(node.target, new_attr)
                else:
                    setattr(gm, node.target, new_attr)
            else:
                raise RuntimeError(
                    'Attempted to create a "',
                    node.op,
                    '" node during subgraph rewriting with target ',
                    node.target,
                    ", but the referenced attribute does not exist in the replacement GraphModule",
                )
    gm.graph.lint()


def _replace_pattern(gm, pattern, replacement, match_filters=None, ignore_literals=False):
    match_filters = match_filters or []
    original_graph = gm.graph
    pattern_graph = _graph_of(pattern)
    replacement_graph = _graph_of(replacement)
    matcher = SubgraphMatcher(
        pattern_graph,
        match_output=False,
        match_placeholder=False,
        remove_overlapping_matches=True,
        ignore_literals=ignore_literals,
    )
    matches = [
        m for m in matcher.match(original_graph) if all(f(m, original_graph, pattern_graph) for f in match_filters)
    ]
    replacement_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    # Nodes replaced by an earlier match, for matches that consume them.
    changed = {}
    results = []
    for match in matches:
        if len(match.placeholder_nodes) != len(replacement_placeholders):
            raise AssertionError("the pattern and the replacement take different numbers of inputs")
        val_map = {}
        for rn, gn in zip(replacement_placeholders, match.placeholder_nodes):
            if isinstance(gn, Node):
                val_map[rn] = changed.get(gn, gn)
                if gn != val_map[rn]:
                    at = match.placeholder_nodes.index(gn)
                    match.placeholder_nodes[at] = changed[gn]
                    key = list(match.nodes_map.keys())[list(match.nodes_map.values()).index(gn)]
                    match.nodes_map[key] = changed[gn]
            else:
                val_map[rn] = gn

        # The copy goes before the first user of what the match returns.
        user_nodes = set()
        for n in match.returning_nodes:
            user_nodes.update(n.users)
        first_user_node = None
        if len(user_nodes) == 1:
            first_user_node = next(iter(user_nodes))
        elif len(user_nodes) > 1:
            first_user_node = next(n for n in original_graph.nodes if n in user_nodes)
        first_next_node = None
        if first_user_node is None:
            next_node = None
            for n in reversed(original_graph.nodes):
                if n in match.returning_nodes:
                    first_next_node = next_node
                    break
                next_node = n
        insert_point = first_user_node if first_user_node is not None else first_next_node
        with original_graph.inserting_before(insert_point):
            copied_returning_nodes = original_graph.graph_copy(replacement_graph, val_map)
        if isinstance(copied_returning_nodes, Node):
            copied_returning_nodes = (copied_returning_nodes,)
        replacement_nodes = [v for v in val_map.values() if v not in match.placeholder_nodes]
        for gn, copied_node in zip(match.returning_nodes, copied_returning_nodes):
            gn.replace_all_uses_with(copied_node)
            changed[gn] = copied_node
        for node in reversed(pattern_graph.nodes):
            if node.op not in ("placeholder", "output"):
                gm.graph.erase_node(match.nodes_map[node])
        results.append(
            ReplacedPatterns(anchor=match.anchors[0], nodes_map=match.nodes_map, replacements=replacement_nodes)
        )
    gm.recompile()
    if isinstance(replacement, torch.nn.Module):
        _replace_attributes(gm, replacement)
    return results


def replace_pattern(gm, pattern, replacement):
    """Replaces each non-overlapping match of ``pattern`` in ``gm`` with
    ``replacement`` (functions, GraphModules or Graphs); returns the matches."""
    return [Match(anchor=m.anchor, nodes_map=m.nodes_map) for m in _replace_pattern(gm, pattern, replacement)]


def replace_pattern_with_filters(gm, pattern, replacement, match_filters=None, ignore_literals=False):
    """``replace_pattern`` keeping only matches every filter accepts."""
    return _replace_pattern(gm, pattern, replacement, match_filters, ignore_literals)
