"""``torch._check`` and its kin: assertions that raise PyTorch's exception
types with a message built only on failure (model code and torchvision's
shape checks call them)."""

__all__ = ["_check", "_check_index", "_check_is_size", "_check_not_implemented", "_check_type", "_check_value"]

_DEFAULT = (
    "Expected cond to be True, but got False. (Could this error message be improved? "
    "If so, please report an enhancement request to PyTorch.)"
)


def _raise_unless(cond, error, message):
    if not isinstance(cond, bool) and not hasattr(cond, "__bool__"):
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if not cond:
        raise error(message() if callable(message) else (_DEFAULT if message is None else message))


def _check(cond, message=None):
    """RuntimeError(message()) unless ``cond``."""
    _raise_unless(cond, RuntimeError, message)


def _check_index(cond, message=None):
    _raise_unless(cond, IndexError, message)


def _check_value(cond, message=None):
    _raise_unless(cond, ValueError, message)


def _check_type(cond, message=None):
    _raise_unless(cond, TypeError, message)


def _check_not_implemented(cond, message=None):
    _raise_unless(cond, NotImplementedError, message)


def _check_is_size(i, message=None, *, max=None):
    """A size: at least 0 (and at most ``max``)."""
    _check(i >= 0, message)
    if max is not None:
        _check(i <= max, message)
