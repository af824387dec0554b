"""Capture once, replay: a function or module is traced on its first call
(``shape_trace``, with the call's tensors as examples), and later calls
whose inputs satisfy the captured graph's guards run that graph. A call
that breaks them captures again, up to a cache limit; a declared signature
(``fxvm.typing.Tensor[...]`` annotations) refuses it instead. Python the
tracer cannot follow runs eagerly with one warning, or raises with
``fullgraph=True``. ``torch.compile`` is this with PyTorch's arguments."""

import functools
import sys
import time
import types
import warnings
import weakref

import torch
import torch._dynamo
import torch.compiler
from torch.fx._symbolic_trace import _parameter_defaults, is_fx_tracing
from torch.fx._native import replay as _replay
from torch.fx.experimental.fake import _OPERATORS
from torch.fx.experimental.shape_trace import annotate, shape_trace
from torch.fx.proxy import TraceError

from fxvm._inline import inline_modules
from fxvm._step import StepCapture, calls_backward
from fxvm.typing import TensorSpec

Plan = _replay.Plan

__all__ = ["CompiledFunction", "SignatureError", "global_function", "compile", "profile"]

_clock = time.perf_counter
# Read on every call: whether replays are timed.
_profiling = [False]


# Every compiled function made, for the profile report.
_compiled = weakref.WeakSet()


def profile(enabled=True):
    """Times every replay (``stats()["replay_time"]``) and each op in it
    (``profile_report()``); off by default, as the clock costs as much as a
    small graph's guard check."""
    _profiling[0] = bool(enabled)
    _replay.set_replay_profiling(bool(enabled))


def profile_report():
    """Per-op time of the graphs replayed while profiling, as a table (op,
    calls, total ms, share), slowest first."""
    # Graphs dropped before now (reset, or their function gone) first.
    totals = {what: (calls, seconds) for what, calls, seconds in _replay.retired_replay_timings()}
    for compiled in list(_compiled):
        for entry in compiled.cache_entries():
            timings = getattr(entry._run, "timings", None)
            for _, what, calls, seconds in timings() if timings else ():
                calls0, seconds0 = totals.get(what, (0, 0.0))
                totals[what] = (calls0 + calls, seconds0 + seconds)
    if not totals:
        return "fxvm profile: no graph was replayed"
    whole = sum(s for _, s in totals.values()) or 1.0
    width = max(len(w) for w in totals)
    lines = [f"{'op':<{width}}  {'calls':>8}  {'total ms':>10}  {'share':>6}"]
    for what, (calls, seconds) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"{what:<{width}}  {calls:>8}  {seconds * 1e3:>10.3f}  {seconds / whole:>6.1%}")
    return "\n".join(lines)


def _profile_at_exit():
    """`fxvm run --profile`: profiling from the start, the report on stderr
    when the script ends."""
    import atexit

    profile(True)
    atexit.register(lambda: print(profile_report(), file=sys.stderr))


class SignatureError(TypeError):
    """A call whose argument does not fit the declared signature."""


class CacheEntry:
    """One captured graph: the GraphModule, what it requires of the inputs,
    and how it has been used."""

    def __init__(self, gm, guards, constants, run, capture_time, names, state):
        self.graph_module = gm
        self.guards = guards
        self.constants = constants
        self._run = run
        self.capture_time = capture_time
        self.calls = 0
        self.replay_time = 0.0
        # Every input a tensor of fixed dtype and sizes: what a call's
        # positional arguments are compared with directly, else None.
        self.exact = None
        static = {name: (dtype, shape) for name, dtype, shape in guards._static}
        if not constants and guards._all_static and list(static) == list(names):
            self.exact = [static[n] for n in names]
        # The module as the capture saw it (see `_module_state`), and
        # whether it still is so.
        self.state = state
        self.current = True

    def violation(self, bound):
        """Why the inputs ``bound`` (name → value) do not fit, or None."""
        if not self.current:
            return "the module's training mode or its parameters, buffers or submodules changed since the capture"
        for name, value in self.constants.items():
            given = bound.get(name)
            if type(given) is not type(value) or given != value:
                return f"argument '{name}' was {value!r} when captured, now {given!r}"
        return self.guards.violation(bound)

    def __call__(self, args):
        t0 = _clock()
        out = self._run(*args)
        self.replay_time += _clock() - t0
        self.calls += 1
        return out

    def describe(self):
        guards = self.guards.shape_env.format_guards() or " (none)"
        return f"{self.graph_module.__class__.__name__}: {len(self.graph_module.graph.nodes)} nodes, guards:\n{guards}"


def _module_state(root):
    """What a graph captured from the module ``root`` assumes of it: each
    submodule's training mode and the objects it registers as parameters,
    buffers and submodules (None for a function)."""
    if root is None:
        return None
    return [(m, m.training, [*m._parameters.items(), *m._buffers.items(), *m._modules.items()]) for m in root.modules()]


def _same_state(a, b):
    """Whether two `_module_state`s are the same modules in the same modes
    with the same members (compared by identity)."""
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(
        m is n and ma == mb and len(xs) == len(ys) and all(k == j and v is w for (k, v), (j, w) in zip(xs, ys))
        for (m, ma, xs), (n, mb, ys) in zip(a, b)
    )


def _user_location(exc):
    """``file:line`` of the innermost frame of user code in ``exc``'s traceback."""
    tb, where = exc.__traceback__, None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not (name.startswith(("torch", "fxvm", "<frozen")) or "/torch/" in name):
            where = f"{name}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where


def _method_module(target):
    """The module whose ``_call_impl`` or ``forward`` ``target`` is, bound
    (``Module.compile`` compiles ``self._call_impl``): captured as the module."""
    module = getattr(target, "__self__", None)
    if not isinstance(module, torch.nn.Module):
        return None
    func = getattr(target, "__func__", None)
    if func is type(module)._call_impl or func is type(module).forward:
        return module
    return None


def _has_call_hooks(module):
    state = module.__dict__
    return bool(
        module._forward_hooks
        or module._forward_pre_hooks
        or state.get("_backward_hooks")
        or state.get("_backward_pre_hooks")
    )


class CompiledFunction:
    """A function or module, captured on first call and replayed after."""

    def __init__(self, target, *, dynamic=None, fullgraph=False, backend=None, cache_size_limit=None, signature=None):
        self._target = target
        self._module = target if isinstance(target, torch.nn.Module) else _method_module(target)
        fn = type(self._module).forward if self._module is not None else target
        if not hasattr(fn, "__code__"):
            raise TypeError(f"cannot capture {target!r}: not a Python function or nn.Module")
        code = fn.__code__
        names = list(code.co_varnames[: code.co_argcount])
        self._names = names[1:] if self._module is not None else names
        self._defaults = _parameter_defaults(fn)
        self.__name__ = getattr(fn, "__name__", "forward") if self._module is None else type(self._module).__name__
        self.__qualname__ = getattr(fn, "__qualname__", self.__name__)
        self.__doc__ = getattr(fn, "__doc__", None)
        self._dynamic = dynamic
        self._fullgraph = fullgraph
        self._backend = backend
        self._limit = cache_size_limit
        self._signature = signature or {}
        self._entries = []
        self._fxvm_exact = _replay.ExactCalls()
        # A compiled `_call_impl` checks the module's hooks on every call in
        # `_call`, so its calls never take the native replay path.
        self._replays_natively = self._module is None or self._module is target
        self._eager_reason = None
        _compiled.add(self)
        # dims seen to change between captures, per input (automatic dynamic)
        self._changed = {}
        self._first_sizes = {}
        # The module-state epoch at which the graphs were last checked
        # against the module (see `_check_state`).
        self._epoch = None
        # A function that runs backward() is recorded as a training step.
        self._step = StepCapture(self) if self._module is None and calls_backward(code) else None

    # -- calls ---------------------------------------------------------
    def _bind(self, args, kwargs):
        names = self._names
        if not kwargs and len(args) == len(names):
            return dict(zip(names, args))
        if len(args) > len(names):
            raise TypeError(f"{self.__name__}() takes {len(names)} arguments but {len(args)} were given")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument '{k}'")
            if k in bound:
                raise TypeError(f"{self.__name__}() got multiple values for argument '{k}'")
            bound[k] = v
        for n in names:
            if n not in bound:
                if n not in self._defaults:
                    raise TypeError(f"{self.__name__}() missing 1 required argument: '{n}'")
                bound[n] = self._defaults[n]
        return bound

    # Native: positional tensors matching a graph's dtypes and sizes exactly
    # replay at once (`self._fxvm_exact`); every other call goes to `_call`.
    __call__ = _replay.compiled_call()

    def _call(self, *args, **kwargs):
        if is_fx_tracing() or self._eager_reason is not None:
            return self._target(*args, **kwargs)
        if self._module is not self._target and self._module is not None and _has_call_hooks(self._module):
            # A compiled `_call_impl` (Module.compile) with hooks: the graph
            # would hold forward only, so the call runs as written.
            return self._target(*args, **kwargs)
        bound = self._bind(args, kwargs)
        for name, spec in self._signature.items():
            why = spec.mismatch(bound[name])
            if why is not None:
                raise SignatureError(f"{self.__name__}() argument '{name}': {why}")
        limit = self._limit if self._limit is not None else torch._dynamo.config.cache_size_limit
        if self._step is not None:
            return self._step(args, kwargs, bound, limit)
        ordered = [bound[n] for n in self._names]
        epoch = torch._C._module_state_epoch()
        if epoch != self._epoch:
            self._check_state(epoch)
        for entry in self._entries:
            if entry.violation(bound) is None:
                return entry(ordered)
        if len(self._entries) >= limit:
            why = self._entries[-1].violation(bound)
            self._run_eagerly(f"{len(self._entries)} graphs captured (cache_size_limit); the last mismatch: {why}")
            return self._target(*args, **kwargs)
        entry = self._capture(bound)
        if entry is None:
            return self._target(*args, **kwargs)
        return entry(ordered)

    def _check_state(self, epoch):
        """Marks which graphs still fit the module (some module's mode or
        members changed somewhere): only those replay, natively included;
        the others stay cached for the module's return to their state."""
        state = _module_state(self._module)
        self._fxvm_exact.clear()
        for entry in self._entries:
            entry.current = _same_state(entry.state, state)
            if entry.current and entry.exact is not None and self._replays_natively:
                self._fxvm_exact.add(entry.exact, entry._run, entry)
        self._fxvm_exact.checked(epoch)
        self._epoch = epoch

    def _run_eagerly(self, reason, stacklevel=3):
        """Runs the target eagerly from now on, warning once at the user's
        call (``stacklevel`` counts from here: the native ``__call__`` adds
        no frame, ``_capture`` one)."""
        self._eager_reason = reason
        self._fxvm_exact.clear()
        warnings.warn(f"fxvm: {self.__qualname__} runs eagerly from now on: {reason}", stacklevel=stacklevel)

    def _dynamic_dims(self, bound):
        dims = {}
        for name, value in bound.items():
            if not isinstance(value, torch.Tensor):
                continue
            if name in self._signature:
                dims[name] = self._signature[name].dynamic_dims()
            elif self._dynamic is True:
                dims[name] = list(range(value.dim()))
            elif self._dynamic is None:
                first = self._first_sizes.setdefault(name, tuple(value.shape))
                changed = self._changed.setdefault(name, set())
                if len(first) == value.dim():
                    changed.update(d for d, (a, b) in enumerate(zip(first, value.shape)) if a != b)
                dims[name] = sorted(changed)
        return {k: v for k, v in dims.items() if v}

    def _capture(self, bound):
        state = _module_state(self._module)
        examples = {n: v for n, v in bound.items() if isinstance(v, torch.Tensor)}
        constants = {n: v for n, v in bound.items() if not isinstance(v, torch.Tensor)}
        t0 = time.perf_counter()
        previous = torch.compiler._compiling[0]
        torch.compiler._compiling[0] = True
        # Inside a step being recorded, tracing is not the step's work.
        torch._C._step_suspend()
        try:
            # Buffers as graph inputs: a forward's writes to them replay.
            gm = shape_trace(
                self._module if self._module is not None else self._target,
                examples,
                self._dynamic_dims(bound),
                concrete_args=constants or None,
                proxy_buffers=True,
            )
        except TraceError as e:
            where = _user_location(e)
            message = f"{e}" + (f" (at {where})" if where else "")
            if self._fullgraph:
                raise TraceError(message) from e
            self._run_eagerly(f"it cannot be captured: {message}", stacklevel=4)
            return None
        except Exception as e:
            # Python the tracer cannot follow (a proxy assigned where only
            # a tensor may go, ...): eager runs it, or raises what the
            # forward itself raises.
            if self._fullgraph:
                raise
            where = _user_location(e)
            self._run_eagerly(
                f"it cannot be captured: {type(e).__name__}: {e}" + (f" (at {where})" if where else ""), stacklevel=4
            )
            return None
        finally:
            torch._C._step_resume()
            torch.compiler._compiling[0] = previous
        guards = gm.__dict__.pop("_shape_guards")
        if callable(self._backend):
            run = self._backend(gm, [bound[n] for n in self._names if isinstance(bound[n], torch.Tensor)])
        else:
            run = _plan(gm, guards.shape_env)
        entry = CacheEntry(gm, guards, constants, run, time.perf_counter() - t0, self._names, state)
        self._entries.append(entry)
        if entry.exact is not None and self._replays_natively:
            self._fxvm_exact.add(entry.exact, run, entry)
        return entry

    # -- introspection -------------------------------------------------
    def graphs(self):
        """The captured GraphModules, oldest first."""
        return [e.graph_module for e in self._entries]

    def cache_entries(self):
        return list(self._entries) + (self._step.entries if self._step is not None else [])

    def stats(self):
        """Captures and replays: counts and seconds (replays are timed only
        while ``fxvm.profile()`` is on)."""
        entries = self.cache_entries()
        return {
            "captures": len(entries),
            "capture_time": sum(e.capture_time for e in entries),
            "replays": sum(e.calls for e in entries),
            "replay_time": sum(e.replay_time for e in entries),
            "eager": self._eager_reason,
        }

    def reset(self):
        """Forget every captured graph."""
        self._entries.clear()
        if self._step is not None:
            self._step = StepCapture(self)
        self._fxvm_exact.clear()
        self._eager_reason = None
        self._changed.clear()
        self._first_sizes.clear()
        self._epoch = None

    def __repr__(self):
        return f"<fxvm compiled {self.__qualname__}: {len(self._entries)} graph(s)>"


def _plan(gm, shape_env):
    """The native replay of ``gm``: its module calls inlined, then planned
    (registry ops natively, other nodes through Python)."""
    flat = inline_modules(gm, shape_env)
    annotate(flat, shape_env)
    return Plan(list(flat.graph.nodes), flat, _OPERATORS)


class OptimizedModule(torch.nn.Module):
    """What ``torch.compile(module)`` returns: the module under
    ``_orig_mod``, called through its capture cache."""

    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        self.__dict__["_fxvm_compiled"] = compiled

    def forward(self, *args, **kwargs):
        return self.__dict__["_fxvm_compiled"](*args, **kwargs)

    # Native: straight to the compiled function unless hooks are registered
    # on the wrapper (then `_call`).
    __call__ = _replay.optimized_module_call()

    def _call(self, *args, **kwargs):
        if self._forward_hooks or self._forward_pre_hooks:
            return torch.nn.Module.__call__(self, *args, **kwargs)
        return self.__dict__["_fxvm_compiled"](*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def graphs(self):
        return self.__dict__["_fxvm_compiled"].graphs()

    def stats(self):
        return self.__dict__["_fxvm_compiled"].stats()


def _signature_of(fn):
    return {n: a for n, a in getattr(fn, "__annotations__", {}).items() if isinstance(a, TensorSpec)}


def _compile_class(cls, options):
    """A subclass of module class ``cls`` whose instances are called
    through a capture cache each (forward itself is unchanged, so tracing
    a model that contains them still sees through)."""

    def __call__(self, *args, **kwargs):
        if is_fx_tracing():
            return torch.nn.Module.__call__(self, *args, **kwargs)
        compiled = self.__dict__.get("_fxvm_compiled")
        if compiled is None:
            compiled = CompiledFunction(self, signature=_signature_of(cls.forward), **options)
            self.__dict__["_fxvm_compiled"] = compiled
        return compiled(*args, **kwargs)

    def graphs(self):
        compiled = self.__dict__.get("_fxvm_compiled")
        return compiled.graphs() if compiled is not None else []

    sub = type(
        cls.__name__,
        (cls,),
        {
            "__call__": __call__,
            "graphs": graphs,
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        },
    )
    return sub


def global_function(dynamic=None, fullgraph=False, cache_size_limit=None):
    """A decorator (OneFlow's ``@flow.global_function()``): the function —
    or an nn.Module instance or class — is captured on its first call and
    replayed afterwards. Parameters annotated ``fxvm.typing.Tensor[shape,
    dtype]`` fix their signature (``None`` sizes stay symbolic): a call that
    does not fit raises ``SignatureError`` naming the argument."""
    options = {"dynamic": dynamic, "fullgraph": fullgraph, "cache_size_limit": cache_size_limit}

    def decorate(target):
        if isinstance(target, type) and issubclass(target, torch.nn.Module):
            return _compile_class(target, options)
        if isinstance(target, torch.nn.Module):
            return OptimizedModule(
                target, CompiledFunction(target, signature=_signature_of(type(target).forward), **options)
            )
        return CompiledFunction(target, signature=_signature_of(target), **options)

    return decorate


# Functions and methods implemented natively (`torch.sigmoid`, `Tensor.relu`).
_NATIVE_CALLABLES = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="fxvm", mode=None, options=None, disable=False):
    """``torch.compile``: capture on first call, replay after (see the
    module doc). ``backend`` may be a callable ``backend(gm, example_inputs)``
    returning what to run instead of the graph, as in PyTorch; named
    backends all replay the captured graph."""
    if model is None:
        return lambda m: compile(
            m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode, options=options, disable=disable
        )
    if disable:
        return model
    backend = backend if callable(backend) else None
    if isinstance(model, torch.nn.Module):
        return OptimizedModule(model, CompiledFunction(model, dynamic=dynamic, fullgraph=fullgraph, backend=backend))
    if not callable(model):
        raise RuntimeError(f"torch.compile expects a module or a callable, got {type(model).__name__}")
    if isinstance(model, _NATIVE_CALLABLES):
        # One native op (`torch.compile(torch.sigmoid)`): already what a
        # replay would run, so it is called as it is, under its own name.
        return functools.wraps(model)(lambda *args, **kwargs: model(*args, **kwargs))
    return CompiledFunction(model, dynamic=dynamic, fullgraph=fullgraph, backend=backend)
