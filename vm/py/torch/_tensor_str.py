"""Print options for tensors (``torch.set_printoptions``): the values kept
here, as PyTorch reports them, and handed to the native formatter every
``repr`` reads."""

import contextlib
import math

import torch

__all__ = ["set_printoptions", "get_printoptions", "printoptions", "PRINT_OPTS"]


class _PrinterOptions:
    """PyTorch's ``PRINT_OPTS``: the options in force."""

    def __init__(self):
        self.precision = 4
        self.threshold = 1000
        self.edgeitems = 3
        self.linewidth = 80
        self.sci_mode = None

    def __repr__(self):
        return f"__PrinterOptions(precision={self.precision}, threshold={self.threshold}, edgeitems={self.edgeitems}, linewidth={self.linewidth}, sci_mode={self.sci_mode})"


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Sets how tensors print: digits, the size above which prints are
    summarised, the items shown at each end, the line width, a profile
    (``default``, ``short``, ``full``) and scientific notation (None: decided
    by the values)."""
    # An unknown profile changes nothing, as in PyTorch.
    for key, value in _PROFILES.get(profile, {}).items():
        setattr(PRINT_OPTS, key, value)
    for key, value in [
        ("precision", precision),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("linewidth", linewidth),
    ]:
        if value is not None:
            setattr(PRINT_OPTS, key, value)
    PRINT_OPTS.sci_mode = sci_mode
    torch._C._set_printoptions(
        int(PRINT_OPTS.precision),
        float(PRINT_OPTS.threshold),
        int(PRINT_OPTS.edgeitems),
        int(PRINT_OPTS.linewidth),
        None if sci_mode is None else bool(sci_mode),
    )


def get_printoptions():
    """The print options in force, as a dict."""
    return dict(
        precision=PRINT_OPTS.precision,
        threshold=PRINT_OPTS.threshold,
        edgeitems=PRINT_OPTS.edgeitems,
        linewidth=PRINT_OPTS.linewidth,
        sci_mode=PRINT_OPTS.sci_mode,
    )


@contextlib.contextmanager
def printoptions(**kwargs):
    """The given print options inside a ``with`` block, the old ones after."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)
