"""Gradient-mode switches. fxvm has no autograd, so gradients are never
recorded; these keep the mode flag so scripts that query it behave."""

_enabled = [True]


def is_grad_enabled():
    return _enabled[-1]


class set_grad_enabled:
    def __init__(self, mode):
        self.prev = _enabled[-1]
        _enabled.append(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _enabled.pop()
        return False


class no_grad:
    def __enter__(self):
        _enabled.append(False)
        return self

    def __exit__(self, *exc):
        _enabled.pop()
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper


class enable_grad(no_grad):
    def __enter__(self):
        _enabled.append(True)
        return self
