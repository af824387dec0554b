"""``torch.library``: declaring operators from Python and registering their
kernels, reached as ``torch.ops.<namespace>.<name>`` (see ``torch._ops``).

fxvm runs CPU kernels; fake (meta), autograd, autocast and vmap
registrations are recorded as PyTorch records them, and never run: there
is no fake-tensor mode or autograd engine here.
"""

import inspect
import re
import sys
import typing

from torch import _C
from torch._ops import OpOverload, OpOverloadPacket, ops

__all__ = [
    "Library",
    "CustomOpDef",
    "custom_op",
    "define",
    "fallthrough_kernel",
    "impl",
    "impl_abstract",
    "infer_schema",
    "register_autograd",
    "register_fake",
    "register_kernel",
    "register_torch_dispatch",
    "register_vmap",
]

# Device types name the dispatch key of their backend kernel.
_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU", "mps": "MPS"}

# Where each namespace's DEF library was made, and each schema defined.
_DEF_SITES = {}
_SCHEMA_SITES = {}
# Registrations made before their operator was defined, by qualified name.
_PENDING = {}
# Fake, autograd, torch_dispatch and vmap registrations by qualified name
# (kept for introspection; fxvm has no fake tensors, autograd, dispatch modes
# or vmap to run them).
_FAKES = {}
_AUTOGRAD = {}
_TORCH_DISPATCH = {}
_VMAPS = {}
# Libraries the module-level functions open, kept alive as PyTorch keeps them.
_FRAGMENTS = {}


def _caller_site(depth):
    frame = sys._getframe(depth + 1)
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


def fallthrough_kernel():
    """A kernel that lets the call fall through to the next dispatch key."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


class FunctionSchema:
    """An operator schema, ``name.overload(Tensor x, float s) -> Tensor``."""

    def __init__(self, namespace, text):
        # The registry's own parser (one for fxvm's rows and for these).
        name, self._args, params, returns = _C._parse_schema(text)
        if returns is None:
            raise RuntimeError(f"Expected a schema of the form 'name(Type arg, ...) -> Return', got '{text.strip()}'")
        self.op_name, _, self.overload_name = name.partition(".")
        if "::" in self.op_name:
            raise RuntimeError(
                f"A schema in library '{namespace}' names its operator without a namespace, got '{name}'"
            )
        self.namespace = namespace
        self.name = f"{namespace}::{self.op_name}"
        self._returns = returns
        self.arguments = [Argument(*param) for param in params]

    def __str__(self):
        overload = f".{self.overload_name}" if self.overload_name else ""
        return f"{self.name}{overload}({self._args}) -> {self._returns}"

    __repr__ = __str__


class Argument:
    def __init__(self, type, name, default, kwarg_only):
        self.type = type
        self.name = name
        self.default_value = default
        self.kwarg_only = kwarg_only

    def __repr__(self):
        default = "" if self.default_value is None else f"={self.default_value}"
        return f"{self.type} {self.name}{default}"


def _qualified(op, namespace=None):
    """``ns::name[.overload]`` of an operator given by name or object."""
    if isinstance(op, CustomOpDef):
        return op._qualname
    if isinstance(op, OpOverload):
        return op.name()
    if isinstance(op, OpOverloadPacket):
        return op._qualified_op_name
    if not isinstance(op, str):
        raise TypeError(f"Expected an operator name or an OpOverload, got {type(op).__name__}")
    if "::" in op:
        return op
    if namespace is None:
        raise ValueError(f"Expected a qualified operator name 'namespace::name', got '{op}'")
    return f"{namespace}::{op}"


def _overload_of(qualname):
    """The OpOverload ``ns::name[.overload]`` names, or None if not defined."""
    namespace, _, rest = qualname.partition("::")
    op_name, _, overload = rest.partition(".")
    packet = getattr(ops, namespace).__dict__.get(op_name)
    if not isinstance(packet, OpOverloadPacket):
        return None
    return packet._overloads.get(overload or "default")


def _register_kernel(qualname, key, fn):
    overload = _overload_of(qualname)
    if overload is None:
        _PENDING.setdefault(qualname, {})[key] = fn
    elif fn is fallthrough_kernel:
        overload._kernels.pop(key, None)
    else:
        overload._register(key, fn)


class Library:
    """A set of registrations in one namespace: ``DEF`` declares the
    namespace's operators (once per namespace), ``FRAGMENT`` adds to it,
    ``IMPL`` registers kernels for operators declared elsewhere."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        site = _caller_site(1)
        if kind == "DEF":
            if ns in _DEF_SITES:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; please put all of your "
                    "definitions in a single TORCH_LIBRARY block.  If you were trying to specify implementations, "
                    "consider using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended to define "
                    "operators for a single namespace in a distributed way, you can use TORCH_LIBRARY_FRAGMENT to "
                    f"explicitly indicate this.  Previous registration of TORCH_LIBRARY was registered at "
                    f"{_DEF_SITES[ns]}; latest registration was registered at {site}"
                )
            _DEF_SITES[ns] = site
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defs = []
        self._impls = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        """Declares an operator from its schema; returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError(
                f"Library(kind=IMPL, ns={self.ns}) cannot define operators; use a DEF or FRAGMENT library"
            )
        parsed = FunctionSchema(self.ns, schema)
        space = getattr(ops, self.ns)
        packet = space._packet(parsed.op_name)
        overload_name = parsed.overload_name or "default"
        site = _caller_site(1)
        qualname = parsed.name + (f".{parsed.overload_name}" if parsed.overload_name else "")
        if overload_name in packet._overloads:
            raise RuntimeError(
                f"Tried to register an operator ({parsed}) with the same name and overload name multiple times. "
                "Each overload's schema should only be registered with a single call to def(). Duplicate "
                f"registration: registered at {site}. Original registration: registered at {_SCHEMA_SITES[qualname]}"
            )
        overload = OpOverload(packet, overload_name, parsed)
        overload.tags = tuple(tags) if isinstance(tags, (tuple, list)) else (tags,)
        packet._overloads[overload_name] = overload
        setattr(packet, overload_name, overload)
        _SCHEMA_SITES[qualname] = site
        for key, fn in _PENDING.pop(qualname, {}).items():
            overload._register(key, fn)
        self._defs.append((packet, overload_name, qualname))
        return parsed.op_name

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        """Registers ``fn`` as the kernel of an operator for a dispatch key
        (default: the library's, else ``CompositeImplicitAutograd``)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type {type(fn)}")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        qualname = _qualified(op_name, self.ns)
        kernel = fn
        if with_keyset:
            kernel = lambda *args, **kwargs: fn(None, *args, **kwargs)  # noqa: E731 (no keysets in fxvm)
        _register_kernel(qualname, key, kernel)
        self._impls.append((qualname, key))

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("fxvm has no dispatcher fallbacks; register kernels per operator with impl()")

    def _destroy(self):
        for qualname, key in self._impls:
            overload = _overload_of(qualname)
            if overload is not None:
                overload._kernels.pop(key, None)
            _PENDING.get(qualname, {}).pop(key, None)
        for packet, overload_name, qualname in self._defs:
            packet._overloads.pop(overload_name, None)
            packet.__dict__.pop(overload_name, None)
            _SCHEMA_SITES.pop(qualname, None)
        if self.kind == "DEF":
            _DEF_SITES.pop(self.ns, None)
        self._defs, self._impls = [], []


def _fragment(namespace, lib):
    if lib is not None:
        return lib
    if namespace not in _FRAGMENTS:
        _FRAGMENTS[namespace] = Library(namespace, "FRAGMENT")
    return _FRAGMENTS[namespace]


# What define() takes: the arguments and returns, without the name.
_NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


def define(qualname, schema, *, lib=None, tags=()):
    """Declares ``ns::name`` with a schema of its arguments, ``(Tensor x) -> Tensor``."""
    if "::" not in qualname:
        raise ValueError(
            f"define(qualname, schema): expected qualname to be of the form 'namespace::name', got {qualname}"
        )
    namespace, name = qualname.split("::", 1)
    if not _NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(
            f'define(qualname, schema, ...): expected schema to look like e.g. "(Tensor x) -> Tensor" but got "{schema}"'
        )
    return _fragment(namespace, lib).define(name + schema, tags=tags)


def _keys(types):
    if isinstance(types, str):
        types = (types,)
    return [_DEVICE_KEYS.get(t, t) for t in types]


def impl(qualname, types, func=None, *, lib=None):
    """Registers a kernel of ``ns::name`` for device types (``"cpu"``) or
    dispatch keys; a decorator when ``func`` is omitted."""

    def register(fn):
        name = _qualified(qualname)
        for key in _keys(types):
            if lib is not None:
                lib.impl(name, fn, key)
            else:
                _register_kernel(name, key, fn)
        return fn

    return register if func is None else register(func)


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """A kernel of an operator for ``device_types`` (all devices when None)."""
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    types = "CompositeExplicitAutograd" if device_types is None else device_types
    return impl(op, types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=False):
    """The fake (meta) implementation of an operator, for shape propagation in
    PyTorch's fake-tensor mode; recorded here."""
    if isinstance(op, CustomOpDef):
        return op.register_fake(func) if func is not None else op.register_fake

    def register(fn):
        _FAKES[_qualified(op)] = fn
        return fn

    return register if func is None else register(func)


impl_abstract = register_fake


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """The backward formula of an operator: its calls on inputs that
    require grad get ``backward(ctx, *grads)`` as their derivative, after
    ``setup_context(ctx, inputs, output)``."""
    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    _AUTOGRAD[_qualified(op)] = (backward, setup_context)


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    """The rule of an operator under a ``__torch_dispatch__`` class (recorded)."""

    def register(fn):
        _TORCH_DISPATCH[(_qualified(op), torch_dispatch_class)] = fn
        return fn

    return register if func is None else register(func)


def register_vmap(op, func=None, /, *, lib=None):
    """The batching rule of an operator for ``torch.vmap`` (recorded)."""

    def register(fn):
        _VMAPS[_qualified(op)] = fn
        return fn

    return register if func is None else register(func)


def _schema_type(annotation, name, sig):
    """The schema type of a parameter or return annotation."""
    import torch

    def fail(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    scalars = {
        torch.Tensor: "Tensor",
        int: "SymInt",
        float: "float",
        bool: "bool",
        str: "str",
        torch.dtype: "ScalarType",
        torch.device: "Device",
    }
    if annotation in scalars:
        return scalars[annotation]
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        inner = args[0] if args[1] is type(None) else args[1]
        return _schema_type(inner, name, sig) + "?"
    if origin in (list, tuple) or (origin is not None and getattr(origin, "__name__", "") == "Sequence"):
        if len(args) == 1 or (origin is tuple and len(args) == 2 and args[1] is Ellipsis):
            return _schema_type(args[0], name, sig) + "[]"
    fail(f"Parameter {name} has unsupported type {annotation}.")


def _schema_default(value, name, sig):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not isinstance(value, bool) else str(value)
    if isinstance(value, str):
        return f'"{value}"'
    raise ValueError(
        f"infer_schema(func): Parameter {name} has an unsupported default value type {type(value)}. Please file an "
        f"issue on GitHub so we can prioritize this. Got func with signature {sig})"
    )


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The schema of a type-annotated function: ``(Tensor x, SymInt n) -> Tensor``."""
    import torch

    sig = inspect.signature(prototype_function)
    if mutates_args == "unknown":
        mutated = {n for n, p in sig.parameters.items() if p.annotation is torch.Tensor}
    else:
        mutated = set([mutates_args] if isinstance(mutates_args, str) else mutates_args)
    params, alias, kwarg_only = [], 0, False
    for name, p in sig.parameters.items():
        if p.annotation is inspect.Parameter.empty:
            raise ValueError(
                f"infer_schema(func): Parameter {name} must have a type annotation. Got func with signature {sig})"
            )
        if p.kind == inspect.Parameter.KEYWORD_ONLY and not kwarg_only:
            params.append("*")
            kwarg_only = True
        type_ = _schema_type(p.annotation, name, sig)
        if name in mutated:
            type_ = type_.replace("Tensor", f"Tensor(a{alias}!)", 1)
        if type_.startswith("Tensor"):
            alias += 1
        default = "" if p.default is inspect.Parameter.empty else "=" + _schema_default(p.default, name, sig)
        params.append(f"{type_} {name}{default}")
    ret = sig.return_annotation
    if ret is None or ret is type(None):
        returns = "()"
    elif typing.get_origin(ret) is tuple:
        returns = "(" + ", ".join(_schema_type(a, "return", sig) for a in typing.get_args(ret)) + ")"
    elif ret is inspect.Signature.empty:
        raise ValueError(f"infer_schema(func): No return type annotation was provided. Got func with signature {sig})")
    else:
        returns = _schema_type(ret, "return", sig)
    prefix = op_name or ""
    return f"{prefix}({', '.join(params)}) -> {returns}"


class CustomOpDef:
    """What ``custom_op`` returns: calling it calls the operator, whose
    kernels, fake and autograd registrations it holds."""

    def __init__(self, namespace, name, schema, fn):
        self._namespace = namespace
        self._name = name
        self._qualname = f"{namespace}::{name}"
        self._init_fn = fn
        self._disabled = set()
        self._lib = _fragment(namespace, None)
        self._lib.define(name + schema)
        self._opoverload = getattr(getattr(ops, namespace), name).default
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        def register(func):
            types = "CompositeExplicitAutograd" if device_types is None else device_types
            for key in _keys(types):
                self._lib.impl(self._name, self._enabled(key, func), key)
            return func

        return register if fn is None else register(fn)

    def _enabled(self, key, func):
        def kernel(*args, **kwargs):
            if key in self._disabled:
                return self._init_fn(*args, **kwargs)
            return func(*args, **kwargs)

        return kernel

    def register_fake(self, fn, /):
        _FAKES[self._qualname] = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        _AUTOGRAD[self._qualname] = (backward, setup_context)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        return register_torch_dispatch(self, torch_dispatch_class, fn)

    def register_vmap(self, func=None, /):
        return register_vmap(self, func)

    def set_kernel_enabled(self, device_type, enabled=True):
        import contextlib

        key = _DEVICE_KEYS.get(device_type, device_type)

        @contextlib.contextmanager
        def switch():
            was = key not in self._disabled
            (self._disabled.discard if enabled else self._disabled.add)(key)
            try:
                yield
            finally:
                (self._disabled.discard if was else self._disabled.add)(key)

        return switch()


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Makes a Python function an operator ``torch.ops.<ns>.<name>``; the
    returned ``CustomOpDef`` calls it and takes further registrations."""

    def wrap(func):
        if "::" not in name:
            raise ValueError(f"custom_op(name): expected name to be of the form 'namespace::name', got {name}")
        namespace, op_name = name.split("::", 1)
        op_schema = schema if schema is not None else infer_schema(func, mutates_args=mutates_args)
        op = CustomOpDef(namespace, op_name, op_schema, func)
        op.register_kernel(device_types, func)
        return op

    return wrap if fn is None else wrap(fn)
