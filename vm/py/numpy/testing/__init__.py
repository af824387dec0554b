"""``numpy.testing``: the assertions test suites use, failing with numpy's
messages (mismatch counts, the differing indices, the largest absolute and
relative differences, both arrays)."""

import builtins
import contextlib

import numpy as np

__all__ = [
    "assert_",
    "assert_allclose",
    "assert_almost_equal",
    "assert_array_almost_equal",
    "assert_array_equal",
    "assert_array_less",
    "assert_equal",
    "assert_raises",
    "assert_raises_regex",
    "assert_warns",
]


def assert_(val, msg=""):
    if not val:
        raise AssertionError(msg() if callable(msg) else msg)


def _text(x):
    return repr(x) if isinstance(x, np.ndarray) else str(x)


def _report(header, err_msg, actual, desired, details=()):
    lines = ["", header]
    lines.append(err_msg)
    lines.extend(details)
    lines.append(f" ACTUAL: {_text(actual)}")
    lines.append(f" DESIRED: {_text(desired)}")
    return "\n".join(lines)


def _compare(actual, desired, close, header, err_msg="", equal_nan=True, strict=False):
    a, d = np.asarray(actual), np.asarray(desired)
    if strict and (a.shape != d.shape or a.dtype != d.dtype):
        what, x, y = ("shapes", a.shape, d.shape) if a.shape != d.shape else ("dtypes", a.dtype, d.dtype)
        raise AssertionError(_report(header, err_msg, a, d, [f"({what} {x}, {y} mismatch)"]))
    try:
        a_b, d_b = np.broadcast_arrays(a, d)
    except ValueError:
        raise AssertionError(_report(header, err_msg, a, d, [f"(shapes {a.shape}, {d.shape} mismatch)"])) from None
    ok = close(a_b, d_b)
    if equal_nan and (a_b.dtype.kind == "f" or d_b.dtype.kind == "f"):
        ok = ok | (np.isnan(a_b.astype(float)) & np.isnan(d_b.astype(float)))
    if ok.all():
        return
    bad = ~ok
    n_bad, n = int(bad.sum()), ok.size
    details = [f"Mismatched elements: {n_bad} / {n} ({100 * n_bad / n:.3g}%)"]
    if a_b.ndim:
        details.append("Mismatch at index:")
        for idx in np.argwhere(bad)[:5].tolist():
            key = tuple(idx)
            details.append(f" {idx}: {a_b[key].item()!r} (ACTUAL), {d_b[key].item()!r} (DESIRED)")
    diff = (
        np.abs(a_b.astype(float) - d_b.astype(float))
        if a_b.dtype.kind == "f" or d_b.dtype.kind == "f"
        else np.abs(a_b.astype(np.int64) - d_b.astype(np.int64))
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = diff / np.abs(d_b.astype(float))
    details.append(f"Max absolute difference among violations: {np.array2string(diff[bad].max())}")
    details.append(f"Max relative difference among violations: {np.array2string(rel[bad].max())}")
    raise AssertionError(_report(header, err_msg, a, d, details))


def assert_allclose(actual, desired, rtol=1e-07, atol=0, equal_nan=True, err_msg="", verbose=True, *, strict=False):
    header = f"Not equal to tolerance rtol={rtol:g}, atol={atol:g}"
    _compare(
        actual,
        desired,
        lambda a, d: np.abs(a.astype(float) - d.astype(float)) <= atol + rtol * np.abs(d.astype(float)),
        header,
        err_msg,
        equal_nan,
        strict,
    )


def assert_array_equal(actual, desired, err_msg="", verbose=True, *, strict=False):
    _compare(actual, desired, lambda a, d: a == d, "Arrays are not equal", err_msg, True, strict)


def assert_array_almost_equal(actual, desired, decimal=6, err_msg="", verbose=True):
    limit = 1.5 * 10.0 ** (-decimal)
    _compare(
        actual,
        desired,
        lambda a, d: np.abs(a.astype(float) - d.astype(float)) < limit,
        f"Arrays are not almost equal to {decimal} decimals",
        err_msg,
    )


def assert_array_less(x, y, err_msg="", verbose=True, *, strict=False):
    _compare(x, y, lambda a, d: a < d, "Arrays are not strictly ordered `x < y`", err_msg, False, strict)


def assert_almost_equal(actual, desired, decimal=7, err_msg="", verbose=True):
    if isinstance(actual, np.ndarray) or isinstance(desired, np.ndarray) or isinstance(actual, (list, tuple)):
        return assert_array_almost_equal(actual, desired, decimal, err_msg)
    if not abs(float(desired) - float(actual)) < 1.5 * 10.0 ** (-decimal):
        lines = ["", f"Arrays are not almost equal to {decimal} decimals"] + ([err_msg] if err_msg else [])
        raise AssertionError("\n".join(lines + [f" ACTUAL: {_text(actual)}", f" DESIRED: {_text(desired)}"]))


def assert_equal(actual, desired, err_msg="", verbose=True, *, strict=False):
    if isinstance(desired, dict):
        assert_(isinstance(actual, dict), repr(type(actual)))
        assert_equal(len(actual), len(desired), err_msg)
        for k in desired:
            assert_equal(actual[k], desired[k], f"key={k!r}\n{err_msg}")
        return
    if isinstance(desired, (list, tuple)) and isinstance(actual, (list, tuple)):
        assert_equal(len(actual), len(desired), err_msg)
        for i in range(len(desired)):
            assert_equal(actual[i], desired[i], f"item={i!r}\n{err_msg}")
        return
    if isinstance(actual, np.ndarray) or isinstance(desired, np.ndarray):
        return assert_array_equal(actual, desired, err_msg, strict=strict)
    both_nan = False
    try:
        both_nan = actual != actual and desired != desired
    except TypeError, ValueError:
        pass
    if not (both_nan or actual == desired):
        lines = (
            ["", "Items are not equal:"]
            + ([err_msg] if err_msg else [])
            + [f" ACTUAL: {_text(actual)}", f" DESIRED: {_text(desired)}"]
        )
        raise AssertionError("\n".join(lines))


def assert_raises(exception_class, *args, **kwargs):
    if not args:
        return _Raises(exception_class)
    func, *rest = args
    try:
        func(*rest, **kwargs)
    except exception_class:
        return
    raise AssertionError(f"{exception_class.__name__} not raised by {getattr(func, '__name__', func)}")


def assert_raises_regex(exception_class, expected_regexp, *args, **kwargs):
    ctx = _Raises(exception_class, expected_regexp)
    if not args:
        return ctx
    with ctx:
        args[0](*args[1:], **kwargs)


class _Raises:
    def __init__(self, cls, pattern=None):
        self.cls = cls
        self.pattern = pattern

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        import re

        if kind is None:
            raise AssertionError(f"{self.cls.__name__} not raised")
        if not issubclass(kind, self.cls):
            return False
        if self.pattern is not None and not re.search(self.pattern, str(value)):
            raise AssertionError(f'"{self.pattern}" does not match "{value}"')
        return True


@contextlib.contextmanager
def assert_warns(warning_class, *args, **kwargs):
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught
    if not any(issubclass(w.category, warning_class) for w in caught):
        raise AssertionError(f"No warning raised of type {warning_class.__name__}")
