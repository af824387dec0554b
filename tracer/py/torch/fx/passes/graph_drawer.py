"""Pictures of graphs. ``FxGraphDrawer`` gives the DOT text torch.fx's gives
(without pydot: ``get_dot_graph()`` returns a small ``Dot`` with pydot's
``to_string``/``write``/``create_svg``), and ``render`` draws a GraphModule
as SVG or a self-contained HTML page, laid out natively without graphviz."""

import hashlib
import os
import re
from itertools import chain

import torch
import torch.fx
from torch.fx._native import fx as _fx
from torch.fx.node import _format_arg, _get_qualified_name
from torch.fx.operator_schemas import normalize_function

__all__ = ["FxGraphDrawer", "Dot", "render"]

_COLOR_MAP = {
    "placeholder": '"AliceBlue"',
    "call_module": "LemonChiffon1",
    "get_param": "Yellow2",
    "get_attr": "LightGrey",
    "output": "PowderBlue",
}
# Other ops get one of these by a hash of their target, stable across runs.
_HASH_COLOR_MAP = [
    "CadetBlue1",
    "Coral",
    "DarkOliveGreen1",
    "DarkSeaGreen1",
    "GhostWhite",
    "Khaki1",
    "LavenderBlush1",
    "LightSkyBlue",
    "MistyRose1",
    "MistyRose2",
    "PaleTurquoise2",
    "PeachPuff1",
    "Salmon",
    "Thistle1",
    "Thistle3",
    "Wheat1",
]
_WEIGHT_STYLE = {"fillcolor": "Salmon", "style": '"filled,rounded"', "fontcolor": "#000000"}

_KEYWORDS = ("graph", "subgraph", "digraph", "node", "edge", "strict")
_NUMERIC = re.compile(r"^([0-9]+\.?[0-9]*|[0-9]*\.[0-9]+)$")
_QUOTED = re.compile(r'^".*"$', re.S)
_HTML = re.compile(r"^<.*>$", re.S)
_ID = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
_ID_WITH_PORTS = re.compile(r'^[_a-zA-Z][a-zA-Z0-9_:"]*[a-zA-Z0-9_"]+$')


def _quoted(s):
    return '"' + s.replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r") + '"'


def _plain(s):
    """True/False when DOT certainly does / does not need ``s`` quoted,
    None when it depends (pydot's rules, so the text is pydot's)."""
    if s.isdigit():
        return False
    if s.isalnum():
        return s[0].isdigit()
    if any(ord(c) > 0x7F or ord(c) == 0 for c in s) and not _QUOTED.match(s) and not _HTML.match(s):
        return True
    if _NUMERIC.match(s) or _QUOTED.match(s) or _HTML.match(s):
        return False
    return None


def _quote_id(s):
    if not isinstance(s, str) or not s:
        return str(s)
    if s.lower() in _KEYWORDS:
        return _quoted(s)
    needs = _plain(s)
    if needs is None:
        needs = not (_ID.match(s) or _ID_WITH_PORTS.match(s))
    return _quoted(s) if needs else s


def _quote_attr(s):
    if isinstance(s, bool):
        return str(s).lower()
    if not isinstance(s, str):
        return str(s)
    if s.lower() in _KEYWORDS:
        return _quoted(s)
    return s if _plain(s) is False else _quoted(s)


class Dot:
    """A directed graph in DOT, as far as FxGraphDrawer needs pydot's: nodes
    with attributes, edges, ``to_string()``, and SVG drawn natively."""

    def __init__(self, name, **attrs):
        self.name = name
        self.attrs = attrs
        # Nodes (name, attrs) and edges (src, dst) in the order added, which
        # is the order DOT text lists them.
        self.statements = []

    def add_node(self, name, **attrs):
        self.statements.append(("node", name, attrs))

    def add_edge(self, src, dst):
        self.statements.append(("edge", src, dst))

    def get_nodes(self):
        return [(name, attrs) for kind, name, attrs in self.statements if kind == "node"]

    def get_edges(self):
        return [(src, dst) for kind, src, dst in self.statements if kind == "edge"]

    def get_name(self):
        return self.name

    def to_string(self):
        lines = [f"digraph {_quote_id(self.name)} {{"]
        lines += [f"{k}={_quote_attr(v)};" for k, v in self.attrs.items()]
        for kind, a, b in self.statements:
            if kind == "edge":
                lines.append(f"{_quote_id(a)} -> {_quote_id(b)};")
                continue
            body = ", ".join(f"{k}={_quote_attr(v)}" for k, v in b.items())
            lines.append(f"{_quote_id(a)} [{body}];" if body else f"{_quote_id(a)};")
        return "\n".join(lines) + "\n}\n"

    __str__ = to_string

    def create_svg(self):
        """The graph drawn as SVG (bytes, as pydot returns), laid out natively."""
        listed = self.get_nodes()
        index = {name: i for i, (name, _) in enumerate(listed)}
        nodes = []
        for name, attrs in listed:
            parts = [p for p in re.split(r"\\[nl]|\||\n", attrs.get("label", "").strip("{}")) if p]
            op = next((p[len("op_code=") :] for p in parts if p.startswith("op_code=")), "")
            rest = [p for p in parts if not p.startswith(("name=", "op_code="))]
            nodes.append([name, op, rest[0] if rest else "", " ".join(rest[1:]), "", ""])
        edges = [[index[a], index[b]] for a, b in self.get_edges() if a in index and b in index]
        return _fx.render_picture(self.name, nodes, edges, "svg").encode()

    def create(self, format="svg"):
        if format == "svg":
            return self.create_svg()
        if format in ("raw", "dot"):
            return self.to_string().encode()
        raise ValueError(f"fxvm draws svg (or writes raw DOT), not {format!r}")

    def write(self, path, format="raw"):
        with open(path, "wb") as f:
            f.write(self.create(format))
        return True

    def write_raw(self, path):
        return self.write(path, "raw")

    def write_svg(self, path):
        return self.write(path, "svg")


class FxGraphDrawer:
    """torch.fx's graph drawer: ``get_dot_graph()`` is the DOT of the
    GraphModule (each GraphModule it calls gets its own, by
    ``get_dot_graph(submod_name)``)."""

    def __init__(
        self,
        graph_module,
        name,
        ignore_getattr=False,
        ignore_parameters_and_buffers=False,
        skip_node_names_in_args=True,
        parse_stack_trace=False,
        dot_graph_shape=None,
        normalize_args=False,
    ):
        self._name = name
        self.normalize_args = normalize_args
        self.dot_graph_shape = dot_graph_shape if dot_graph_shape is not None else "record"
        options = (ignore_getattr, ignore_parameters_and_buffers, skip_node_names_in_args, parse_stack_trace)
        self._dot_graphs = {name: self._to_dot(graph_module, name, *options)}
        for node in graph_module.graph.nodes:
            if node.op != "call_module":
                continue
            leaf = self._get_leaf_node(graph_module, node)
            if isinstance(leaf, torch.fx.GraphModule):
                sub = f"{name}_{node.target}"
                self._dot_graphs[sub] = self._to_dot(leaf, sub, *options)

    def get_dot_graph(self, submod_name=None):
        return self.get_main_dot_graph() if submod_name is None else self.get_submod_dot_graph(submod_name)

    def get_main_dot_graph(self):
        return self._dot_graphs[self._name]

    def get_submod_dot_graph(self, submod_name):
        return self._dot_graphs[f"{self._name}_{submod_name}"]

    def get_all_dot_graphs(self):
        return self._dot_graphs

    def _get_node_style(self, node):
        style = {
            "shape": self.dot_graph_shape,
            "fillcolor": "#CAFFE3",
            "style": '"filled,rounded"',
            "fontcolor": "#000000",
        }
        if node.op in _COLOR_MAP:
            style["fillcolor"] = _COLOR_MAP[node.op]
        else:
            digest = hashlib.md5(node._pretty_print_target(node.target).encode(), usedforsecurity=False).hexdigest()
            style["fillcolor"] = _HASH_COLOR_MAP[int(digest[:8], 16) % len(_HASH_COLOR_MAP)]
        return style

    def _get_leaf_node(self, module, node):
        value = module
        for atom in node.target.split("."):
            if not hasattr(value, atom):
                raise RuntimeError(str(value) + " does not have attribute " + atom + "!")
            value = getattr(value, atom)
        return value

    def _typename(self, target):
        if isinstance(target, torch.nn.Module):
            name = torch.typename(target)
        elif isinstance(target, str):
            name = target
        else:
            name = _get_qualified_name(target)
        # Braces would end the record label early.
        return name.replace("{", r"\{").replace("}", r"\}")

    def _shorten_file_name(self, full_file_name, truncate_to_last_n=2):
        parts = full_file_name.split("/")
        return "/".join(parts[-truncate_to_last_n:]) if len(parts) >= truncate_to_last_n else full_file_name

    def _args_label(self, value, skip_node_names_in_args):
        if isinstance(value, tuple):
            prefix, suffix = r"|args=(\l", r",\n)\l"
            items = [_format_arg(a, max_list_len=8) for a in value]
        elif isinstance(value, dict):
            prefix, suffix = r"|kwargs={\l", r",\n}\l"
            items = [f"{k}: {_format_arg(v, max_list_len=8)}" for k, v in value.items()]
        else:
            return ""
        if skip_node_names_in_args:
            items = [a for a in items if "%" not in a]
        if not items:
            return ""
        text = prefix + r",\n".join(items) + suffix
        if len(items) == 1:
            text = text.replace(r"\l", "").replace(r"\n", "")
        return text.replace("{", r"\{").replace("}", r"\}")

    def _get_node_label(self, module, node, skip_node_names_in_args, parse_stack_trace):
        label = "{" + f"name=%{node.name}|op_code={node.op}\n"
        if node.op == "call_module":
            leaf = self._get_leaf_node(module, node)
            label += r"\n" + self._typename(leaf) + r"\n|"
            constants = getattr(leaf, "__constants__", None)
            if constants is not None:
                label += r"\n".join(f"{c}: {getattr(leaf, c)}" for c in constants)
            label += r"\n"
        else:
            label += f"|target={self._typename(node.target)}" + r"\n"
            args, kwargs = node.args, node.kwargs
            if self.normalize_args:
                try:
                    args, kwargs = normalize_function(
                        node.target, node.args, node.kwargs, normalize_to_only_use_kwargs=True
                    )
                except Exception:
                    # Some targets need their overload given; draw them as called.
                    args, kwargs = node.args, node.kwargs
            if args:
                label += self._args_label(args, skip_node_names_in_args)
            if kwargs:
                label += self._args_label(kwargs, skip_node_names_in_args)
            label += f"|num_users={len(node.users)}" + r"\n"
        label += self._tensor_meta_to_label(node.meta.get("tensor_meta"))
        if parse_stack_trace and node.stack_trace is not None:
            frame = _last_frame(node.stack_trace)
            if frame is not None:
                file, line, code = frame
                label += f"|file={self._shorten_file_name(file)}:{line} {code}" + r"\n"
        return label + "}"

    def _tensor_meta_to_label(self, tm):
        if tm is None:
            return ""
        if type(tm).__name__ == "TensorMetadata":
            return self._stringify_tensor_meta(tm)
        if isinstance(tm, (list, tuple)):
            return "".join(self._tensor_meta_to_label(t) for t in tm)
        if isinstance(tm, dict):
            return "".join(self._tensor_meta_to_label(t) for t in tm.values())
        raise RuntimeError(f"Unsupported tensor meta type {type(tm)}")

    def _stringify_tensor_meta(self, tm):
        return (
            f"|dtype={tm.dtype}" + r"\n"
            f"|shape={tuple(tm.shape)}" + r"\n"
            f"|requires_grad={tm.requires_grad}" + r"\n"
            f"|stride={tm.stride}" + r"\n"
        )

    def _get_tensor_label(self, t):
        return str(t.dtype) + str(list(t.shape)) + r"\n"

    def _to_dot(
        self,
        graph_module,
        name,
        ignore_getattr,
        ignore_parameters_and_buffers,
        skip_node_names_in_args,
        parse_stack_trace,
    ):
        dot = Dot(name, rankdir="TB")
        weight_style = dict(_WEIGHT_STYLE, shape=self.dot_graph_shape)
        for node in graph_module.graph.nodes:
            if ignore_getattr and node.op == "get_attr":
                continue
            label = self._get_node_label(graph_module, node, skip_node_names_in_args, parse_stack_trace)
            dot.add_node(node.name, label=label, **self._get_node_style(node))
            if node.op != "call_module" or ignore_parameters_and_buffers:
                continue
            leaf = self._get_leaf_node(graph_module, node)
            if isinstance(leaf, torch.fx.GraphModule):
                continue
            for pname, tensor in chain(leaf.named_parameters(), leaf.named_buffers()):
                full = node.name + "." + pname
                kind = (
                    full + "|op_code=get_" + "parameter" if isinstance(tensor, torch.nn.Parameter) else "buffer" + r"\l"
                )
                dot.add_node(full, label="{" + kind + self._get_tensor_label(tensor) + "}", **weight_style)
                dot.add_edge(full, node.name)
        for node in graph_module.graph.nodes:
            if ignore_getattr and node.op == "get_attr":
                continue
            for user in node.users:
                dot.add_edge(node.name, user.name)
        return dot


def _last_frame(stack_trace):
    """(file, line, code) of the innermost frame of a formatted stack trace."""
    lines = stack_trace.strip().split("\n")
    for i in range(len(lines) - 1, -1, -1):
        match = re.match(r'^\s*File "(.+)", line (\d+), in (.+)$', lines[i])
        if match:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return match.group(1), match.group(2), code
    return None


def _target_text(gm, node):
    if node.op == "call_module":
        try:
            return f"{node.target}: {type(gm.get_submodule(node.target)).__name__}"
        except AttributeError:
            return node.target
    if node.op == "call_function":
        return _get_qualified_name(node.target)
    if node.op == "call_method":
        return f".{node.target}()"
    if node.op == "get_attr":
        return node.target
    return ""


def _shape_text(node):
    value = _fx.node_value(node)
    if value is None:
        return ""
    values = value if isinstance(value, (list, tuple)) else (value,)
    return ", ".join(t for t in map(_fx.value_summary, values) if t)


def _module_path(node):
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1]
    return path[0] if isinstance(path, tuple) else str(path)


def render(gm, title, format):
    """``gm`` drawn as ``"svg"`` or ``"html"``: boxes coloured by opcode
    with the node's name, target, shape/dtype when known (ShapeProp or
    example-shape tracing) and the user's file:line; the HTML adds a
    searchable node table in a module tree from ``nn_module_stack``."""
    nodes = list(gm.graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    rows = [
        [
            node.name,
            node.op,
            _target_text(gm, node),
            _shape_text(node),
            os.path.basename(node.meta.get("source_loc") or ""),
            _module_path(node),
        ]
        for node in nodes
    ]
    edges = [[index[node], index[user]] for node in nodes for user in node.users]
    return _fx.render_picture(title, rows, edges, format)
