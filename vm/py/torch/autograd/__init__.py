"""``torch.autograd``: grad mode switches (context managers and decorators,
as in PyTorch), ``backward`` and ``grad`` over fxvm's native engine, and
custom ``Function``s."""

import functools

from torch._native import load as _load
from torch.autograd.function import Function, FunctionCtx, once_differentiable
from torch.autograd import graph
from torch.autograd.anomaly_mode import detect_anomaly, set_detect_anomaly

_C = _load("torch._C._autograd")

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled
is_anomaly_enabled = _C.is_anomaly_enabled
is_anomaly_check_nan_enabled = _C.is_anomaly_check_nan_enabled


def _restore(saved):
    """Puts back the (grad, inference) modes a mode's ``_set`` returned."""
    grad, inference = saved
    _C._set_grad_enabled(grad)
    _C._set_inference_mode(inference)


class _Mode:
    """A grad mode set on entry and restored on exit; called on a function,
    a decorator that runs it under the mode. Each mode's ``_set`` switches
    and returns the (grad, inference) modes it found."""

    def __enter__(self):
        self._saved = self._set()
        return self

    def __exit__(self, *exc):
        _restore(self._saved)
        return False

    def __call__(self, fn):
        # `_set` keeps nothing on the instance, so each call of the function
        # switches with this one (no fresh instance and `with` per call: the
        # optimizers' `step` runs under `@torch.no_grad()`).
        mode = self

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            saved = mode._set()
            try:
                return fn(*args, **kwargs)
            finally:
                _restore(saved)

        return wrapper

    def _args(self):
        return ()

    def clone(self):
        return self.__class__(*self._args())


class _NoParam(_Mode):
    """A mode that also decorates without parentheses (``@torch.no_grad``)."""

    def __new__(cls, orig_func=None):
        if orig_func is not None:
            return cls()(orig_func)
        return super().__new__(cls)


class no_grad(_NoParam):
    def _set(self):
        return _C._set_grad_enabled(False), _C.is_inference_mode_enabled()


class enable_grad(_NoParam):
    def _set(self):
        return _C._set_grad_enabled(True), _C.is_inference_mode_enabled()


class inference_mode(_Mode):
    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        # ``@torch.inference_mode`` without parentheses decorates directly.
        if callable(mode):
            return cls()(mode)
        return super().__new__(cls)

    def _set(self):
        grad = _C.is_grad_enabled()
        return _C._set_grad_enabled(grad and not self.mode), _C._set_inference_mode(self.mode)

    def _args(self):
        return (self.mode,)


class set_grad_enabled(_Mode):
    """Sets the mode at once (``torch.set_grad_enabled(False)``), or for a
    ``with`` block or a decorated function."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = _C._set_grad_enabled(self.mode)

    def __enter__(self):
        self._saved = (self.prev, _C.is_inference_mode_enabled())
        return self

    def __call__(self, fn):
        # As a decorator it only applies while the function runs.
        _C._set_grad_enabled(self.prev)
        return super().__call__(fn)

    def _set(self):
        return _C._set_grad_enabled(self.mode), _C.is_inference_mode_enabled()

    def _args(self):
        return (self.mode,)


def _tensors(xs):
    import torch

    if isinstance(xs, torch.Tensor) or xs is None:
        return xs
    return tuple(xs)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, grad_variables=None, inputs=None):
    """Accumulates the gradients of ``tensors`` into the leaves' ``.grad``
    (only ``inputs``' when given)."""
    import torch

    if grad_variables is not None:
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _tensors(inputs)
        if isinstance(inputs, torch.Tensor):
            inputs = (inputs,)
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    _C._backward(_tensors(tensors), _tensors(grad_tensors), bool(retain_graph), bool(create_graph), inputs)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple."""
    import torch

    if is_grads_batched:
        raise NotImplementedError("torch.autograd.grad(is_grads_batched=True) is not supported by fxvm")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    one = isinstance(inputs, torch.Tensor)
    got = _C._grad(
        _tensors(outputs),
        _tensors(inputs),
        _tensors(grad_outputs),
        bool(retain_graph),
        bool(create_graph),
        bool(allow_unused),
    )
    if materialize_grads:
        ins = (inputs,) if one else tuple(inputs)
        got = tuple(torch.zeros_like(i) if g is None else g for g, i in zip(got, ins))
    return got


def _tensor_backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """``Tensor.backward``."""
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def __getattr__(name):
    # Loaded on first use: `functional`, and `gradcheck`/`gradgradcheck`
    # (the functions, as PyTorch binds them, not their module).
    import importlib

    if name == "functional":
        return importlib.import_module("torch.autograd.functional")
    if name in ("gradcheck", "gradgradcheck", "GradcheckError"):
        module = importlib.import_module("torch.autograd.gradcheck")
        for attr in ("gradcheck", "gradgradcheck"):
            globals()[attr] = getattr(module, attr)
        return getattr(module, name)
    raise AttributeError(f"module 'torch.autograd' has no attribute '{name}'")
