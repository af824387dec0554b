"""``numpy.dtypes``: the class of each dtype (``type(np.dtype('f8'))``)."""

from numpy._dtypes import DTYPE_CLASSES

globals().update(DTYPE_CLASSES)
__all__ = sorted(DTYPE_CLASSES)
