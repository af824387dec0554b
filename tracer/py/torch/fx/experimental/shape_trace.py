"""Tracing with example shapes: ``shape_trace(model, example_inputs,
dynamic=...)`` traces as ``symbolic_trace`` does — the same nodes, names
and code — but every value also has a *fake* counterpart (sizes as
``SymInt``s of a ``ShapeEnv``, dtype), computed lazily by the ops' shape
rules. Python that forces a shape-derived value (``assert t <= n``,
``if x.size(1) > n``, ``range(t)``, ``int(x.shape[0] // 2)``, slicing a
buffer by a traced length) is answered from the examples and leaves a
guard with the user's file and line; value-dependent control flow still
raises torch.fx's ``TraceError``. The ``GraphModule`` checks its guards on
every call."""

import builtins

import torch
from torch.fx._native import fx as _fx
from torch.fx._symbolic_trace import Tracer, _parameter_defaults, _suspended
from torch.fx.experimental.fake import _OPERATORS, FakeTensor, NoShapeRule, _infer, fake_mode
from torch.fx.experimental.symbolic_shapes import ShapeEnv
from torch.fx.graph_module import GraphModule
from torch.fx.node import Node
from torch.fx.proxy import Proxy, TraceError

__all__ = ["ShapeTracer", "shape_trace", "annotate", "GuardViolation"]


class GuardViolation(RuntimeError):
    """A call whose inputs break a fact the traced graph relies on."""


class ShapeProxy(Proxy):
    """A proxy that can be forced to a Python value when its fake value is
    a size (``range(t)``, ``int(n)``)."""

    def __index__(self):
        return self.tracer.to_int(self)

    def __int__(self):
        return self.tracer.to_int(self)

    def __float__(self):
        return float(self.tracer.value_of(self))

    def __len__(self):
        # Outside the traced function's own globals `len` is the builtin,
        # which needs an int: the example's, with a guard.
        n = self.tracer._length(self)
        if n is None:
            return super().__len__()
        return n


def _sym_len(x):
    """``len`` recorded in the graph when given a proxy (its value is the
    first size, a SymInt)."""
    return builtins.len(x)


class ShapeTracer(Tracer):
    """A ``Tracer`` whose placeholders carry example tensors; ``dynamic``
    maps an input's name to the dims that are symbolic (``True``: all)."""

    _proxy_class = ShapeProxy

    def __init__(self, example_inputs, dynamic=None, **kwargs):
        super().__init__(**kwargs)
        self.example_inputs = example_inputs
        self.dynamic = dynamic or {}
        self.shape_env = ShapeEnv()
        self.shape_env._holds = self._holds
        self.shape_env._hint = self._hint
        # input name -> [(dim, symbol name or None)], for the guard checks
        self.input_dims = {}

    # -- the oracle the native shape rules ask --------------------------
    def _holds(self, expr):
        return bool(self.shape_env.evaluate_expr(expr, _user_where()))

    def _hint(self, expr):
        return int(self.shape_env.size_hint(self.shape_env.simplify(expr)))

    # -- fake values ---------------------------------------------------
    def _placeholder_value(self, name):
        key = name.lstrip("*")
        if key not in self.example_inputs:
            return None
        example = self.example_inputs[key]
        if not isinstance(example, torch.Tensor):
            return example
        dims = self.dynamic.get(key, ())
        if dims is True:
            dims = range(example.dim())
        dims = {d % max(example.dim(), 1) for d in dims}
        sizes, record = [], []
        for d, n in enumerate(example.shape):
            if d in dims:
                sym = self.shape_env.create_symbol(n, source=_Source(f"L['{key}'].size()[{d}]"))
                sizes.append(sym)
                record.append((d, n, str(sym) if sym.constant() is None else None))
            else:
                sizes.append(n)
                record.append((d, n, None))
        self.input_dims[key] = (example.dtype, record)
        return FakeTensor(sizes, example.dtype, self.shape_env)

    def value_of(self, proxy):
        return self._value(proxy.node)

    def _resolve(self, a):
        """``a`` (a node argument) with every node replaced by its value."""
        if isinstance(a, Node):
            return self._value(a)
        t = type(a)
        if t is tuple:
            return tuple([self._resolve(x) for x in a])
        if isinstance(a, list):
            return [self._resolve(x) for x in a]
        if t is dict or isinstance(a, dict):
            return {k: self._resolve(v) for k, v in a.items()}
        if t is slice:
            return slice(self._resolve(a.start), self._resolve(a.stop), self._resolve(a.step))
        return a

    def _value(self, node):
        meta = node.meta
        if "val" in meta:
            return meta["val"]
        suspended = _suspended[0]
        _suspended[0] = True
        try:
            with fake_mode():
                value = self._compute(node)
        except NoShapeRule as e:
            raise TraceError(f"cannot follow the sizes through {node.format_node()}: {e}") from None
        finally:
            _suspended[0] = suspended
        meta["val"] = value
        return value

    def _compute(self, node):
        op = node.op
        if op == "placeholder":
            return self._placeholder_value(node.target)
        if op == "get_attr":
            value = self.root
            for part in node.target.split("."):
                value = getattr(value, part)
            if isinstance(value, torch.Tensor):
                value = FakeTensor(value.shape, value.dtype, self.shape_env)
            return value
        args = self._resolve(node.args)
        kwargs = self._resolve(node.kwargs) if node.kwargs else {}
        if op == "call_function":
            return _call(node.target, args, kwargs)
        if op == "call_method":
            self_value = args[0]
            if type(self_value) is FakeTensor and node.target not in _FAKE_OWN:
                return _infer(getattr(torch.Tensor, node.target), args, kwargs)
            return getattr(self_value, node.target)(*args[1:], **kwargs)
        if op == "call_module":
            modules = self.__dict__.get("_modules_by_name")
            if modules is None:
                modules = self._modules_by_name = _modules_by_path(self.root)
            return self._leaf_forward(modules[node.target], args, kwargs)
        return args[0]

    @staticmethod
    def _leaf_forward(module, args, kwargs):
        """A leaf module's forward on fakes, for its result's sizes; what it
        writes to its own buffers (BatchNorm's running statistics while
        training) is undone: tracing must not change the model."""
        # (Most leaves, Linear or LayerNorm, have no buffers: no walk then.)
        saved = [(b, b.clone()) for b in module.buffers()] if module._buffers or module._modules else ()
        try:
            return module.forward(*args, **kwargs)
        finally:
            with torch.no_grad():
                for b, before in saved:
                    b.copy_(before)

    # -- forcing -------------------------------------------------------
    def to_bool(self, obj):
        value = self._value(obj.node)
        if isinstance(value, (bool, torch.SymBool)) or type(value) is int:
            return bool(value)
        return super().to_bool(obj)

    def to_int(self, obj):
        value = self._value(obj.node)
        if isinstance(value, (int, torch.SymInt)) and not isinstance(value, bool):
            return int(value)
        raise TraceError(f"{obj.node.name} is not a size and cannot be used as an int while tracing")

    def iter(self, obj):
        """``for row in x`` / ``a, *rest = x.size()``: one item per index of
        the first dim, whose size the example decides (a guard when it is
        symbolic)."""
        n = self._length(obj)
        if n is None:
            return super().iter(obj)
        return iter([obj[i] for i in range(n)])

    def _length(self, obj):
        value = self._value(obj.node)
        if isinstance(value, tuple):
            return len(value)
        if isinstance(value, FakeTensor) and value.dim() > 0:
            return int(value.shape[0])
        return None

    def trace(self, root, concrete_args=None):
        fn = type(root).forward if isinstance(root, torch.nn.Module) else root
        globals_ = fn.__globals__
        # `len(proxy)` is recorded (its value a SymInt) rather than refused.
        patched = "len" not in globals_
        if patched:
            globals_["len"] = _len_wrapper
        try:
            return super().trace(root, concrete_args)
        finally:
            if patched:
                del globals_["len"]


class _Source:
    def __init__(self, name):
        self.name = name


def _len_wrapper(x):
    if isinstance(x, Proxy):
        return x.tracer.create_proxy("call_function", builtins.len, (x,), {})
    return builtins.len(x)


# FakeTensor's own methods (sizes), not registry ops.
_FAKE_OWN = frozenset(("size", "dim", "numel", "__len__", "__getitem__"))


def _call(target, args, kwargs):
    if target is builtins.len:
        return args[0].size(0) if isinstance(args[0], FakeTensor) else builtins.len(args[0])
    if (
        target is builtins.getattr
        and isinstance(args[0], FakeTensor)
        and args[1] in ("shape", "dtype", "ndim", "device")
    ):
        return getattr(args[0], args[1])
    return target(*args, **kwargs)


def _user_where():
    from torch.fx.experimental.sym_node import _user_frame

    return _user_frame()


class _Guards:
    """What a shape-traced GraphModule checks on each call: every input's
    dtype, rank and static sizes, and the guards over its symbolic sizes."""

    def __init__(self, names, input_dims, shape_env):
        self.names = names
        self.input_dims = input_dims
        self.shape_env = shape_env
        # Inputs with no symbolic dim are checked whole: (name, dtype, sizes).
        self._static = []
        for name, (dtype, dims) in input_dims.items():
            if all(entry[2] is None for entry in dims):
                self._static.append((name, dtype, torch.Size([entry[1] for entry in dims])))
        self._all_static = len(self._static) == len(input_dims)

    def check(self, args, kwargs):
        values = dict(zip(self.names, args))
        values.update(kwargs)
        why = self.violation(values)
        if why is not None:
            raise GuardViolation(why)

    def violation(self, values):
        """Why the inputs ``values`` (name → value) break the trace's
        requirements, or None when they keep them."""
        if self._all_static:
            for name, dtype, shape in self._static:
                x = values.get(name)
                if type(x) is not torch.Tensor or x.dtype != dtype or x.shape != shape:
                    break
            else:
                return None
        bindings = {}
        for name, (dtype, dims) in self.input_dims.items():
            x = values.get(name)
            if not isinstance(x, torch.Tensor):
                return f"input '{name}' was traced as a tensor; got {type(x).__name__}"
            if x.dtype != dtype or x.dim() != len(dims):
                return f"input '{name}' was traced as a {dtype} tensor with {len(dims)} dims; got a {x.dtype} tensor with {x.dim()} dims"
            for d, example, sym in dims:
                n = x.shape[d]
                if sym is None:
                    if n != example:
                        return f"input '{name}' has size {n} at dim {d}; the trace fixed it to {example} (mark the dim dynamic to vary it)"
                elif sym in bindings and bindings[sym] != n:
                    return f"input '{name}' has size {n} at dim {d}; the trace requires it equal to {sym} = {bindings[sym]}"
                else:
                    bindings[sym] = n
        for g in self.shape_env.guards:
            try:
                ok = g.expr.eval(bindings)
            except KeyError:
                continue
            if not ok:
                where = ", ".join(f"{s} = {v}" for s, v in sorted(bindings.items()))
                return f"guard violated: {g.expr} (made at {g.file}:{g.line}) with {where}"
        return None


def _check_examples(fn, names, example_inputs, concrete_args):
    """``example_inputs`` as ``{name: value}``, every input without a
    default given one (or a concrete value)."""
    where = f"{fn.__qualname__}({', '.join(names)})"
    if not isinstance(example_inputs, dict):
        example_inputs = tuple(example_inputs)
        if len(example_inputs) > len(names):
            raise TypeError(f"shape_trace: {len(example_inputs)} example inputs for {where}")
        example_inputs = dict(zip(names, example_inputs))
    for name in example_inputs:
        if name not in names:
            raise TypeError(f"shape_trace: {name!r} is not a parameter of {where}")
    defaults = _parameter_defaults(fn)
    for name in names:
        if name not in defaults and name not in example_inputs and name not in (concrete_args or {}):
            raise TypeError(f"shape_trace: no example for input {name!r} of {where}")
    return example_inputs


def _check_dynamic(dynamic, example_inputs):
    for name, dims in dynamic.items():
        example = example_inputs.get(name)
        if not isinstance(example, torch.Tensor):
            raise TypeError(f"shape_trace: dynamic dims for {name!r}, which has no example tensor")
        if dims is True:
            continue
        for d in dims:
            if not isinstance(d, int) or not -example.dim() <= d < max(example.dim(), 1):
                raise IndexError(f"shape_trace: dim {d!r} of {name!r}, whose example has {example.dim()} dims")


def annotate(gm, shape_env):
    """Fake values for the nodes of ``gm`` that have none (a graph edited
    after ``shape_trace``), from those that do; the guards the rules take on
    the way are dropped, as ``shape_trace``'s own pass drops them."""
    tracer = ShapeTracer.__new__(ShapeTracer)
    tracer.root = gm
    tracer.shape_env = shape_env
    tracer._modules_by_name = _modules_by_path(gm)
    kept = (list(shape_env.guards), dict(shape_env.replacements))
    with fake_mode():
        _fx.propagate_fakes(list(gm.graph.nodes), tracer, FakeTensor, _OPERATORS, tracer._modules_by_name)
    shape_env.guards, shape_env.replacements = kept


def _modules_by_path(root):
    """``dict(root.named_modules())``, from the native walk the tracer uses
    (the same first-found names, in the same order)."""
    return {path: module for module, path in _fx.module_paths(root).items()}


def shape_trace(root, example_inputs, dynamic=None, concrete_args=None, proxy_buffers=False):
    """Traces ``root`` with example inputs (a tuple in parameter order, or a
    dict by name); ``dynamic`` names the symbolic dims of each input
    (``{"idx": [1]}``, or ``True`` for all dims of all inputs). With
    ``proxy_buffers``, buffers are read through ``get_attr`` nodes (the
    tracer's ``proxy_buffer_attributes``), so writes to them are recorded."""
    fn = type(root).forward if isinstance(root, torch.nn.Module) else root
    co = fn.__code__
    names = list(co.co_varnames[: co.co_argcount])
    if isinstance(root, torch.nn.Module):
        names = names[1:]
    example_inputs = _check_examples(fn, names, example_inputs, concrete_args)
    if dynamic is True:
        dynamic = {n: True for n, v in example_inputs.items() if isinstance(v, torch.Tensor)}
    _check_dynamic(dynamic or {}, example_inputs)
    tracer = ShapeTracer(example_inputs, dynamic)
    tracer.proxy_buffer_attributes = proxy_buffers
    graph = tracer.trace(root, concrete_args)
    # Every node's meta gets its fake value; what the rules decide on the
    # way describes the values, it does not constrain the graph's inputs.
    env = tracer.shape_env
    kept = (list(env.guards), dict(env.replacements))
    tracer._modules_by_name = _modules_by_path(tracer.root)
    with fake_mode():
        _fx.propagate_fakes(list(graph.nodes), tracer, FakeTensor, _OPERATORS, tracer._modules_by_name)
    env.guards, env.replacements = kept
    name = root.__class__.__name__ if isinstance(root, torch.nn.Module) else root.__name__
    gm = GraphModule(tracer.root, graph, name)
    gm.shape_env = tracer.shape_env
    gm._shape_guards = _Guards(names, tracer.input_dims, tracer.shape_env)
    return gm
