"""assert_close: PyTorch's default tolerances per dtype, its checks in its
order, and its mismatch messages (greatest absolute and relative difference
with their index)."""

import collections.abc
import numbers

import torch

# (rtol, atol) PyTorch uses when neither is given.
_DEFAULT_TOLERANCES = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise and its message."""

    def __init__(self, kind, message, path=()):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.path = path


def _tolerances(*dtypes, rtol, atol):
    if (rtol is None) ^ (atol is None):
        missing = "rtol" if rtol is None else "atol"
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {missing}.")
    if rtol is not None:
        return rtol, atol
    pairs = [_DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0)) for dtype in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_message(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        if not equality:
            text += f" (up to {tol} allowed)"
        return text + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_idx, atol)
    msg += line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(
        "Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol, rel_diff, None, rtol
    )


def _tensor_message(actual, expected, matches, rtol, atol):
    shape = actual.shape

    def unravel(flat):
        index = []
        for size in reversed(shape):
            index.append(flat % size)
            flat //= size
        return tuple(reversed(index))

    total = matches.numel()
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    actual = actual.flatten()
    expected = expected.flatten()
    matches = matches.flatten()
    if not actual.dtype.is_floating_point and not actual.dtype.is_complex:
        actual = actual.to(torch.int64)
        expected = expected.to(torch.int64)
    abs_diff = torch.abs(actual - expected)
    abs_diff[matches] = 0
    max_abs, abs_at = torch.max(abs_diff, 0)
    rel_diff = abs_diff / torch.abs(expected)
    rel_diff[matches] = 0
    max_rel, rel_at = torch.max(rel_diff, 0)
    return _mismatch_message(
        "Tensor-likes",
        extra,
        max_abs.item(),
        unravel(int(abs_at)),
        atol,
        max_rel.item(),
        unravel(int(rel_at)),
        rtol,
    )


def _as_tensor(value):
    """A tensor for a tensor or numpy array; None for anything else."""
    if isinstance(value, torch.Tensor):
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "__array__") and hasattr(value, "shape"):
        return torch.as_tensor(value)
    return None


def _is_number(value):
    return isinstance(value, (numbers.Number, bool)) or (
        type(value).__module__ == "numpy" and hasattr(value, "item") and not hasattr(value, "shape")
    )


def _compare_tensors(actual, expected, *, rtol, atol, equal_nan, check_device, check_dtype, check_layout, check_stride):
    def attribute(name, a, e):
        if a != e:
            raise _Mismatch(AssertionError, f"The values for attribute '{name}' do not match: {a} != {e}.")

    attribute("shape", actual.shape, expected.shape)
    if check_device:
        attribute("device", actual.device, expected.device)
    if check_dtype:
        attribute("dtype", actual.dtype, expected.dtype)
    if check_layout:
        attribute("layout", actual.layout, expected.layout)
    if check_stride:
        attribute("stride()", actual.stride(), expected.stride())
    rtol, atol = _tolerances(actual.dtype, expected.dtype, rtol=rtol, atol=atol)
    actual = actual.detach()
    expected = expected.detach()
    if actual.dtype != expected.dtype:
        dtype = torch.promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    if actual.dtype == torch.bool or not (actual.dtype.is_floating_point or actual.dtype.is_complex):
        matches = actual == expected
    else:
        matches = torch.isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if bool(matches.all()):
        return
    if actual.dim() == 0:
        message = _scalar_message(actual.item(), expected.item(), rtol, atol)
    else:
        message = _tensor_message(actual, expected, matches, rtol, atol)
    raise _Mismatch(AssertionError, message)


def _compare_numbers(actual, expected, *, rtol, atol, equal_nan, check_dtype):
    if isinstance(actual, bool) or isinstance(expected, bool):
        if type(actual) is not type(expected) and check_dtype:
            raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        if actual is not expected and bool(actual) != bool(expected):
            raise _Mismatch(AssertionError, f"Booleans mismatch: {actual} is not {expected}")
        return
    if hasattr(actual, "item") and not isinstance(actual, numbers.Number):
        actual = actual.item()
    if hasattr(expected, "item") and not isinstance(expected, numbers.Number):
        expected = expected.item()
    if check_dtype and type(actual) is not type(expected):
        raise _Mismatch(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.")

    def dtype_of(x):
        if isinstance(x, complex):
            return torch.complex128
        if isinstance(x, float):
            return torch.float64
        return torch.int64

    rtol, atol = _tolerances(dtype_of(actual), dtype_of(expected), rtol=rtol, atol=atol)
    if actual == expected:
        return
    both_nan = actual != actual and expected != expected
    if equal_nan and both_nan:
        return
    if abs(actual - expected) <= atol + rtol * abs(expected) and not both_nan:
        return
    raise _Mismatch(AssertionError, _scalar_message(actual, expected, rtol, atol))


def _compare(actual, expected, path, options):
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(AssertionError, f"None mismatch: {actual} is not {expected}", path)
        return
    tensors = (_as_tensor(actual), _as_tensor(expected))
    if tensors[0] is not None and tensors[1] is not None:
        a, e = tensors
        if not options["allow_subclasses"] and type(a) is not type(e):
            raise _Mismatch(
                TypeError,
                f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
                path,
            )
        try:
            _compare_tensors(a, e, **{k: v for k, v in options.items() if k != "allow_subclasses"})
        except _Mismatch as m:
            raise _Mismatch(m.kind, m.message, path) from None
        return
    if tensors[0] is None and tensors[1] is None:
        if _is_number(actual) and _is_number(expected):
            try:
                _compare_numbers(
                    actual,
                    expected,
                    rtol=options["rtol"],
                    atol=options["atol"],
                    equal_nan=options["equal_nan"],
                    check_dtype=options["check_dtype"],
                )
            except _Mismatch as m:
                raise _Mismatch(m.kind, m.message, path) from None
            return
        strings = (str, bytes)
        if (
            isinstance(actual, collections.abc.Sequence)
            and isinstance(expected, collections.abc.Sequence)
            and not isinstance(actual, strings)
            and not isinstance(expected, strings)
        ):
            if len(actual) != len(expected):
                raise _Mismatch(
                    AssertionError,
                    f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                    path,
                )
            for i, (a, e) in enumerate(zip(actual, expected)):
                _compare(a, e, path + (i,), options)
            return
        if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
            actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
            if actual_keys != expected_keys:
                missing = expected_keys - actual_keys
                extra = actual_keys - expected_keys
                raise _Mismatch(
                    AssertionError,
                    "The keys of the mappings do not match:\n"
                    f"Missing keys in the actual mapping: {sorted(missing)}\n"
                    f"Additional keys in the actual mapping: {sorted(extra)}",
                    path,
                )
            keys = actual.keys()
            try:
                keys = sorted(keys)
            except Exception:
                keys = list(keys)
            for key in keys:
                _compare(actual[key], expected[key], path + (key,), options)
            return
    raise _Mismatch(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.",
        path,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Asserts that `actual` and `expected` are close: tensors (and numpy
    arrays) elementwise within `atol + rtol * abs(expected)`, numbers,
    sequences and mappings item by item; raises AssertionError with
    PyTorch's message otherwise."""
    __tracebackhide__ = True
    if (rtol is None) ^ (atol is None):
        _tolerances(rtol=rtol, atol=atol)
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        _compare(actual, expected, (), options)
    except _Mismatch as mismatch:
        message = mismatch.message
        if mismatch.kind is AssertionError:
            if callable(msg):
                message = msg(message)
            elif msg is not None:
                message = msg
        if mismatch.path and (mismatch.kind is AssertionError and not isinstance(msg, str)):
            where = "".join(f"[{item!r}]" for item in mismatch.path)
            message += f"\n\nThe failure occurred for item {where}"
        raise mismatch.kind(message) from None
