"""``torch.fx.graph``: ``Graph`` (its core is native: nodes, naming, text and
code generation) and the parts that consult the owning module."""

import copy
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple, Optional

import torch
import torch.utils._pytree as pytree
from torch.fx._native import fx as _fx

# PyTorch's torch.fx.graph has these names too.
from torch.fx.node import Node, _format_arg, _get_qualified_name, _type_repr, map_arg  # noqa: F401

__all__ = ["Graph", "PythonCode", "CodeGen"]

_legal_ops = dict.fromkeys(["call_function", "call_method", "get_attr", "call_module", "placeholder", "output"])


@dataclass
class PythonCode:
    """The source of a graph's ``forward`` and the globals it runs with."""

    src: str
    globals: dict
    _lineno_map: Optional[dict] = None
    _prologue_start: int = 0


class CodeGen:
    """How a graph's ``forward`` receives inputs and returns outputs."""

    def __init__(self):
        self._body_transformer = None
        self._func_name = "forward"

    def process_inputs(self, *args):
        return args

    def process_outputs(self, outputs):
        return outputs


class _PyTreeInfo(NamedTuple):
    orig_args: list
    in_spec: Any
    out_spec: Any


class _PyTreeCodeGen(CodeGen):
    """``forward`` takes the original (nested) arguments, flattens them against
    ``self._in_spec`` and rebuilds its outputs with ``self._out_spec``."""

    def __init__(self, pytree_info):
        super().__init__()
        self.pytree_info = pytree_info

    def process_inputs(self, *inputs):
        return pytree.arg_tree_leaves(*inputs)

    def process_outputs(self, out):
        if self.pytree_info is None or self.pytree_info.out_spec is None:
            return out
        if not isinstance(out, (list, tuple)):
            out = [out]
        return pytree.tree_unflatten(out, self.pytree_info.out_spec)


class Graph(_fx.GraphBase):
    """The main data structure of torch.fx: a list of ``Node``s in execution order."""

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None):
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()
        self._co_fields = {}

    def __str__(self):
        return _fx.graph_str(self)

    def get_attr(self, qualified_name, type_expr=None):
        """Inserts a node fetching the parameter, buffer or submodule ``qualified_name``."""
        if self.owning_module is not None and not _attr_reference_exists(self.owning_module, qualified_name):
            warnings.warn(
                "Attempted to insert a get_attr Node with no underlying reference in the owning GraphModule! "
                "Call GraphModule.add_submodule to add the necessary submodule, GraphModule.add_parameter "
                "to add the necessary Parameter, or nn.Module.register_buffer to add the necessary buffer",
                stacklevel=2,
            )
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name, args=None, kwargs=None, type_expr=None):
        """Inserts a node calling the submodule ``module_name``."""
        if self.owning_module is not None and self.owning_module.get_submodule(module_name) is None:
            warnings.warn(
                "Attempted to insert a call_module Node with no underlying reference in the owning GraphModule! "
                "Call GraphModule.add_submodule to add the necessary submodule"
            )
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def node_copy(self, node, arg_transform=lambda x: x):
        """Copies ``node`` from another graph into this one, mapping its inputs with ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g, val_map, return_output_node=False):
        """Copies the nodes of ``g`` into this graph; ``val_map`` maps old nodes to new."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None):
        memo = memo if memo else {}
        g = Graph(tracer_cls=self._tracer_cls)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            output_val, old_output_node = output_vals
            new_output_node = g.output(output_val, type_expr=getattr(old_output_node, "type", None))
            new_output_node.meta = copy.copy(old_output_node.meta)
        return g

    def set_codegen(self, codegen):
        self._codegen = codegen

    def process_inputs(self, *args):
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        return self._codegen.process_outputs(out)

    def python_code(
        self,
        root_module,
        *,
        verbose=False,
        include_stride=False,
        include_device=False,
        colored=False,
        expanded_def=False,
        record_func=False,
        additional_meta=None,
    ):
        """The Python source of this graph's ``forward`` and its globals."""
        pytree_args = None
        info = getattr(self._codegen, "pytree_info", None)
        if isinstance(self._codegen, _PyTreeCodeGen) and info is not None:
            pytree_args = (list(info.orig_args), info.out_spec is not None)
        src, globals_, lineno_map, prologue_start = _fx.python_code(self, root_module, verbose, pytree_args)
        return PythonCode(src, globals_, lineno_map, prologue_start)

    def print_tabular(self):
        """Prints the nodes as a table: opcode, name, target, args, kwargs."""
        node_specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(_fx.tabulate(node_specs, ["opcode", "name", "target", "args", "kwargs"]))

    def lint(self):
        """Checks that the graph is well formed: opcodes, ownership, topological
        order, unique names, and targets that exist on the owning module."""

        def check_arg(arg, n=None):
            context_str = f" of Node '{n}' " if n else " "
            if arg.graph is not self:
                raise RuntimeError(
                    f"Argument '{arg}'{context_str}does not belong to this Graph, but was used as an argument! "
                    f"If you are copying nodes from another graph, make sure to use ``arg_transform`` on node_copy() to remap values\n{self}"
                )
            if arg not in seen_values:
                raise RuntimeError(
                    f"Argument '{arg}'{context_str}was used before it has been defined! Please check that Nodes in the graph are topologically ordered\n{self}"
                )

        seen_names = set()
        seen_values = set()
        for node in self.nodes:
            if node.op not in _legal_ops:
                raise RuntimeError(f"Node {node} had unknown opcode {node.op}!")
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                check_arg(arg, node)
            seen_values.add(node)
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)

        if self.owning_module:
            for node in self.nodes:
                if node.op == "call_function":
                    if not callable(node.target):
                        raise ValueError(
                            f"Node {node} target {node.target} has type {torch.typename(node.target)} but a Callable is expected"
                        )
                elif not isinstance(node.target, str):
                    raise ValueError(
                        f"Node {node} target {node.target} has type {torch.typename(node.target)} but a str is expected"
                    )
                if node.op in ["get_attr", "call_module"]:
                    target_atoms = node.target.split(".")
                    m_itr = self.owning_module
                    for i, atom in enumerate(target_atoms):
                        new_m_itr = getattr(m_itr, atom, None)
                        seen_qualname = ".".join(target_atoms[:i])
                        if new_m_itr is None:
                            raise RuntimeError(
                                f"Node {node} target {node.target} references nonexistent attribute {atom} of {seen_qualname}"
                            )
                        if node.op == "call_module" and not isinstance(new_m_itr, torch.nn.Module):
                            raise RuntimeError(
                                f"Node {node} target {node.target} {atom} of {seen_qualname} does not reference an nn.Module"
                            )
                        m_itr = new_m_itr

    def eliminate_dead_code(self, is_impure_node=None):
        """Removes nodes whose values nothing uses, except impure ones; returns
        whether the graph changed."""
        self.lint()
        changed = _fx.eliminate_dead_code(self, is_impure_node)
        if self.owning_module is not None:
            subgraph_names = {x.target for x in self.find_nodes(op="get_attr")}
            for child_name, child_module in self.owning_module.named_children():
                if child_name in subgraph_names and isinstance(child_module, torch.fx.GraphModule):
                    changed |= child_module.graph.eliminate_dead_code()
                    child_module.recompile()
        return changed


def _attr_reference_exists(mod, qualified_name):
    module_path, _, name = qualified_name.rpartition(".")
    try:
        submod = mod.get_submodule(module_path)
    except AttributeError:
        warnings.warn(f"Failed to fetch module {module_path}!")
        return False
    if not hasattr(submod, name):
        return False
    res = getattr(submod, name)
    return isinstance(res, (torch.nn.Module, torch.nn.Parameter)) or name in submod._buffers


# Operators that Proxy records and generated code prints as Python operators.
reflectable_magic_methods = {
    "add": "{} + {}",
    "sub": "{} - {}",
    "mul": "{} * {}",
    "floordiv": "{} // {}",
    "truediv": "{} / {}",
    "div": "{} / {}",
    "mod": "{} % {}",
    "pow": "{} ** {}",
    "lshift": "{} << {}",
    "rshift": "{} >> {}",
    "and_": "{} & {}",
    "or_": "{} | {}",
    "xor": "{} ^ {}",
    "getitem": "{}[{}]",
    "matmul": "{} @ {}",
}
magic_methods = {
    "eq": "{} == {}",
    "ne": "{} != {}",
    "lt": "{} < {}",
    "gt": "{} > {}",
    "le": "{} <= {}",
    "ge": "{} >= {}",
    "pos": "+{}",
    "neg": "-{}",
    "invert": "~{}",
    **reflectable_magic_methods,
}

# How generated code imports the globals every generated module has (by
# `to_folder`, and by a pickled GraphModule's import block).
_custom_builtins = {
    "inf": "from math import inf",
    "nan": "from math import nan",
    "NoneType": "NoneType = type(None)",
    "torch": "import torch",
    "device": "from torch import device",
    "fx_pytree": "import torch.fx._pytree as fx_pytree",
    "pytree": "import torch.utils._pytree as pytree",
}
