"""``numpy.exceptions``."""

from numpy._array import AxisError


class ComplexWarning(RuntimeWarning):
    pass


class VisibleDeprecationWarning(UserWarning):
    pass


class RankWarning(RuntimeWarning):
    pass


class TooHardError(RuntimeError):
    pass


class DTypePromotionError(TypeError):
    pass


__all__ = [
    "AxisError",
    "ComplexWarning",
    "DTypePromotionError",
    "RankWarning",
    "TooHardError",
    "VisibleDeprecationWarning",
]
