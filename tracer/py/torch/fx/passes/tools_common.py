"""Putting a graph's nodes back in an order where each comes after what it
uses, after a pass moved them: ``legalize_graph`` (breadth-first, comparisons
and arithmetic on sizes first) and ``stable_topological_sort`` (earliest
original position first)."""

import collections
import heapq
import operator

import torch

__all__ = ["legalize_graph", "stable_topological_sort"]

# Sorted ahead of their peers so that runtime assertions on sizes come
# before the ops that depend on them, as torch.fx does.
_PRIORITIZED = (
    operator.add,
    operator.mul,
    operator.sub,
    operator.floordiv,
    operator.truediv,
    operator.mod,
    operator.le,
    operator.lt,
    operator.ge,
    operator.gt,
    operator.eq,
    operator.ne,
)


def _indegrees(graph):
    indeg = dict.fromkeys(graph.nodes, 0)
    for node in graph.nodes:
        for user in node.users:
            indeg[user] += 1
    return indeg


def _rebuild(gm, order_ready, take, give):
    """Copies the nodes into a new graph in the order the ready-queue gives
    (``take`` pops one, ``give`` pushes one), then installs it on ``gm``."""
    graph = gm.graph
    indeg = _indegrees(graph)
    new_graph = torch.fx.Graph()
    env = {}
    for node in graph.nodes:
        if indeg[node] == 0:
            order_ready(node)
    while True:
        current = take()
        if current is None:
            break
        env[current] = new_graph.node_copy(current, lambda n: env[n])
        for user in current.users:
            indeg[user] -= 1
            if indeg[user] == 0:
                give(user)
    if len(new_graph.nodes) < len(graph.nodes):
        return [node for node in indeg if indeg[node] != 0]
    new_graph._codegen = graph._codegen
    gm.graph = new_graph
    return None


def legalize_graph(gm):
    """Re-sorts ``gm``'s graph topologically, in place (not stable: ready
    nodes are taken breadth-first). Returns ``gm``."""
    queue = collections.deque()

    def give(node):
        if node.op == "call_function" and node.target in _PRIORITIZED:
            queue.appendleft(node)
        else:
            queue.append(node)

    stuck = _rebuild(gm, queue.append, lambda: queue.popleft() if queue else None, give)
    if stuck is not None:
        raise RuntimeError(f"Input graph has cycles, unable to add {stuck}")
    return gm


def stable_topological_sort(gm):
    """Re-sorts ``gm``'s graph topologically, in place, keeping the original
    order wherever dependencies allow. Returns ``gm``."""
    position = {node: i for i, node in enumerate(gm.graph.nodes)}
    ready = []

    def give(node):
        heapq.heappush(ready, (position[node], node))

    stuck = _rebuild(gm, give, lambda: heapq.heappop(ready)[1] if ready else None, give)
    if stuck is not None:
        raise AssertionError(f"Input graph has cycles, unable to add {stuck}")
    return gm
