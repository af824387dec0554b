"""Cutting a traced module into submodules: a callback gives each node a
partition number; every partition becomes a GraphModule ``submod_<n>`` whose
placeholders are the values it uses from elsewhere and whose outputs are the
values others use, and the top graph calls them in dependency order."""

import inspect

import torch
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import map_arg
from torch.fx.proxy import Proxy

__all__ = ["Partition", "split_module"]


class Partition:
    """One partition while it is built: the names of its nodes, the values it
    takes and gives (insertion-ordered dicts used as sets), the partitions it
    depends on and those depending on it, and its graph under construction."""

    def __init__(self, name):
        self.name = name
        self.submod_name = f"submod_{name}"
        self.node_names = []
        self.inputs = {}
        self.outputs = {}
        self.dependencies = {}
        self.dependents = {}
        self.graph = Graph()
        self.environment = {}
        self.targets = {}

    def __repr__(self):
        return (
            f"name: {self.name},\n"
            f" nodes: {self.node_names},\n"
            f" inputs: {self.inputs},\n"
            f" outputs: {self.outputs},\n"
            f" partitions depended on: {self.dependencies},\n"
            f" partition dependents: {self.dependents}"
        )


def _get_attr_from_qualname(mod, qualname):
    value = mod
    for atom in qualname.split("."):
        if not hasattr(value, atom):
            raise AttributeError(f"Node target {qualname} not found!")
        value = getattr(value, atom)
    return value


def _assign_partitions(m, split_callback, partition_affix):
    """Runs the callback once per computing node: the partitions in the order
    first seen, and each node's partition name."""
    partitions = {}
    owner = {}
    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        name = str(split_callback(node))
        if partition_affix is not None:
            name = f"{partition_affix}_{name}"
        partition = partitions.get(name)
        if partition is None:
            partitions[name] = partition = Partition(name)
        partition.node_names.append(node.name)
        owner[node] = name
    return partitions, owner


def _record_uses(m, partitions, owner):
    """Fills each partition's inputs, outputs and dependency edges from the
    uses that cross a partition boundary (the graph output counts as a use
    from outside every partition)."""

    def use(def_node, use_node):
        defined = owner.get(def_node)
        used = owner.get(use_node) if use_node is not None else None
        if defined == used:
            return
        if defined is not None:
            partitions[defined].outputs.setdefault(def_node.name)
            if used is not None:
                partitions[defined].dependents.setdefault(used)
        if used is not None:
            partitions[used].inputs.setdefault(def_node.name)
            if defined is not None:
                partitions[used].dependencies.setdefault(defined)

    for node in m.graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            continue
        if node.op == "output":
            map_arg(node.args[0], lambda n: use(n, None))
            continue
        map_arg(node.args, lambda n: use(n, node))
        map_arg(node.kwargs, lambda n: use(n, node))


def _topological_order(partitions):
    """Partitions ordered so that each comes after those it depends on; the
    ready ones are taken last-in first-out, as torch.fx does."""
    ready = [name for name, p in partitions.items() if not p.dependencies]
    order = []
    while ready:
        name = ready.pop()
        order.append(name)
        for dependent in partitions[name].dependents:
            waiting = partitions[dependent].dependencies
            waiting.pop(name)
            if not waiting:
                ready.append(dependent)
    if len(order) != len(partitions):
        raise RuntimeError("cycle exists between partitions!")
    return order


def _add_inputs(m, partition, orig_nodes, keep_original_input_name):
    """Placeholders for the partition's inputs (submodules a get_attr names
    become get_attr nodes of the partition instead, after the placeholders)."""
    placeholders, modules = [], []
    for name in partition.inputs:
        node = orig_nodes[name]
        is_module = node.op == "get_attr" and isinstance(_get_attr_from_qualname(m, node.target), torch.nn.Module)
        (modules if is_module else placeholders).append(name)
    kept = {}
    for count, name in enumerate(placeholders):
        node = orig_nodes[name]
        new = partition.graph.placeholder(name if keep_original_input_name else f"arg_{count}", type_expr=node.type)
        kept[name] = None
        new.meta = node.meta.copy()
        partition.environment[node] = new
    for name in modules:
        node = orig_nodes[name]
        new = partition.graph.get_attr(node.target)
        partition.targets[node.target] = _get_attr_from_qualname(m, node.target)
        new.meta = node.meta.copy()
        partition.environment[node] = new
    partition.inputs = kept


def _copy_nodes(m, partitions, owner, qualname_map, keep_original_node_name):
    """Each computing node copied into its partition's graph; modules it
    calls are held by the partition under the path with dots as ``_``."""
    for node in m.graph.nodes:
        name = owner.get(node)
        if name is None:
            continue
        partition = partitions[name]
        env = partition.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if node.op in ("call_module", "get_attr"):
            target = node.target.replace(".", "_")
            partition.targets[target] = _get_attr_from_qualname(m, node.target)
            if qualname_map is not None:
                qualname_map[f"{partition.submod_name}.{target}"] = node.target
        new = partition.graph.create_node(
            node.op, target, args, kwargs, name=node.name if keep_original_node_name else None, type_expr=node.type
        )
        new.meta = node.meta.copy()
        env[node] = new


def split_module(
    m,
    root_m,
    split_callback,
    qualname_map=None,
    keep_original_order=False,
    keep_original_node_name=False,
    keep_original_input_name=True,
    *,
    partition_affix=None,
    tuple_return=False,
):
    """``m`` split into one submodule per partition number that
    ``split_callback(node)`` returns. ``qualname_map``, when given, is
    filled with new module paths -> original ones. ``keep_original_order``
    calls the submodules in first-seen order instead of dependency order;
    ``keep_original_node_name`` keeps node names inside partitions;
    ``keep_original_input_name=False`` names their inputs ``arg_<i>``;
    ``partition_affix`` gives ``submod_<affix>_<n>``; ``tuple_return`` makes
    every submodule return a tuple. ``root_m`` is accepted as torch.fx does
    and unused."""
    partitions, owner = _assign_partitions(m, split_callback, partition_affix)
    orig_nodes = {node.name: node for node in m.graph.nodes}
    _record_uses(m, partitions, owner)
    first_seen = list(partitions)
    ordered = _topological_order(partitions)
    for name in ordered:
        _add_inputs(m, partitions[name], orig_nodes, keep_original_input_name)
    _copy_nodes(m, partitions, owner, qualname_map, keep_original_node_name)

    base = Graph()
    env = {}
    attrs = {}

    def bring(node):
        # Placeholders and attributes of the original become the base graph's.
        if node.op == "placeholder":
            default = node.args[0] if node.args else inspect.Signature.empty
            if keep_original_node_name:
                args = () if default is inspect.Signature.empty else (default,)
                env[node.name] = base.create_node("placeholder", node.name, args=args, type_expr=node.type)
            else:
                env[node.name] = base.placeholder(node.target, type_expr=node.type, default_value=default)
            env[node.name].meta = node.meta.copy()
        elif node.op == "get_attr":
            env[node.name] = base.get_attr(node.target)
            env[node.name].meta = node.meta.copy()
            attrs[node.target] = _get_attr_from_qualname(m, node.target)

    brought = set()

    def bring_once(node):
        if node not in brought:
            bring(node)
            brought.add(node)

    if not keep_original_order:
        for node in m.graph.nodes:
            bring(node)
    placeholders = [node for node in m.graph.nodes if node.op == "placeholder"]

    for name in first_seen if keep_original_order else ordered:
        partition = partitions[name]
        outputs = tuple(partition.environment[orig_nodes[n]] for n in partition.outputs)
        partition.graph.output(outputs[0] if len(outputs) == 1 and not tuple_return else outputs)
        if keep_original_order:
            for node in placeholders:
                bring_once(node)
            for input_name in partition.inputs:
                bring_once(orig_nodes[input_name])
        attrs[partition.submod_name] = GraphModule(partition.targets, partition.graph)
        call = base.call_module(partition.submod_name, tuple(env[n] for n in partition.inputs))
        if len(partition.outputs) > 1 or (partition.outputs and tuple_return):
            unpacked = Proxy(call)
            for i, output in enumerate(partition.outputs):
                env[output] = unpacked[i].node
        elif partition.outputs:
            env[next(iter(partition.outputs))] = call

    if keep_original_order and not env:
        for node in m.graph.nodes:
            bring(node)
    for node in m.graph.nodes:
        if node.op == "output":
            base.output(map_arg(node.args[0], lambda n: env[n.name]))

    result = GraphModule(attrs, base)
    result.meta["partition_names"] = {p.submod_name for p in partitions.values()}
    return result
