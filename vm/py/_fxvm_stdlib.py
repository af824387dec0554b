"""Imported when an fxvm interpreter starts: where RustPython's standard
library differs from CPython's C implementation in what programs see, make
it behave as CPython does (programs print these, goldens compare them, and
libraries such as transformers and filelock rely on them)."""

import _collections
import _io
import io
import sys

import _fxvm_odict

# `collections` takes `_collections.OrderedDict` when there is one, as it
# takes CPython's C implementation (see _fxvm_odict); a `collections`
# imported before this point is given it too.
_collections.OrderedDict = _fxvm_odict.OrderedDict
if "collections" in sys.modules:
    sys.modules["collections"].OrderedDict = _fxvm_odict.OrderedDict

# Audit hooks (PEP 578). RustPython raises no audit events of its own, so
# hooks see the events programs raise with `sys.audit` (and this module's
# "sys.addaudithook"); filelock registers one at import to watch for forks.
if not hasattr(sys, "addaudithook"):
    _audit_hooks = []

    def addaudithook(hook):
        """Adds ``hook`` to the audit hooks, unless an existing hook refuses it
        by raising a RuntimeError for the "sys.addaudithook" event."""
        try:
            audit("sys.addaudithook")
        except RuntimeError:
            return
        _audit_hooks.append(hook)

    def audit(event, *args):
        """Calls each audit hook with ``event`` and ``args``, in the order they were added."""
        if not isinstance(event, str):
            raise TypeError(f"expected str for argument 'event', not {type(event).__name__}")
        for hook in tuple(_audit_hooks):
            hook(event, args)

    sys.addaudithook = addaudithook
    sys.audit = audit


class StringIO(_io.StringIO):
    """``io.StringIO`` reading by characters: RustPython's counts
    ``read(size)``/``readline(size)`` in UTF-8 bytes, returning fewer
    characters than asked and failing ("Error Retrieving Value") when the
    count ends inside a character (email's parser reads 8192 at a time,
    and every package's metadata goes through it). ``tell``/``seek``
    positions stay the native ones: opaque, as Python documents them."""

    def read(self, size=-1):
        if size is None or size < 0:
            return super().read()
        parts = []
        want = size
        while want > 0:
            chunk = self._read_chars(want)
            if not chunk:
                break
            parts.append(chunk)
            want -= len(chunk)
        return "".join(parts)

    def _read_chars(self, n):
        """At most ``n`` characters, at least one unless at the end."""
        start = super().tell()
        # `n` bytes hold at most `n` characters; a count that ends inside a
        # character is widened by up to three bytes.
        for extra in range(4):
            try:
                chunk = super().read(n + extra)
                break
            except ValueError:
                super().seek(start)
        else:
            raise ValueError("invalid UTF-8 in StringIO buffer")
        if len(chunk) > n:
            chunk = chunk[:n]
            super().seek(start + len(chunk.encode("utf-8", "surrogatepass")))
        return chunk

    def readline(self, size=-1):
        if size is None or size < 0:
            return super().readline()
        start = super().tell()
        line = super().readline()
        if len(line) > size:
            line = line[:size]
            super().seek(start + len(line.encode("utf-8", "surrogatepass")))
        return line


StringIO.__module__ = "_io"
StringIO.__qualname__ = StringIO.__name__ = "StringIO"
io.StringIO = _io.StringIO = StringIO
