"""``regex`` for fxvm: the `regex` package's API (version 0 behaviour) on
a native engine (``_fxvm_regex``: fancy-regex with Python's syntax,
positions and matching rules). ``str`` patterns only; fuzzy matching,
overlapped finds, ``captures()`` of repeated groups, ``\\X``, recursion and
the reverse and POSIX modes are not supported and say so."""

import enum

import _fxvm_metadata
import _fxvm_regex

from regex._pattern import Match, Pattern, error

__all__ = [
    "A",
    "ASCII",
    "B",
    "BESTMATCH",
    "D",
    "DEBUG",
    "E",
    "ENHANCEMATCH",
    "F",
    "FULLCASE",
    "I",
    "IGNORECASE",
    "L",
    "LOCALE",
    "M",
    "MULTILINE",
    "P",
    "POSIX",
    "R",
    "REVERSE",
    "S",
    "DOTALL",
    "T",
    "TEMPLATE",
    "U",
    "UNICODE",
    "V0",
    "VERSION0",
    "V1",
    "VERSION1",
    "W",
    "WORD",
    "X",
    "VERBOSE",
    "DEFAULT_VERSION",
    "Match",
    "Pattern",
    "Regex",
    "compile",
    "error",
    "escape",
    "findall",
    "finditer",
    "fullmatch",
    "match",
    "purge",
    "search",
    "split",
    "splititer",
    "sub",
    "subn",
    "template",
]

# The `regex` package release whose behaviour this follows.
__version__ = _fxvm_metadata.VERSIONS["regex"]


class RegexFlag(enum.IntFlag):
    A = ASCII = 0x80
    B = BESTMATCH = 0x1000
    D = DEBUG = 0x200
    E = ENHANCEMATCH = 0x8000
    F = FULLCASE = 0x4000
    I = IGNORECASE = 0x2  # noqa: E741
    L = LOCALE = 0x4
    M = MULTILINE = 0x8
    P = POSIX = 0x10000
    R = REVERSE = 0x400
    S = DOTALL = 0x10
    T = TEMPLATE = 0x1
    U = UNICODE = 0x20
    V0 = VERSION0 = 0x2000
    V1 = VERSION1 = 0x100
    W = WORD = 0x800
    X = VERBOSE = 0x40

    def __repr__(self):
        names = [f.name for f in RegexFlag if f.value & self.value and f.value.bit_count() == 1]
        return "regex." + "|".join(names) if names else "regex.0"

    __str__ = __repr__


globals().update(RegexFlag.__members__)
DEFAULT_VERSION = RegexFlag.V0

# Flags the engine cannot honour, and what they are called.
_UNSUPPORTED = {
    RegexFlag.B: "BESTMATCH",
    RegexFlag.E: "ENHANCEMATCH",
    RegexFlag.P: "POSIX",
    RegexFlag.R: "REVERSE",
    RegexFlag.V1: "VERSION1",
    RegexFlag.W: "WORD",
    RegexFlag.L: "LOCALE",
}

_cache = {}
_MAXCACHE = 500


def compile(pattern, flags=0, ignore_unused=False, cache_pattern=None, **kwargs):
    """A compiled ``Pattern`` (cached by pattern and flags)."""
    if isinstance(pattern, Pattern):
        if flags:
            raise ValueError("cannot process flags argument with a compiled pattern")
        return pattern
    if kwargs:
        raise NotImplementedError("fxvm's regex has no named lists (keyword arguments to compile)")
    key = (type(pattern), pattern, int(flags))
    compiled = _cache.get(key)
    if compiled is None:
        compiled = _compile(pattern, int(flags))
        if len(_cache) >= _MAXCACHE:
            _cache.clear()
        _cache[key] = compiled
    return compiled


def _compile(pattern, flags):
    if isinstance(pattern, (bytes, bytearray)):
        raise NotImplementedError("fxvm's regex matches str patterns; bytes patterns are not supported")
    if not isinstance(pattern, str):
        raise TypeError("first argument must be a string or compiled pattern")
    for flag, name in _UNSUPPORTED.items():
        if flags & flag:
            raise NotImplementedError(f"fxvm's regex does not support the {name} flag")
    try:
        native = _fxvm_regex.Compiled(pattern, flags)
    except ValueError as e:
        message, pos = e.args
        raise error(message, pattern, pos) from None
    return Pattern(pattern, native)


def search(
    pattern,
    string,
    flags=0,
    pos=None,
    endpos=None,
    partial=False,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).search(string, pos, endpos, partial=partial)


def match(
    pattern,
    string,
    flags=0,
    pos=None,
    endpos=None,
    partial=False,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).match(string, pos, endpos, partial=partial)


def fullmatch(
    pattern,
    string,
    flags=0,
    pos=None,
    endpos=None,
    partial=False,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).fullmatch(string, pos, endpos, partial=partial)


def findall(
    pattern,
    string,
    flags=0,
    pos=None,
    endpos=None,
    overlapped=False,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).findall(string, pos, endpos, overlapped=overlapped)


def finditer(
    pattern,
    string,
    flags=0,
    pos=None,
    endpos=None,
    overlapped=False,
    partial=False,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).finditer(string, pos, endpos, overlapped=overlapped, partial=partial)


def sub(
    pattern,
    repl,
    string,
    count=0,
    flags=0,
    pos=None,
    endpos=None,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).sub(repl, string, count, pos, endpos)


def subn(
    pattern,
    repl,
    string,
    count=0,
    flags=0,
    pos=None,
    endpos=None,
    concurrent=None,
    timeout=None,
    ignore_unused=False,
    **kwargs,
):
    return compile(pattern, flags, **kwargs).subn(repl, string, count, pos, endpos)


def split(pattern, string, maxsplit=0, flags=0, concurrent=None, timeout=None, ignore_unused=False, **kwargs):
    return compile(pattern, flags, **kwargs).split(string, maxsplit)


def splititer(pattern, string, maxsplit=0, flags=0, concurrent=None, timeout=None, ignore_unused=False, **kwargs):
    return compile(pattern, flags, **kwargs).splititer(string, maxsplit)


def template(pattern, flags=0):
    return compile(pattern, flags | RegexFlag.T)


def purge():
    """Empties the pattern cache."""
    _cache.clear()


def escape(pattern, special_only=True, literal_spaces=False):
    """``pattern`` with the characters that are special in patterns and
    whitespace escaped (with ``special_only=False``, all but ASCII letters
    and digits)."""
    if isinstance(pattern, (bytes, bytearray)):
        return bytes(escape(pattern.decode("latin-1"), special_only, literal_spaces), "latin-1")
    out = []
    for c in pattern:
        if c == " " and literal_spaces:
            out.append(c)
        elif (c in _SPECIAL or c.isspace()) if special_only else not (c.isascii() and c.isalnum()):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


# What `escape` escapes by default: the characters with a meaning in patterns.
_SPECIAL = frozenset("\\.^$*+?{}[]|()#&~-")

Regex = compile
