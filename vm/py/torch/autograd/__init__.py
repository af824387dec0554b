"""Gradient-mode switches. fxvm has no autograd, so gradients are never
recorded; these keep the mode flags so scripts that query them behave, and
each works as a context manager and as a decorator, as in PyTorch."""

import functools

from torch.autograd.function import Function, FunctionCtx

_enabled = [True]
_inference = [False]


def is_grad_enabled():
    return _enabled[-1]


def is_inference_mode_enabled():
    return _inference[-1]


class _Mode:
    """A mode switched on entry and restored on exit; called on a function,
    a decorator that runs it under the mode."""

    def _push(self):
        _enabled.append(_enabled[-1])
        _inference.append(_inference[-1])

    def __enter__(self):
        self._push()
        return self

    def __exit__(self, *exc):
        _enabled.pop()
        _inference.pop()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()


class no_grad(_Mode):
    def _push(self):
        _enabled.append(False)
        _inference.append(_inference[-1])


class enable_grad(_Mode):
    def _push(self):
        _enabled.append(True)
        _inference.append(_inference[-1])


class inference_mode(_Mode):
    def __init__(self, mode=True):
        self.mode = bool(mode)

    def _push(self):
        _enabled.append(_enabled[-1] and not self.mode)
        _inference.append(self.mode)

    def _args(self):
        return (self.mode,)


class set_grad_enabled(_Mode):
    """Sets the mode at once (``torch.set_grad_enabled(False)``), or for a
    ``with`` block or a decorated function."""

    def __init__(self, mode):
        self.mode = bool(mode)
        self.prev = _enabled[-1]
        _enabled[-1] = self.mode

    def __enter__(self):
        _enabled[-1] = self.prev
        _enabled.append(self.mode)
        _inference.append(_inference[-1])
        return self

    def __call__(self, fn):
        # As a decorator it only applies while the function runs.
        _enabled[-1] = self.prev
        return super().__call__(fn)

    def _args(self):
        return (self.mode,)
