"""``np.s_``, ``np.index_exp``, ``np.r_``, ``np.c_``, ``np.mgrid``, ``np.ogrid``."""

import builtins

from numpy._convert import asarray
from numpy._creation import arange, linspace, meshgrid
from numpy._shape import concatenate


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, builtins.tuple):
            return (item,)
        return item


index_exp = _IndexExpression(True)
s_ = _IndexExpression(False)


def _range_of(s):
    step = s.step
    if isinstance(step, complex):
        return linspace(s.start or 0, s.stop, builtins.int(builtins.abs(step)))
    return arange(s.start or 0, s.stop, 1 if step is None else step)


class _Concatenator:
    def __init__(self, axis, columns):
        self.axis = axis
        self.columns = columns

    def __getitem__(self, key):
        items = key if isinstance(key, builtins.tuple) else (key,)
        parts = []
        for item in items:
            a = _range_of(item) if isinstance(item, slice) else asarray(item)
            if a.ndim == 0:
                a = a.reshape(1)
            if self.columns and a.ndim == 1:
                a = a.reshape(-1, 1)
            parts.append(a)
        return concatenate(parts, axis=self.axis)


r_ = _Concatenator(0, False)
c_ = _Concatenator(-1, True)


class _Grid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _range_of(key)
        ranges = [_range_of(k) for k in key]
        grids = meshgrid(*ranges, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return builtins.tuple(grids)
        from numpy._shape import stack

        return stack(grids)


mgrid = _Grid(False)
ogrid = _Grid(True)
