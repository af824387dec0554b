"""``SubgraphMatcher``: finds the places in a graph that match a pattern graph."""

import copy
from dataclasses import dataclass, field

import torch
from torch.fx.node import Node

__all__ = ["SubgraphMatcher", "InternalMatch"]


@dataclass
class InternalMatch:
    anchors: list
    nodes_map: dict = field(default_factory=dict)
    placeholder_nodes: list = field(default_factory=list)
    returning_nodes: list = field(default_factory=list)
    name_node_map: dict = field(default_factory=dict)

    def __copy__(self):
        return InternalMatch(
            anchors=self.anchors,
            nodes_map=self.nodes_map.copy(),
            placeholder_nodes=self.placeholder_nodes.copy(),
            returning_nodes=self.returning_nodes.copy(),
        )


def _get_attr(model, qualified_name):
    for atom in qualified_name.split("."):
        model = getattr(model, atom)
    return model


class SubgraphMatcher:
    """Matches ``pattern`` against a graph, anchored at the pattern's sinks and
    walking inputs upwards; placeholders match anything unless
    ``match_placeholder``."""

    def __init__(
        self,
        pattern,
        match_output=False,
        match_placeholder=False,
        remove_overlapping_matches=True,
        ignore_literals=False,
    ):
        self.pattern = pattern
        self.match_output = match_output
        self.match_placeholder = match_placeholder
        self.remove_overlapping_matches = remove_overlapping_matches
        self.ignore_literals = ignore_literals
        if len(pattern.nodes) == 0:
            raise ValueError("SubgraphMatcher cannot be initialized with an empty pattern")
        for node in pattern.nodes:
            if node.op != "output" and len(node.users) == 0:
                raise AssertionError("SubgraphMatcher cannot be initialized with an pattern with dead code")
        self.pattern_placeholder_nodes = [n for n in pattern.nodes if n.op == "placeholder"]
        output_node = next(iter(reversed(pattern.nodes)))
        self.pattern_returning_nodes = output_node.all_input_nodes
        if match_output:
            self.pattern_anchors = [output_node]
        else:
            # A node whose only user is the output is a sink: matching starts there.
            self.pattern_anchors = [n for n in output_node.all_input_nodes if len(n.users) == 1]

    def _match_attributes(self, pn, gn):
        pn_value = _get_attr(pn.graph.owning_module, pn.target)
        gn_value = _get_attr(gn.graph.owning_module, gn.target)
        if type(pn_value) is not type(gn_value):
            return False
        if isinstance(pn_value, torch.Tensor):
            return isinstance(gn_value, torch.Tensor)
        raise RuntimeError(f"Unsupported type {pn_value} when matching attributes")

    def _nodes_are_equal(self, pn, gn):
        if not self.match_placeholder and pn.op == "placeholder":
            return True
        if pn.op == gn.op:
            if pn.op in ("placeholder", "output"):
                return True
            if pn.op == "get_attr":
                return self._match_attributes(pn, gn)
            return pn.target == gn.target
        return False

    def _is_contained(self, nodes_map):
        lookup = {gn: pn for pn, gn in nodes_map.items() if pn.op != "placeholder"}
        for gn, pn in lookup.items():
            if pn in self.pattern_returning_nodes:
                continue
            for user in gn.users:
                if user not in lookup:
                    return False
        return True

    def _remove_overlapping_matches(self, matches):
        non_overlapping, matched = [], set()
        for match in matches:
            inner = [gn for pn, gn in match.nodes_map.items() if pn.op not in ("placeholder", "output")]
            if not any(gn in matched for gn in inner):
                non_overlapping.append(match)
                matched.update(inner)
        return non_overlapping

    def _match_literals(self, pn, gn, match):
        is_pn_node, is_gn_node = isinstance(pn, Node), isinstance(gn, Node)
        if is_pn_node and is_gn_node:
            return self._match_nodes(pn, gn, match)
        if is_pn_node:
            if pn.op == "placeholder":
                if pn in match.nodes_map:
                    return match.nodes_map[pn] == gn
                match.nodes_map[pn] = gn
                return True
            return False
        if is_gn_node:
            return False
        return type(gn) is type(pn) and gn == pn

    def _match_nodes(self, pn, gn, match):
        if pn in match.nodes_map:
            return match.nodes_map[pn] == gn
        if gn in match.nodes_map.values():
            return False
        if not self._nodes_are_equal(pn, gn):
            return False
        match.nodes_map[pn] = gn
        if pn.op == "placeholder":
            return True

        def match_args(args1, args2):
            if len(args1) != len(args2):
                return False
            for a1, a2 in zip(args1, args2):
                if isinstance(a1, Node) and isinstance(a2, Node):
                    matched = self._match_nodes(a1, a2, match)
                elif isinstance(a1, (list, tuple)) and isinstance(a2, (list, tuple)):
                    matched = match_args(a1, a2)
                else:
                    matched = self._match_literals(a1, a2, match) or self.ignore_literals
                if not matched:
                    return False
            return True

        pn_args = list(pn.args) + list(pn.kwargs.values())
        gn_args = list(gn.args) + list(gn.kwargs.values())
        return len(pn_args) == len(gn_args) and match_args(pn_args, gn_args)

    def match(self, graph):
        """All non-overlapping, self-contained matches, in graph order."""
        candidates = {}
        for anchor in self.pattern_anchors:
            for node in graph.nodes:
                if self._nodes_are_equal(anchor, node):
                    candidates.setdefault(anchor, []).append(node)
        candidate_list = list(candidates.items())
        matches = []

        def backtrack(index, match):
            if index == len(candidate_list):
                match.placeholder_nodes = [match.nodes_map[pn] for pn in self.pattern_placeholder_nodes]
                match.returning_nodes = [match.nodes_map[pn] for pn in self.pattern_returning_nodes]
                matches.append(match)
                return
            anchor, nodes = candidate_list[index]
            saved = copy.copy(match)
            for node in nodes:
                if self._match_nodes(anchor, node, match):
                    backtrack(index + 1, match)
                match = copy.copy(saved)

        if candidate_list:
            backtrack(0, InternalMatch(anchors=self.pattern_anchors))
        matches = [m for m in matches if self._is_contained(m.nodes_map)]
        if self.remove_overlapping_matches:
            matches = self._remove_overlapping_matches(matches)
        return matches
