"""``torch.ops``: operators declared through ``torch.library``, reached as
``torch.ops.<namespace>.<name>[.<overload>]``.

PyTorch's dispatcher picks a kernel per dispatch key; fxvm runs CPU
tensors only, so an overload keeps its kernels by key and a call runs the
first of ``CPU``, ``CompositeExplicitAutograd``, ``CompositeImplicitAutograd``
(PyTorch's order for a CPU tensor). Kernels for other keys (``Meta``,
``Autocast*``, ``CUDA``) are kept, never run. Calls dispatch
``__torch_function__`` first, so ``torch.fx`` records them as it does in
PyTorch (``torch.ops.mylib.scale.default``).
"""

import types

from torch import _C

__all__ = ["OpOverload", "OpOverloadPacket", "ops"]

# The keys whose kernel serves a CPU tensor, most specific first.
_CPU_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd")


class OpOverload:
    """One schema of an operator (``torch.ops.mylib.scale.default``)."""

    def __init__(self, packet, overload_name, schema):
        self._overloadpacket = packet
        self._overloadname = overload_name
        self._schema = schema
        self._kernels = {}
        self._opaque = None
        self.tags = ()
        self.__name__ = f"{packet._opname}.{overload_name}"
        self.__qualname__ = self.__name__
        self.__module__ = packet.__module__

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def namespace(self):
        return self._overloadpacket._namespace

    def name(self):
        """``mylib::scale`` for the default overload, ``mylib::scale.twice`` otherwise."""
        base = self._overloadpacket._qualified_op_name
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __repr__(self):
        return f"<OpOverload(op='{self.namespace}.{self._overloadpacket._opname}', overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self.namespace}.{self._overloadpacket._opname}.{self._overloadname}"

    def __hash__(self):
        return id(self)

    def _register(self, dispatch_key, fn):
        self._kernels[dispatch_key] = fn

    def has_kernel_for_dispatch_key(self, key):
        return key in self._kernels

    def _kernel(self):
        return self._keyed_kernel()[1]

    def _keyed_kernel(self):
        for key in _CPU_KEYS:
            fn = self._kernels.get(key)
            if fn is not None:
                return key, fn
        from torch.library import _FAKES

        available = sorted(self._kernels)
        if self.name() in _FAKES and "Meta" not in self._kernels:
            available.append("Meta")
        raise NotImplementedError(
            f"Could not run '{self.name()}' with arguments from the 'CPU' backend. This could be because "
            "the operator doesn't exist for this backend, or was omitted during the selective/custom build "
            f"process (if using custom build). '{self.name()}' is only available for these backends: "
            f"[{', '.join(available)}]."
        )

    def __call__(self, *args, **kwargs):
        handled, result = _C._handle_torch_function(self, args, kwargs)
        if handled:
            return result
        return self._run(args, kwargs)

    def _run(self, args, kwargs):
        """Runs the kernel. A kernel other than an implicit-autograd one is
        opaque to autograd, as in PyTorch: with inputs that require grad,
        the outputs' backward is the formula ``register_autograd`` gave, or
        raises PyTorch's error when there is none."""
        import torch

        key, kernel = self._keyed_kernel()
        wants_grad = torch.is_grad_enabled() and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in (*args, *kwargs.values())
        )
        if key == "CompositeImplicitAutograd" or not wants_grad:
            return kernel(*args, **kwargs)
        if self._opaque is None:
            self._opaque = _opaque_function(self)
        return self._opaque(kernel, kwargs, *args)

    def redispatch(self, _keyset, *args, **kwargs):
        return self._kernel()(*args, **kwargs)


def _opaque_function(overload):
    """An ``autograd.Function`` standing for ``overload``'s kernel: its
    backward is the formula registered for it (``setup_context`` keeps what
    it needs), named as PyTorch names it (``GeneratedBackwardFor_<ns>_<op>_<overload>``).
    Made once per overload; the formula is looked up when used, so one
    registered after the first call counts."""
    import torch
    from torch.library import _AUTOGRAD

    qualified = overload.name()
    where = f"{overload.namespace}.{overload._overloadpacket._opname}.{overload._overloadname}"

    def forward(kernel, kwargs, *args):
        return kernel(*args, **kwargs)

    def setup_context(ctx, inputs, output):
        rule = _AUTOGRAD.get(qualified)
        if rule is not None and rule[1] is not None:
            rule[1](ctx, inputs[2:], output)

    def backward(ctx, *grads):
        rule = _AUTOGRAD.get(qualified)
        if rule is None:
            raise RuntimeError(
                f"Trying to backward through {where} but no autograd formula was registered. "
                "Please use register_autograd to add one."
            )
        result = rule[0](ctx, *grads)
        result = result if isinstance(result, tuple) else (result,)
        return (None, None, *result)

    name = "GeneratedBackwardFor_" + where.replace(".", "_")
    return type(
        name,
        (torch.autograd.Function,),
        {
            "forward": staticmethod(forward),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
        },
    ).apply


class OpOverloadPacket:
    """An operator with all its overloads (``torch.ops.mylib.scale``); calling
    it runs the default overload."""

    def __init__(self, namespace, opname):
        self._namespace = namespace
        self._opname = opname
        self._qualified_op_name = f"{namespace}::{opname}"
        self._overloads = {}
        self.__name__ = opname
        self.__qualname__ = opname
        self.__module__ = f"torch._ops.{namespace}"

    @property
    def op(self):
        return self.default

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        overloads = self.__dict__.get("_overloads", {})
        if name in overloads:
            return overloads[name]
        raise AttributeError(
            f"The underlying op of '{self.__dict__.get('_namespace')}.{self.__dict__.get('_opname')}' has no overload name '{name}'"
        )

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._namespace}.{self._opname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}"

    def __hash__(self):
        return id(self)

    def __call__(self, *args, **kwargs):
        handled, result = _C._handle_torch_function(self, args, kwargs)
        if handled:
            return result
        if "default" not in self._overloads:
            raise RuntimeError(f"{self._qualified_op_name} has no default overload; call one of {self.overloads()}")
        return self._overloads["default"]._run(args, kwargs)


class _OpNamespace(types.ModuleType):
    """``torch.ops.<namespace>``: the operators declared in it."""

    def __init__(self, name):
        super().__init__(f"torch.ops.{name}")
        self.name = name
        self._dir = []

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")

    def _packet(self, op_name):
        packet = self.__dict__.get(op_name)
        if not isinstance(packet, OpOverloadPacket):
            packet = OpOverloadPacket(self.name, op_name)
            setattr(self, op_name, packet)
            self._dir.append(op_name)
        return packet


class _Ops(types.ModuleType):
    """``torch.ops``: namespaces appear as libraries declare operators in them."""

    def __init__(self):
        super().__init__("torch.ops")
        self.loaded_libraries = set()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        return namespace

    def __iter__(self):
        return iter(n for n, v in self.__dict__.items() if isinstance(v, _OpNamespace))

    def load_library(self, path):
        """PyTorch loads a shared library of C++ operators here; fxvm runs no
        compiled code, so this raises the OSError PyTorch raises for a library
        it cannot load (callers such as torchvision fall back without it)."""
        raise OSError(
            f"Could not load this library: {path} (fxvm cannot load compiled extension libraries; "
            "operators must be declared in Python with torch.library)"
        )

    def import_module(self, module):
        import importlib

        importlib.import_module(module)


ops = _Ops()
