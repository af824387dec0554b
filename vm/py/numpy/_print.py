"""Arrays printed as numpy 2.x prints them: ``repr``/``str``,
``array2string``, the print options, ``format_float_positional`` and
``format_float_scientific``. Floats start from the shortest digits of
their own width (Dragon4's unique mode) and are laid out by numpy's rules:
one format per array, positional unless the magnitudes call for
scientific notation, padded so the columns align, wrapped at the line
width, summarised past the threshold."""

import builtins
import contextlib
import math

import torch

import _fxvm_numpy
from numpy._array import _compute, _item
from numpy._convert import asarray

_OPTIONS = {
    "edgeitems": 3,
    "threshold": 1000,
    "floatmode": "maxprec",
    "precision": 8,
    "suppress": False,
    "linewidth": 75,
    "nanstr": "nan",
    "infstr": "inf",
    "sign": "-",
    "formatter": None,
    "legacy": False,
    "override_repr": None,
}


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    suppress=None,
    nanstr=None,
    infstr=None,
    formatter=None,
    sign=None,
    floatmode=None,
    *,
    legacy=None,
    override_repr=None,
):
    given = {
        "precision": precision,
        "threshold": threshold,
        "edgeitems": edgeitems,
        "linewidth": linewidth,
        "suppress": suppress,
        "nanstr": nanstr,
        "infstr": infstr,
        "sign": sign,
        "floatmode": floatmode,
        "override_repr": override_repr,
    }
    for k, v in given.items():
        if v is not None:
            if k == "threshold" and isinstance(v, builtins.float) and math.isnan(v):
                raise ValueError("threshold must be non-NAN, try sys.maxsize for untruncated representation")
            if k == "floatmode" and v not in ("fixed", "unique", "maxprec", "maxprec_equal"):
                raise ValueError("floatmode option must be one of 'fixed', 'unique', 'maxprec', 'maxprec_equal'")
            if k == "sign" and v not in ("-", "+", " "):
                raise ValueError("sign option must be one of ' ', '+', or '-'")
            _OPTIONS[k] = v
    _OPTIONS["formatter"] = formatter
    if legacy is not None and legacy is not False:
        raise NotImplementedError("fxvm's numpy prints in numpy 2's style only (legacy=False)")


def get_printoptions():
    return builtins.dict(_OPTIONS)


@contextlib.contextmanager
def printoptions(*args, **kwargs):
    saved = get_printoptions()
    try:
        set_printoptions(*args, **kwargs)
        yield get_printoptions()
    finally:
        _OPTIONS.update(saved)


# ------------------------------------------------------------------ digits


def _shortest(x, bits):
    """(negative, digits, exponent): ``x`` = ±d.ddd × 10**exponent, fewest digits."""
    text = _fxvm_numpy.shortest_digits(x, bits)
    mantissa, _, exp = text.partition("e")
    negative = mantissa.startswith("-")
    return negative, mantissa.lstrip("-").replace(".", ""), builtins.int(exp)


def _positional_parts(x, bits, precision, unique):
    """(sign, int part, fraction) of ``x`` positional, rounded to ``precision`` fraction digits."""
    if unique:
        negative, digits, exp = _shortest(x, bits)
        if exp >= 0:
            whole = (digits + "0" * (exp + 1))[: exp + 1]
            frac = digits[exp + 1 :]
        else:
            whole = "0"
            frac = "0" * (-exp - 1) + digits
        frac = frac.rstrip("0")
        if precision is None or builtins.len(frac) <= precision:
            return ("-" if negative else ""), whole, frac
    text = "%.*f" % (precision, builtins.abs(x))
    whole, _, frac = text.partition(".")
    if unique:
        frac = frac.rstrip("0")
    return ("-" if math.copysign(1.0, x) < 0 else ""), whole, frac


def _scientific_parts(x, bits, precision, unique):
    """(sign, leading digit, fraction, exponent) of ``x`` in scientific notation."""
    if unique:
        negative, digits, exp = _shortest(x, bits)
        frac = digits[1:].rstrip("0")
        if precision is None or builtins.len(frac) <= precision:
            return ("-" if negative else ""), digits[0], frac, exp
    text = "%.*e" % (precision, builtins.abs(x))
    mantissa, _, exp = text.partition("e")
    lead, _, frac = mantissa.partition(".")
    if unique:
        frac = frac.rstrip("0")
    return ("-" if math.copysign(1.0, x) < 0 else ""), lead, frac, builtins.int(exp)


def _mantissa(s, lead, frac, min_digits, unique, trim, sign, pad_left):
    """The digits before an exponent (or all of a positional number): the
    sign, the leading part, the fraction trimmed and padded as asked, and
    the leading part's width (what ``pad_right`` counts from)."""
    if not unique and trim in (".", "0", "-"):
        frac = frac.rstrip("0")
    if min_digits and builtins.len(frac) < min_digits:
        frac = frac + "0" * (min_digits - builtins.len(frac))
    if sign and not s:
        s = "+"
    head = s + lead
    if frac:
        text = f"{head}.{frac}"
    elif trim == "-":
        text = head
    elif trim == "0":
        text = f"{head}.0"
    else:
        text = f"{head}."
    if pad_left is not None:
        text = " " * (pad_left - builtins.len(head)) + text
    return text, frac


def _positional(
    x, bits, precision=None, min_digits=0, unique=True, trim=".", sign=False, pad_left=None, pad_right=None
):
    s, whole, frac = _positional_parts(x, bits, precision, unique)
    text, frac = _mantissa(s, whole, frac, min_digits, unique, trim, sign, pad_left)
    if pad_right is not None:
        text = text + " " * (pad_right - builtins.len(frac))
    return text


def _scientific(
    x, bits, precision=None, min_digits=0, unique=True, trim=".", sign=False, pad_left=None, exp_digits=None
):
    s, lead, frac, exp = _scientific_parts(x, bits, precision, unique)
    mantissa, _ = _mantissa(s, lead, frac, min_digits, unique, trim, sign, pad_left)
    width = builtins.max(2, exp_digits if exp_digits and exp_digits > 0 else 2)
    return f"{mantissa}e{'-' if exp < 0 else '+'}{builtins.abs(exp):0{width}d}"


def _bits_of(x):
    from numpy import _dtypes

    if isinstance(x, _dtypes.generic) and x._info.kind == "f":
        return 8 * x._info.itemsize
    return 64


def _format_float(x, precision, unique, sign, body):
    """A scalar's text by ``body(value, bits)``; nan and infinities by name."""
    bits = _bits_of(x)
    x = builtins.float(x)
    if not unique and precision is None:
        raise ValueError("precision must be provided if unique is False")
    if not math.isfinite(x):
        return "nan" if x != x else ("-inf" if x < 0 else ("+inf" if sign else "inf"))
    return body(x, bits)


def format_float_positional(
    x,
    precision=None,
    unique=True,
    fractional=True,
    trim="k",
    sign=False,
    pad_left=None,
    pad_right=None,
    min_digits=None,
):
    return _format_float(
        x,
        precision,
        unique,
        sign,
        lambda v, bits: _positional(v, bits, precision, min_digits or 0, unique, trim, sign, pad_left, pad_right),
    )


def format_float_scientific(
    x, precision=None, unique=True, trim="k", sign=False, pad_left=None, exp_digits=None, min_digits=None
):
    return _format_float(
        x,
        precision,
        unique,
        sign,
        lambda v, bits: _scientific(v, bits, precision, min_digits or 0, unique, trim, sign, pad_left, exp_digits),
    )


# ------------------------------------------------------------ element formats


class _BoolFormat:
    def __init__(self, data):
        self.padded = data.shape != ()

    def __call__(self, x):
        if self.padded:
            return " True" if x else "False"
        return "True" if x else "False"


class _IntFormat:
    def __init__(self, values, sign):
        if values:
            hi, lo = builtins.max(values), builtins.min(values)
            hi_len = builtins.len(builtins.str(hi))
            if sign == " " and lo < 0:
                sign = "-"
            if hi >= 0 and sign in "+ ":
                hi_len += 1
            width = builtins.max(hi_len, builtins.len(builtins.str(lo)))
        else:
            width = 0
        self.spec = f"{sign if sign != '-' else ''}{width}d"

    def __call__(self, x):
        return format(x, self.spec)


_PRECISION_DIGITS = {16: 3, 32: 6, 64: 15}


class _FloatFormat:
    def __init__(self, values, bits, options):
        self.bits = bits
        self.floatmode = options["floatmode"]
        self.precision = None if self.floatmode == "unique" else options["precision"]
        self.sign = options["sign"]
        self.options = options
        self.exp_format = False
        finite = [v for v in values if math.isfinite(v)]
        nonzero = [builtins.abs(v) for v in finite if v != 0]
        if nonzero:
            hi, lo = builtins.max(nonzero), builtins.min(nonzero)
            cutoff = 10.0 ** builtins.min(8, _PRECISION_DIGITS[bits])
            if hi >= cutoff or (not options["suppress"] and (lo < 0.0001 or hi / lo > 1000.0)):
                self.exp_format = True
        plus = self.sign == "+"
        if not finite:
            self.pad_left = self.pad_right = 0
            self.trim = "."
            self.exp_size = -1
            self.unique = True
            self.min_digits = None
        elif self.exp_format:
            trim, unique = (".", True) if self.floatmode != "fixed" else ("k", False)
            texts = [_scientific(v, bits, self.precision, 0, unique, trim, plus) for v in finite]
            self.exp_size = builtins.max(builtins.len(t.partition("e")[2]) for t in texts) - 1
            self.trim = "k"
            fracs = [t.partition("e")[0].partition(".")[2] for t in texts]
            self.precision = builtins.max(builtins.len(f) for f in fracs)
            self.min_digits = self.precision
            self.unique = unique
            self.pad_left = builtins.max(builtins.len(t.partition("e")[0].partition(".")[0]) for t in texts)
            self.pad_right = self.exp_size + 2 + self.precision
        else:
            trim, unique = (".", True) if self.floatmode != "fixed" else ("k", False)
            texts = [_positional(v, bits, self.precision, 0, unique, trim, plus) for v in finite]
            ints = [t.partition(".")[0] for t in texts]
            fracs = [t.partition(".")[2] for t in texts]
            self.pad_left = builtins.max(builtins.len(s) for s in ints)
            self.pad_right = builtins.max(builtins.len(s) for s in fracs)
            self.exp_size = -1
            self.unique = unique
            if self.floatmode in ("fixed", "maxprec_equal"):
                self.precision = self.min_digits = self.pad_right
                self.trim = "k"
            else:
                self.trim = "."
                self.min_digits = 0
        if self.sign == " " and not builtins.any(math.copysign(1.0, v) < 0 for v in finite):
            self.pad_left += 1
        if builtins.len(finite) != builtins.len(values):
            neginf = self.sign != "-" or builtins.any(v == -math.inf for v in values)
            offset = self.pad_right + 1
            self.pad_left = builtins.max(
                self.pad_left,
                builtins.len(options["nanstr"]) - offset,
                builtins.len(options["infstr"]) + neginf - offset,
            )

    def __call__(self, x):
        if not math.isfinite(x):
            if x != x:
                ret = ("+" if self.sign == "+" else "") + self.options["nanstr"]
            else:
                ret = ("-" if x < 0 else "+" if self.sign == "+" else "") + self.options["infstr"]
            return " " * (self.pad_left + self.pad_right + 1 - builtins.len(ret)) + ret
        plus = self.sign == "+"
        if self.exp_format:
            return _scientific(
                x,
                self.bits,
                self.precision,
                self.min_digits,
                self.unique,
                self.trim,
                plus,
                self.pad_left,
                self.exp_size,
            )
        return _positional(
            x, self.bits, self.precision, self.min_digits, self.unique, self.trim, plus, self.pad_left, self.pad_right
        )


def _leading_trailing(t, edge, index=()):
    """The corners of a large array numpy formats from (edge items per axis)."""
    axis = builtins.len(index)
    if axis == t.dim():
        return t
    n = t.shape[axis]
    if 2 * edge < n:
        head = _leading_trailing(t.narrow(axis, 0, edge), edge, index + (0,))
        tail = _leading_trailing(t.narrow(axis, n - edge, edge), edge, index + (0,))
        return torch.cat([head, tail], axis)
    return _leading_trailing(t, edge, index + (0,))


def _format_function(a, data, options):
    info = a._info
    formatter = options["formatter"]
    if formatter:
        kind = {"b": "bool", "i": "int", "u": "int", "f": "float"}[info.kind]
        for key in (kind, "int_kind" if kind == "int" else "float_kind" if kind == "float" else None, "all"):
            if key and key in formatter:
                return formatter[key]
    if info.kind == "b":
        return _BoolFormat(a)
    values = data.reshape(-1).tolist() if data.numel() else []
    if info.kind in "iu":
        if info.name == "uint64":
            values = [v + (1 << 64) if v < 0 else v for v in values]
        return _IntFormat(values, options["sign"])
    return _FloatFormat(values, 8 * info.itemsize, options)


def _extend_line(s, line, word, width, next_prefix):
    needs_wrap = builtins.len(line) + builtins.len(word) > width
    if builtins.len(line) <= builtins.len(next_prefix):
        needs_wrap = False
    if needs_wrap:
        s += line.rstrip() + "\n"
        line = next_prefix
    return s, line + word


def _extend_line_pretty(s, line, word, width, next_prefix):
    words = word.splitlines()
    if builtins.len(words) == 1:
        return _extend_line(s, line, word, width, next_prefix)
    max_word = builtins.max(builtins.len(w) for w in words)
    if builtins.len(line) + max_word > width and builtins.len(line) > builtins.len(next_prefix):
        s += line.rstrip() + "\n"
        line = next_prefix + words[0]
        indent = next_prefix
    else:
        indent = builtins.len(line) * " "
        line += words[0]
    for w in words[1:]:
        s += line.rstrip() + "\n"
        line = indent + w
    suffix_len = max_word - builtins.len(words[-1])
    line += suffix_len * " "
    return s, line


def _format_array(a, fmt, width, next_prefix, separator, edge, summary):
    info = a._info
    shape = a.shape
    # Small arrays are read once; summarised ones only where printed.
    nested = None if summary else a.tolist()

    def element(index):
        if nested is None:
            return fmt(_item(a._t[index], info))
        v = nested
        for i in index:
            v = v[i]
        return fmt(v)

    def recurse(index, hanging, curr_width):
        axis = builtins.len(index)
        left = builtins.len(shape) - axis
        if left == 0:
            return element(index)
        next_hanging = hanging + " "
        next_width = curr_width - 1
        n = shape[axis]
        show_summary = summary and 2 * edge < n
        leading, trailing = (edge, edge) if show_summary else (0, n)
        if left == 1:
            elem_width = curr_width - builtins.max(builtins.len(separator.rstrip()), 1)
            s, line = "", hanging
            for i in builtins.range(leading):
                s, line = _extend_line_pretty(
                    s, line, recurse(index + (i,), next_hanging, next_width), elem_width, hanging
                )
                line += separator
            if show_summary:
                s, line = _extend_line(s, line, summary, elem_width, hanging)
                line += separator
            for i in builtins.range(trailing, 1, -1):
                s, line = _extend_line_pretty(
                    s, line, recurse(index + (n - i,), next_hanging, next_width), elem_width, hanging
                )
                line += separator
            s, line = _extend_line_pretty(
                s, line, recurse(index + (n - 1,), next_hanging, next_width), elem_width, hanging
            )
            s += line
        else:
            s = ""
            line_sep = separator.rstrip() + "\n" * (left - 1)
            for i in builtins.range(leading):
                s += hanging + recurse(index + (i,), next_hanging, next_width) + line_sep
            if show_summary:
                s += hanging + summary + line_sep
            for i in builtins.range(trailing, 1, -1):
                s += hanging + recurse(index + (n - i,), next_hanging, next_width) + line_sep
            s += hanging + recurse(index + (n - 1,), next_hanging, next_width)
        return "[" + s[builtins.len(hanging) :] + "]"

    return recurse((), next_prefix, width)


def array2string(
    a,
    max_line_width=None,
    precision=None,
    suppress_small=None,
    separator=" ",
    prefix="",
    style=None,
    formatter=None,
    threshold=None,
    edgeitems=None,
    sign=None,
    floatmode=None,
    suffix="",
    *,
    legacy=None,
):
    a = asarray(a)
    options = builtins.dict(_OPTIONS)
    for k, v in (
        ("linewidth", max_line_width),
        ("precision", precision),
        ("suppress", suppress_small),
        ("threshold", threshold),
        ("edgeitems", edgeitems),
        ("sign", sign),
        ("floatmode", floatmode),
    ):
        if v is not None:
            options[k] = v
    if formatter is not None:
        options["formatter"] = formatter
    options["linewidth"] -= builtins.len(suffix)
    if a.size == 0:
        return "[]"
    if a.size > options["threshold"]:
        summary = "..."
        data = _leading_trailing(_compute(a), options["edgeitems"])
    else:
        summary = ""
        data = _compute(a)
    if a._info.kind == "b":
        data = a._t
    fmt = _format_function(a, data, options)
    return _format_array(
        a, fmt, options["linewidth"], " " + " " * builtins.len(prefix), separator, options["edgeitems"], summary
    )


_IMPLIED = ("float64", "int64", "bool")


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    a = asarray(arr)
    if _OPTIONS["override_repr"] is not None:
        return _OPTIONS["override_repr"](a)
    width = _OPTIONS["linewidth"] if max_line_width is None else max_line_width
    prefix = "array("
    lst = array2string(a, width, precision, suppress_small, ", ", prefix, suffix=")")
    extras = []
    if (a.size == 0 and a.shape != (0,)) or a.size > _OPTIONS["threshold"]:
        extras.append(f"shape={a.shape}")
    if a.dtype.name not in _IMPLIED or a.size == 0:
        extras.append(f"dtype={a.dtype.name}")
    if not extras:
        return prefix + lst + ")"
    arr_str = prefix + lst + ","
    extra_str = ", ".join(extras) + ")"
    last_line_len = builtins.len(arr_str) - (arr_str.rfind("\n") + 1)
    spacer = " "
    if last_line_len + builtins.len(extra_str) + 1 > width:
        spacer = "\n" + " " * builtins.len(prefix)
    return arr_str + spacer + extra_str


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    a = asarray(a)
    if a.ndim == 0:
        return builtins.str(a[()])
    return array2string(a, max_line_width, precision, suppress_small, " ", "")
