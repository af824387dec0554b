"""``torch.fx.interpreter``: running a graph node by node (``Interpreter``)
and rewriting it while it runs (``Transformer``)."""

import inspect

from torch.fx import proxy as _proxy
from torch.fx.graph import Graph
from torch.fx.node import map_aggregate, map_arg
from torch.fx.proxy import Proxy

__all__ = ["Interpreter", "Transformer"]


class Interpreter:
    """Runs a GraphModule's graph one node at a time; override ``run_node`` or
    one method per opcode to change what each node does."""

    def __init__(self, module, garbage_collect_values=True, graph=None):
        self.module = module
        self.submodules = dict(self.module.named_modules())
        self.graph = graph if graph is not None else self.module.graph
        self.env = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        if self.garbage_collect_values:
            # Values are dropped after their last use, found walking backwards.
            node_to_last_use = {}
            self.user_to_last_uses = {}
            for node in reversed(self.graph.nodes):
                for n in node._input_nodes:
                    if n not in node_to_last_use:
                        node_to_last_use[n] = node
                        self.user_to_last_uses.setdefault(node, []).append(n)

    def run(self, *args, initial_env=None, enable_io_processing=True):
        self.env = initial_env if initial_env is not None else {}
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.args_iter = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    msg += f"\nOriginal traceback:\n{node.stack_trace}"
                    msg += "\nUse tlparse to see full graph. "
                    msg += "(https://github.com/pytorch/tlparse?tab=readme-ov-file#tlparse-parse-structured-pt2-logs)"
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                output_val = self.env[node]
                return self.graph.process_outputs(output_val) if enable_io_processing else output_val

    def boxed_run(self, args_list):
        placeholder_nodes = [n for n in self.graph.nodes if n.op == "placeholder"]
        if len(args_list) != len(placeholder_nodes):
            detail = "extra arguments" if len(args_list) > len(placeholder_nodes) else "missing arguments"
            raise RuntimeError(
                f"Interpreter.boxed_run expected {len(placeholder_nodes)} arguments for placeholders but received {len(args_list)} ({detail})"
            )
        env = dict(zip(placeholder_nodes, args_list))
        args_list.clear()
        return self.run(initial_env=env)

    def run_node(self, n):
        previous = _proxy._current_meta.get("node")
        _proxy._current_meta["node"] = n
        try:
            args, kwargs = self.fetch_args_kwargs_from_env(n)
            return getattr(self, n.op)(n.target, args, kwargs)
        finally:
            _proxy._current_meta["node"] = previous

    def placeholder(self, target, args, kwargs):
        if target.startswith("*"):
            # *args gathers every remaining positional argument.
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(
                f"Expected positional argument for parameter {target}, but one was not passed in!"
            ) from si

    def get_attr(self, target, args, kwargs):
        return self.fetch_attr(target)

    def call_function(self, target, args, kwargs):
        return target(*args, **kwargs)

    def call_method(self, target, args, kwargs):
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return submod(*args, **kwargs)

    def output(self, target, args, kwargs):
        return args[0]

    def fetch_attr(self, target):
        target_atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(target_atoms[: i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n):
        return self.map_nodes_to_values(n.args, n), self.map_nodes_to_values(n.kwargs, n)

    def map_nodes_to_values(self, args, n):
        def load_arg(n_arg):
            if n_arg not in self.env:
                raise RuntimeError(
                    f"Node {n} referenced nonexistent value {n_arg}! Run Graph.lint() to diagnose such issues"
                )
            return self.env[n_arg]

        return map_arg(args, load_arg)


def _transformer_tracer(graph, root):
    """A Tracer recording into ``graph`` that keeps every module call a leaf."""
    from torch.fx._symbolic_trace import Tracer

    class TransformerTracer(Tracer):
        def __init__(self, graph):
            super().__init__()
            self.graph = graph
            self.tensor_attrs = {}

        def is_leaf_module(self, _, __):
            return True

    tracer = TransformerTracer(graph)
    tracer.root = root
    return tracer


class Transformer(Interpreter):
    """Runs a graph on ``Proxy`` values, producing a new (rewritten) GraphModule."""

    def __init__(self, module):
        super().__init__(module)
        self.new_graph = Graph()
        self.new_graph.set_codegen(module.graph._codegen)
        self.tracer = _transformer_tracer(self.new_graph, module)

    def placeholder(self, target, args, kwargs):
        default_value = next(iter(args)) if args else inspect.Signature.empty
        return Proxy(self.new_graph.placeholder(target, default_value=default_value), self.tracer)

    def get_attr(self, target, args, kwargs):
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target, args, kwargs):
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target, args, kwargs):
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self):
        _proxy._preserving[0], preserving = True, _proxy._preserving[0]
        try:
            result = super().run(enable_io_processing=False)
        finally:
            _proxy._preserving[0] = preserving
        if result is not None:
            new_output_node = self.new_graph.output(
                map_aggregate(result, lambda a: a.node if isinstance(a, Proxy) else a)
            )
            old_output_node = list(self.graph.nodes)[-1]
            for k, v in old_output_node.meta.items():
                new_output_node.meta[k] = v
        from torch.fx.graph_module import GraphModule

        return GraphModule(self.module, self.new_graph)
