"""``regex.Pattern`` and ``regex.Match`` over the native engine's spans,
and ``regex.error``."""

__all__ = ["Match", "Pattern", "error"]

_MAXREPR = 300

# `Pattern`'s repr names flags in the order of their long names, V0 always.
_REPR_ORDER = (
    ("A", 0x80),
    ("B", 0x1000),
    ("S", 0x10),
    ("F", 0x4000),
    ("I", 0x2),
    ("L", 0x4),
    ("M", 0x8),
    ("P", 0x10000),
    ("R", 0x400),
    ("T", 0x1),
    ("X", 0x40),
    ("V0", None),
    ("V1", 0x100),
    ("W", 0x800),
)


class error(Exception):
    """A pattern or template that does not compile: ``msg``, ``pattern``,
    ``pos`` and the ``lineno``/``colno`` it falls on."""

    def __init__(self, message, pattern=None, pos=None):
        self.msg = message
        self.pattern = pattern
        self.pos = pos
        if pattern is not None and pos is not None:
            newline = "\n" if isinstance(pattern, str) else b"\n"
            self.lineno = pattern.count(newline, 0, pos) + 1
            self.colno = pos - pattern.rfind(newline, 0, pos)
            message = f"{message} at position {pos}"
            if newline in pattern:
                message += f" (line {self.lineno}, column {self.colno})"
        else:
            self.lineno = self.colno = None
        super().__init__(message)


error.__module__ = "regex"


def _unsupported(what):
    raise NotImplementedError(f"fxvm's regex does not support {what}")


def _window(string, pos, endpos):
    if not isinstance(string, str):
        if isinstance(string, (bytes, bytearray, memoryview)):
            raise TypeError("cannot use a string pattern on a bytes-like object")
        raise TypeError(f"expected string or buffer, got {type(string).__name__}")
    n = len(string)
    pos = 0 if pos is None else (max(n + pos, 0) if pos < 0 else min(pos, n))
    endpos = n if endpos is None else (max(n + endpos, 0) if endpos < 0 else min(endpos, n))
    return pos, endpos


class Pattern:
    """A compiled pattern (``regex.compile``)."""

    __slots__ = ("pattern", "_native", "groupindex", "__weakref__")

    def __init__(self, pattern, native):
        self.pattern = pattern
        self._native = native
        self.groupindex = dict(native.names)

    @property
    def flags(self):
        # str patterns are Unicode, and version 0 is the default.
        return self._native.flags | 0x20 | 0x2000

    @property
    def groups(self):
        return self._native.groups

    @property
    def named_lists(self):
        return {}

    def __repr__(self):
        flags = self._native.flags
        names = [f"regex.{name}" for name, bit in _REPR_ORDER if (bit is None or flags & bit)]
        return f"regex.Regex({self.pattern!r}, flags={' | '.join(names)})"

    def __eq__(self, other):
        return isinstance(other, Pattern) and (self.pattern, self.flags) == (other.pattern, other.flags)

    def __hash__(self):
        return hash((self.pattern, self.flags))

    def __reduce__(self):
        import regex

        return regex.compile, (self.pattern, self._native.flags)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def _find(self, string, pos, endpos, anchor, partial):
        if partial:
            _unsupported("partial matches")
        pos, endpos = _window(string, pos, endpos)
        if pos > endpos:
            return None
        spans = self._native.find(string, pos, endpos, anchor)
        return None if spans is None else Match(self, string, pos, endpos, spans)

    def search(self, string, pos=None, endpos=None, concurrent=None, timeout=None, partial=False):
        return self._find(string, pos, endpos, 0, partial)

    def match(self, string, pos=None, endpos=None, concurrent=None, timeout=None, partial=False):
        return self._find(string, pos, endpos, 1, partial)

    def fullmatch(self, string, pos=None, endpos=None, concurrent=None, timeout=None, partial=False):
        return self._find(string, pos, endpos, 2, partial)

    def _all(self, string, pos, endpos, overlapped, limit=0):
        if overlapped:
            _unsupported("overlapped matches")
        pos, endpos = _window(string, pos, endpos)
        if pos > endpos:
            return pos, endpos, []
        return pos, endpos, self._native.find_all(string, pos, endpos, limit)

    def findall(self, string, pos=None, endpos=None, overlapped=False, concurrent=None, timeout=None):
        if overlapped:
            _unsupported("overlapped matches")
        pos, endpos = _window(string, pos, endpos)
        if pos > endpos:
            return []
        return self._native.find_strings(string, pos, endpos)

    def finditer(self, string, pos=None, endpos=None, overlapped=False, concurrent=None, timeout=None, partial=False):
        if partial:
            _unsupported("partial matches")
        pos, endpos, found = self._all(string, pos, endpos, overlapped)
        return iter([Match(self, string, pos, endpos, spans) for spans in found])

    def subn(self, repl, string, count=0, pos=None, endpos=None, concurrent=None, timeout=None):
        if pos is not None or endpos is not None:
            _unsupported("pos and endpos in sub()")
        if count < 0:
            return string, 0
        if callable(repl):
            _, _, found = self._all(string, None, None, False, count)
            out, last = [], 0
            for spans in found:
                start, end = spans[0]
                out.append(string[last:start])
                out.append(repl(Match(self, string, 0, len(string), spans)))
                last = end
            out.append(string[last:])
            return "".join(out), len(found)
        if not isinstance(repl, str):
            raise TypeError(f"expected str instance, {type(repl).__name__} found")
        return self._native.sub(self._template(repl), string, count)

    def sub(self, repl, string, count=0, pos=None, endpos=None, concurrent=None, timeout=None):
        return self.subn(repl, string, count, pos, endpos)[0]

    def _template(self, repl):
        try:
            return self._native.template(repl)
        except ValueError as e:
            message, pos = e.args
            raise error(message, repl, pos) from None

    def split(self, string, maxsplit=0, concurrent=None, timeout=None):
        _window(string, None, None)
        if maxsplit < 0:
            return [string]
        return self._native.split(string, maxsplit)

    def splititer(self, string, maxsplit=0, concurrent=None, timeout=None):
        return iter(self.split(string, maxsplit))


class Match:
    """A match: its spans, groups and the string searched."""

    __slots__ = ("re", "string", "pos", "endpos", "_spans")

    def __init__(self, pattern, string, pos, endpos, spans):
        self.re = pattern
        self.string = string
        self.pos = pos
        self.endpos = endpos
        self._spans = spans

    def _index(self, group):
        if isinstance(group, int) and not isinstance(group, bool):
            if 0 <= group < len(self._spans):
                return group
        elif isinstance(group, str):
            index = self.re.groupindex.get(group)
            if index is not None:
                return index
        elif hasattr(group, "__index__"):
            return self._index(group.__index__())
        raise IndexError("no such group")

    def _text(self, index, default=None):
        span = self._spans[index]
        return default if span is None else self.string[span[0] : span[1]]

    def group(self, *groups):
        if not groups:
            return self._text(0)
        if len(groups) == 1:
            return self._text(self._index(groups[0]))
        return tuple(self._text(self._index(g)) for g in groups)

    def __getitem__(self, group):
        return self._text(self._index(group))

    def groups(self, default=None):
        return tuple(self._text(i, default) for i in range(1, len(self._spans)))

    def groupdict(self, default=None):
        return {name: self._text(index, default) for name, index in self.re.groupindex.items()}

    def span(self, group=0):
        span = self._spans[self._index(group)]
        return (-1, -1) if span is None else span

    def start(self, group=0):
        return self.span(group)[0]

    def end(self, group=0):
        return self.span(group)[1]

    @property
    def regs(self):
        return tuple((-1, -1) if s is None else s for s in self._spans)

    @property
    def lastindex(self):
        # The group that closed last: the one ending furthest right, the
        # outermost of those ending together.
        best = None
        for index in range(1, len(self._spans)):
            span = self._spans[index]
            if span is not None and (best is None or span[1] > self._spans[best][1]):
                best = index
        return best

    @property
    def lastgroup(self):
        # The `regex` package names the named group that closed last.
        best, best_end = None, -1
        for name, index in self.re.groupindex.items():
            span = self._spans[index]
            if span is not None and span[1] > best_end:
                best, best_end = name, span[1]
        return best

    @property
    def partial(self):
        return False

    def expand(self, template):
        """``template`` filled from this match's groups (as ``sub`` fills it)."""
        regs = self.regs
        return self.re._template(template).expand(self.string, [a for a, _ in regs], [b for _, b in regs])

    def captures(self, group=0):
        _unsupported("captures() (the engine keeps a group's last capture only)")

    def detach_string(self):
        """Drops the reference to the searched string (nothing is kept natively)."""

    def __repr__(self):
        text = self._text(0)
        shown = text if len(text) <= _MAXREPR else text[:_MAXREPR]
        return f"<regex.Match object; span={self._spans[0]}, match={shown!r}>"

    def __bool__(self):
        return True

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self
