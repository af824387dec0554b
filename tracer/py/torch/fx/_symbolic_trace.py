"""``torch.fx._symbolic_trace``: ``symbolic_trace`` and ``Tracer``. Tracing
runs the model's ``forward`` on ``Proxy`` values with ``nn.Module.__call__``
and ``__getattr__`` patched, recording each operation as a node."""

import builtins
import collections
import functools
import inspect
import math
import warnings
from types import FunctionType

import torch
import torch.utils._pytree as pytree
from torch.fx._native import fx as _fx
from torch.fx._patcher import Patcher, Wrappers, patch_function_args, public_callable_ids
from torch.fx.graph import Graph
from torch.fx.graph_module import GraphModule
from torch.fx.node import map_aggregate
from torch.fx.proxy import _BASE_TYPES as proxy_base_types
from torch.fx.proxy import ParameterProxy, Proxy, Scope, TracerBase

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "PHWithMeta", "ProxyableClassMeta", "is_fx_tracing"]

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS

_orig_module_call = torch.nn.Module.__call__
_orig_module_getattr = torch.nn.Module.__getattr__

_proxyable_classes = {}
_is_fx_tracing_flag = [False]
# Set while a tracer computes values of its own (the fake values of
# ``shape_trace``): module calls and attribute reads then run unpatched.
_suspended = [False]


def is_fx_tracing():
    return _is_fx_tracing_flag[0]


def is_fx_symbolic_tracing():
    return _is_fx_tracing_flag[0]


class ProxyableClassMeta(type):
    """Instances of classes with this metaclass built from proxies are recorded
    as ``call_function`` nodes of the class."""

    def __init__(cls, name, bases, attrs):
        _proxyable_classes.setdefault(cls)
        super().__init__(name, bases, attrs)

    def __call__(cls, *args, **kwargs):
        instance = cls.__new__(cls)
        if not is_fx_tracing():
            cls.__init__(instance, *args, **kwargs)
            return instance
        found = []
        map_aggregate((args, kwargs), lambda a: found.append(a) if isinstance(a, Proxy) else None)
        if found:
            return found[0].tracer.create_proxy("call_function", cls, args, kwargs)
        cls.__init__(instance, *args, **kwargs)
        return instance


class PHBase:
    """A placeholder inside ``concrete_args``: that part stays an input."""

    def __repr__(self):
        return "PH"


PH = PHBase()


class PHWithMeta(PHBase):
    def __init__(self, ph_key=None):
        super().__init__()
        self.ph_key = ph_key


def _transfer_attrs(fr, to):
    for attr_name in dir(fr):
        attr_val = getattr(fr, attr_name)
        if not callable(attr_val) and not attr_name.startswith("__") and not hasattr(to, attr_name):
            setattr(to, attr_name, attr_val)


# The argument types a concrete arg can be asserted equal to: the graph's
# base argument types but None and Ellipsis (asserted otherwise).
_BASE_TYPES = tuple(t for t in proxy_base_types if t not in (type(None), type(...)))


class Tracer(TracerBase):
    """Traces a module or function into a ``Graph``. Subclass it and override
    ``is_leaf_module``, ``create_proxy``, ``create_arg``, ``call_module``,
    ``getattr``, ``to_bool``, ``iter``, ``keys`` … to change how."""

    def __init__(self, autowrap_modules=(math,), autowrap_functions=(), param_shapes_constant=False):
        super().__init__()
        # Functions called with a proxy argument are recorded, not run.
        self._autowrap_function_ids = {id(f) for f in autowrap_functions}
        for m in autowrap_modules:
            self._autowrap_function_ids.update(public_callable_ids(m.__dict__))
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        # Ordered (a dict keeps insertion order); popped last-in first-out.
        self.module_stack = {}
        self.num_calls = {}
        self.node_name_to_scope = {}

    _qualname_counter = collections.defaultdict(int)

    def get_fresh_qualname(self, prefix):
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    # Parameters, buffers and submodules become ``get_attr`` nodes; other
    # tensors ``_tensor_constantN`` attributes of the root (native).
    create_arg = _fx.tracer_hook("Tracer.create_arg")

    @classmethod
    def _graph_module_deserialization_tracer(cls, root):
        """The tracer that re-traces an unpickled GraphModule's code; tracers
        whose constructor needs arguments override it."""
        return cls()

    # Native hooks: modules of ``torch.nn`` (except ``Sequential``) are leaves;
    # a module's path is its qualified name in the root; a module call is a
    # ``call_module`` node for a leaf, else a trace into ``forward``.
    is_leaf_module = _fx.tracer_hook("Tracer.is_leaf_module")
    path_of_module = _fx.tracer_hook("Tracer.path_of_module")
    call_module = _fx.tracer_hook("Tracer.call_module")

    # A module attribute read while tracing: parameters (and buffers, with
    # ``proxy_buffer_attributes``) become one ``get_attr`` node each (native).
    getattr = _fx.tracer_hook("Tracer.getattr")

    def create_args_for_root(self, root_fn, is_module, concrete_args=None):
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        orig_args = list(co.co_varnames)
        names_iter = iter(co.co_varnames)
        args = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)
            args.append(self.root)
        defaults = _parameter_defaults(fn_for_analysis)
        if (
            isinstance(concrete_args, tuple)
            and len(concrete_args) > 0
            and (co.co_flags & HAS_VARSTUFF)
            and total_args == 1
        ):
            for name_idx, concrete_arg in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{name_idx}", (), {})
                if isinstance(concrete_arg, PHBase) and concrete_arg != PH:
                    _transfer_attrs(fr=concrete_arg, to=out.node)
                args.append(out)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(
                    f"Tracing expected {len(arg_names)} arguments but got {len(concrete_args)} concrete arguments"
                )
            concrete_args = dict(zip(arg_names, concrete_args))
        args.extend(self._proxy_placeholder(name, concrete_args, defaults, fn_for_analysis) for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            # *args/**kwargs arrive as one placeholder each, passed positionally.
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args, defaults, fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args, defaults, fn_for_analysis))
            root_fn = patch_function_args(root_fn, len(args))
        flat_args, in_spec = pytree.tree_flatten(tuple(args))
        if not all(child.is_leaf() for child in in_spec.children_specs):
            from torch.fx.graph import _PyTreeCodeGen, _PyTreeInfo

            self.graph._codegen = _PyTreeCodeGen(_PyTreeInfo(orig_args[:total_args], in_spec, None))

            def flatten_fn(*args):
                tree_args = pytree.tree_unflatten(list(args), in_spec)
                tree_out = root_fn(*tree_args)
                out_args, out_spec = pytree.tree_flatten(tree_out)
                self.graph._codegen.pytree_info = self.graph._codegen.pytree_info._replace(out_spec=out_spec)
                return out_args

            return flatten_fn, flat_args
        return root_fn, args

    def trace(self, root, concrete_args=None):
        """Traces ``root`` (a module's ``forward``, or a function) into a Graph."""
        previous_flag = _is_fx_tracing_flag[0]
        _is_fx_tracing_flag[0] = True
        try:
            if isinstance(root, torch.nn.Module):
                self.root = root
                if not hasattr(type(root), self.traced_func_name):
                    raise AssertionError(
                        f"traced_func_name={self.traced_func_name} doesn't exist in {type(root).__name__}"
                    )
                fn = getattr(type(root), self.traced_func_name)
                self.root_module_name = root._get_name()
                self.submodule_paths = _fx.module_paths(root)
            else:
                self.root = torch.nn.Module()
                fn = root
            self.graph = Graph(tracer_cls=getattr(self, "__class__", None))
            if hasattr(fn, "__code__"):
                code = fn.__code__
                self.graph._co_fields = {
                    "co_name": code.co_name,
                    "co_filename": code.co_filename,
                    "co_firstlineno": code.co_firstlineno,
                }
            self.tensor_attrs = {}
            self._named_tensor_index = {}

            self.tensor_attrs = _fx.constant_attrs(self.root, (torch.Tensor, pytree.TreeSpec))
            if not isinstance(fn, FunctionType):
                raise AssertionError(f"Expected FunctionType, got {type(fn)}")
            fn_globals = fn.__globals__
            fn, args = self.create_args_for_root(fn, isinstance(root, torch.nn.Module), concrete_args)
            parameter_proxy_cache = {}

            # Module.__getattr__ and __call__ while tracing (native): each goes
            # through this tracer's getattr / call_module hook.
            module_getattr_wrapper = _fx.TracedModuleGetattr(
                self, _orig_module_getattr, _suspended, parameter_proxy_cache
            )

            # The globals of each module class's forward are checked once.
            autowrapped_classes = set()

            def on_new_class(mod):
                autowrapped_classes.add(type(mod))
                _autowrap_check(
                    patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}), self._autowrap_function_ids
                )

            module_call_wrapper = _fx.TracedModuleCall(
                self, _orig_module_call, _suspended, autowrapped_classes, on_new_class
            )

            with Patcher() as patcher:
                patcher.patch_method(torch.nn.Module, "__getattr__", module_getattr_wrapper, deduplicate=False)
                patcher.patch_method(torch.nn.Module, "__call__", module_call_wrapper, deduplicate=False)
                _patch_wrapped_functions(patcher)
                _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
                for module in self._autowrap_search:
                    _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
                ann = getattr(inspect.unwrap(fn), "__annotations__", {}) or {}
                self.create_node(
                    "output", "output", (self.create_arg(fn(*args)),), {}, type_expr=ann.get("return", None)
                )
            self.submodule_paths = None
        finally:
            _is_fx_tracing_flag[0] = previous_flag
        return self.graph

    def _proxy_placeholder(self, name, concrete_args, defaults, fn_for_analysis):
        if concrete_args is not None and name in concrete_args:
            cnt = 0

            def replace_ph(x):
                nonlocal cnt
                cnt += 1
                default = (defaults[name],) if name in defaults else ()
                out = self.create_proxy("placeholder", f"{name}_{str(cnt)}", default, {})
                if isinstance(x, PHBase):
                    if x != PH:
                        _transfer_attrs(fr=x, to=out.node)
                    return out
                if type(x) is bool or type(x) in _BASE_TYPES and type(x) is not torch.Tensor:
                    torch._assert(out == x, f"{name} has been specialized to have value {x} but got another value")
                elif x is None:
                    self.create_proxy(
                        "call_function",
                        _assert_is_none,
                        (out, f"{name} has been specialized to have value None but got another value"),
                        {},
                    )
                else:
                    warnings.warn(
                        f"Was not able to add assertion to guarantee correct input {name} to specialized function. "
                        "It is up to the user to make sure that your inputs match the inputs you specialized the function with."
                    )
                return x

            return pytree.tree_map(replace_ph, concrete_args[name])
        if name[0] == "*":
            default = ()
        else:
            default = (defaults[name],) if name in defaults else ()
        return self.create_proxy(
            "placeholder", name, default, {}, type_expr=fn_for_analysis.__annotations__.get(name, None)
        )


# create_proxy overrides (functions) known to take proxy_factory_fn or not
# (inspect is slow; a function's signature does not change).
_proxy_factory_cache = {}


def _takes_proxy_factory(create_proxy):
    """Whether a tracer's own ``create_proxy`` (bound) takes ``proxy_factory_fn``."""
    f = getattr(create_proxy, "__func__", create_proxy)
    takes = _proxy_factory_cache.get(f)
    if takes is None:
        takes = _proxy_factory_cache[f] = "proxy_factory_fn" in inspect.signature(create_proxy).parameters
    return takes


def _parameter_proxy_factory(tracer, name, param):
    """The ``proxy_factory_fn`` of a parameter's proxy with constant shapes."""
    return lambda node: ParameterProxy(tracer, node, name, param)


def _parameter_defaults(fn):
    """``{name: default}`` for ``fn``'s parameters that have one: what
    ``inspect.signature`` reports, read from the function itself (inspect is
    pure Python and costs more than the rest of a small trace)."""
    if hasattr(fn, "__signature__"):
        params = inspect.signature(fn).parameters.values()
        return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    co = fn.__code__
    names = co.co_varnames[: co.co_argcount]
    defaults = fn.__defaults__ or ()
    out = dict(zip(names[len(names) - len(defaults) :], defaults))
    out.update(fn.__kwdefaults__ or {})
    return out


# (id(globals), name) → globals, for `torch.fx.wrap`.
_wrapped_fns_to_patch = {}


def _find_proxy(*objects_to_search):
    proxy = None

    def find_proxy(x):
        nonlocal proxy
        if isinstance(x, Proxy):
            proxy = x

    map_aggregate(objects_to_search, find_proxy)
    return proxy


# One wrapper per function and place it is patched in (a dict and a name),
# reused by later traces: a wrapper finds its tracer through the proxies it
# is called with. Distinct places keep distinct wrappers, as in torch.fx.
_wrapper_cache = {}


def _create_wrapped_func(orig_fn, frame_dict=None, name=None):
    key = (id(frame_dict), name, id(orig_fn))
    cached = _wrapper_cache.get(key)
    if cached is not None and cached[0] is orig_fn and cached[1] is frame_dict:
        return cached[2]
    wrapped = _make_wrapped_func(orig_fn)
    if frame_dict is not None:
        _wrapper_cache[key] = (orig_fn, frame_dict, wrapped)
    return wrapped


def _make_wrapped_func(orig_fn):
    @functools.wraps(orig_fn)
    def wrapped(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return_proxy = proxy.tracer.create_proxy("call_function", orig_fn, args, kwargs)
            return_proxy.node.meta["is_wrapped"] = True
            return return_proxy
        return orig_fn(*args, **kwargs)

    return wrapped


def _patch_wrapped_functions(patcher):
    for (_, name), frame_dict in _wrapped_fns_to_patch.copy().items():
        if name not in frame_dict and hasattr(builtins, name):
            orig_fn = getattr(builtins, name)
        else:
            orig_fn = frame_dict[name]
        patcher.patch(frame_dict, name, _create_wrapped_func(orig_fn, frame_dict, name))


# The autowrap wrappers made so far, kept natively for later traces.
_autowrap_wrappers = Wrappers()


def _autowrap_check(patcher, frame_dict, function_ids):
    # The scan over every global runs natively; a function met for the
    # first time gets its wrapper from _create_wrapped_func.
    patcher.autowrap(frame_dict, function_ids, _create_wrapped_func, _autowrap_wrappers)


def wrap(fn_or_name):
    """At module scope, ``torch.fx.wrap("name")`` (or ``@torch.fx.wrap``) makes
    calls to that global function leaves of a trace: recorded, not traced."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or string name")
    fn_name = fn_or_name.__name__ if callable(fn_or_name) else fn_or_name
    f = inspect.currentframe().f_back
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(f.f_globals), fn_name)] = f.f_globals
    return fn_or_name


def symbolic_trace(root, concrete_args=None):
    """Traces ``root`` into a ``GraphModule`` named after its class (or function)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, torch.nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)


@wrap
def _assert_is_none(value, msg):
    if value is not None:
        raise AssertionError(msg)
