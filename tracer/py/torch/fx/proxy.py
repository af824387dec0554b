"""``torch.fx.proxy``: ``Proxy`` values that record the operations applied to
them as nodes of a graph, and the tracer base that creates them."""

import dis
import operator
import sys
import traceback

import torch
from torch.fx.graph import Graph, magic_methods, reflectable_magic_methods
from torch.fx._native import fx as _fx
from torch.fx.node import Node, map_arg  # noqa: F401 (PyTorch's torch.fx.proxy has Node)

__all__ = [
    "TracerBase",
    "GraphAppendingTracer",
    "TraceError",
    "Proxy",
    "Attribute",
    "ParameterProxy",
    "Scope",
    "ScopeContextManager",
]


class TraceError(ValueError):
    pass


class Scope:
    """Where in the module hierarchy a node was created."""

    def __init__(self, module_path, module_type):
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Sets a tracer's current scope for the duration of a module call."""

    def __init__(self, scope, current_scope):
        self._prev_scope = Scope(scope.module_path, scope.module_type)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self):
        return self._scope

    def __exit__(self, *args):
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


_BASE_TYPES = (
    str,
    int,
    float,
    bool,
    complex,
    torch.dtype,
    torch.Tensor,
    torch.device,
    torch.memory_format,
    type(None),
    type(...),
)


class TracerBase:
    """Turns calls on ``Proxy`` values into graph nodes."""

    graph: Graph
    record_stack_traces = False
    # fxvm's own: the user's file:line in node.meta["source_loc"] (for errors
    # and profiles); off where passes append nodes, as torch.fx adds no meta there.
    record_source_loc = True
    check_mutable_operations = False
    trace_asserts = False
    proxy_buffer_attributes = False
    traced_func_name = "forward"
    scope = None
    module_stack = None
    node_name_to_scope = None

    # The hooks a subclass may override, native (one body each; an override
    # calling super() reaches the same code the default path runs).
    create_node = _fx.tracer_hook("TracerBase.create_node")
    proxy = _fx.tracer_hook("TracerBase.proxy")
    create_proxy = _fx.tracer_hook("TracerBase.create_proxy")
    create_arg = _fx.tracer_hook("TracerBase.create_arg")

    def to_bool(self, obj):
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj):
        raise TraceError(
            "Proxy object cannot be iterated. This can be attempted when the Proxy is used in a loop or as a *args "
            "or **kwargs function argument. See the torch.fx docs on pytorch.org for a more detailed explanation of "
            "what types of control flow can be traced, and check out the Proxy docstring for help troubleshooting "
            "Proxy iteration errors"
        )

    def keys(self, obj):
        return Attribute(obj, "keys")()


# code object -> [(offset, instruction)], disassembled once per code object.
_instructions = {}


def _current_instruction(frame):
    """The instruction ``frame`` is executing (the last one at or before
    ``f_lasti``: CPython points at it, RustPython just past it)."""
    code = frame.f_code
    entry = _instructions.get(id(code))
    if entry is None or entry[0] is not code:
        entry = (code, [(inst.offset, inst) for inst in dis.get_instructions(code)])
        _instructions[id(code)] = entry
    current = None
    for offset, inst in entry[1]:
        if offset > frame.f_lasti:
            break
        current = inst
    return current


def _user_stack_trace():
    """The user frames that led here, from the first ``forward``, formatted as
    ``traceback`` formats them (frozen ``torch`` modules left out)."""
    frames = traceback.extract_stack()[:-2]
    user = [f for f in frames if not f.filename.startswith(("torch.", "<frozen"))]
    for i, f in enumerate(user):
        if f.name == "forward":
            user = user[i:]
            break
    else:
        user = []
    return "".join(traceback.format_list(user)).strip()


# The node an Interpreter is running, whose meta new nodes inherit while a
# Transformer preserves node meta.
_current_meta = {}
_preserving = [False]


class GraphAppendingTracer(TracerBase):
    """A tracer that appends nodes to an existing graph (for decompositions)."""

    record_source_loc = False

    def __init__(self, graph):
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = {}
        self.node_name_to_scope = {}


class Proxy:
    """A value of a graph: operations on it become nodes of the graph."""

    __init__ = _fx.tracer_hook("Proxy.__init__")

    def __repr__(self):
        return f"Proxy({self.node.name})"

    # ``proxy.attr``: an ``Attribute`` (native).
    __getattr__ = _fx.tracer_hook("Proxy.__getattr__")

    def __call__(self, *args, **kwargs):
        return _fx.record(self.tracer, "call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self):
        # `a, b = proxy` unpacks a known count: read it from the caller's bytecode.
        inst = _current_instruction(sys._getframe(1))
        if inst is not None and inst.opname == "UNPACK_SEQUENCE":
            return (self[i] for i in range(inst.argval))
        return self.tracer.iter(self)

    def __abs__(self):
        return _fx.record(self.tracer, "call_function", operator.abs, (self,), {})

    def __bool__(self):
        return self.tracer.to_bool(self)

    def keys(self):
        return self.tracer.keys(self)

    def __len__(self):
        raise RuntimeError(
            "'len' is not supported in symbolic tracing by default. If you want this call to be recorded, please call torch.fx.wrap('len') at module scope"
        )

    # Natively: finds the one tracer among the arguments and records a
    # call_method (Tensor methods) or call_function node through its hooks.
    __torch_function__ = classmethod(_fx.proxy_torch_function)


# The class of the proxies a tracer makes (a subclass for `shape_trace`),
# also on the native path.
TracerBase._proxy_class = Proxy


class Attribute(Proxy):
    """``proxy.attr``: a ``getattr`` node, made only if the attribute is used as
    a value rather than called as a method."""

    __init__ = _fx.tracer_hook("Attribute.__init__")

    @property
    def node(self):
        if self._node is None:
            self._node = _fx.record(self.tracer, "call_function", getattr, (self.root, self.attr), {}).node
        return self._node

    # A ``call_method`` node (native).
    __call__ = _fx.tracer_hook("Attribute.__call__")


class ParameterProxy(Proxy):
    """A proxy for a parameter: shape queries answer from the real parameter."""

    def __init__(self, tracer, node, name, param):
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self):
        return f"ParameterProxy({self.name})"

    @property
    def shape(self):
        return self.param.shape

    def size(self):
        return self.param.size()

    def dim(self):
        return self.param.dim()

    @property
    def ndim(self):
        return self.param.ndim

    def numel(self):
        return self.param.numel()

    def nelement(self):
        return self.param.nelement()


# The operators record ``operator.<op>`` nodes natively (reflected ones
# with the operands swapped); ``div`` is Python 2's and has no operator.
for _method in magic_methods:
    if hasattr(operator, _method):
        _name = f"__{_method.strip('_')}__"
        setattr(Proxy, _name, _fx.ProxyOperator(getattr(operator, _method), False, _name))
for _method in reflectable_magic_methods:
    if hasattr(operator, _method):
        _name = f"__r{_method.strip('_')}__"
        setattr(Proxy, _name, _fx.ProxyOperator(getattr(operator, _method), True, _name))
del _method, _name
