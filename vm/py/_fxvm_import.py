"""Installed when an fxvm interpreter starts: how imports meet compiled code.

- An import that would need a compiled extension module (a ``.so``/``.pyd``
  file, such as numpy's core or torchvision's ``_C``) fails with a
  ``CompiledExtensionError`` (an ImportError) that names the file and says
  why, instead of a bare "No module named". Its finder runs only after every
  other finder has failed, so pure-Python packages are unaffected.
- A library whose module body imports such a package at its top (torchvision
  imports numpy and PIL for its datasets and transforms) still imports: that
  one import binds a stand-in that raises the error when first used. Imports
  in scripts, in functions and in ``try`` blocks of already-loaded code see
  the error at once, and the stand-in never enters ``sys.modules``, so
  feature probes (``"numpy" in sys.modules``, ``try: import numpy``) answer
  truthfully.
"""

import builtins
import os
import sys
import types

import _fxvm_metadata


class CompiledExtensionError(ImportError):
    """An import needed a compiled extension module, which fxvm cannot load."""


class CompiledExtensionFinder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        leaf = name.rpartition(".")[2]
        for entry in sys.path if path is None else path:
            found = _extension_files(entry).get(leaf)
            if found is not None:
                raise CompiledExtensionError(
                    f"fxvm cannot load compiled extension modules: {name} is {os.path.join(entry, found)} "
                    "(fxvm runs pure-Python packages only)",
                    name=name,
                )
        return None


# Each directory's extension modules by name, with the directory's mtime
# when listed: this finder runs for every import no other finder answers
# (libraries probe for optional packages), and listing each directory of
# the path every time cost ~2 ms per probe.
_listed = {}


def _extension_files(entry):
    """The compiled extension modules (``.so``/``.pyd``) in one directory of
    the path, by module name."""
    try:
        mtime = os.stat(entry or ".").st_mtime
    except OSError, TypeError:
        return {}
    listed = _listed.get(entry)
    if listed is None or listed[0] != mtime:
        try:
            files = os.listdir(entry or ".")
        except OSError, TypeError:
            files = ()
        names = {}
        for f in files:
            if f.endswith((".so", ".pyd")):
                names.setdefault(f.partition(".")[0], f)
        listed = _listed[entry] = (mtime, names)
    return listed[1]


def _compiled_cause(error):
    """The CompiledExtensionError behind an ImportError, if any (packages
    such as numpy re-raise it with their own message)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, CompiledExtensionError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


class UnavailableError(ImportError):
    """A library used a package that could not be imported for its compiled code."""


class _Unavailable(type):
    """Stand-ins for what a package that needs compiled code would define:
    classes, so library code can still name them, subclass them and test
    ``isinstance`` against them (always False: no such object can exist);
    calling one, or reading a name from it, gives more stand-ins, and
    calling raises the import error."""

    def __getattr__(cls, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return _stand_in(f"{cls.__qualname__}.{name}", cls._fxvm_message)

    def __call__(cls, *args, **kwargs):
        raise UnavailableError(cls._fxvm_message)

    def __repr__(cls):
        return f"<unavailable {cls.__qualname__}: {cls._fxvm_message}>"


def _stand_in(qualname, message):
    cls = _Unavailable(qualname.rpartition(".")[2], (), {"_fxvm_message": message})
    cls.__qualname__ = qualname
    return cls


class _UnavailableModule(types.ModuleType):
    """Stands for a package that needs compiled code, imported at the top of
    a library: its names are stand-ins (see ``_Unavailable``)."""

    def __init__(self, name, message):
        super().__init__(name)
        self.__fxvm_message__ = message

    def __getattr__(self, attr):
        if attr in _MODULE_PROTOCOL:
            raise AttributeError(attr)
        return _stand_in(f"{self.__name__}.{attr}", self.__fxvm_message__)


# What the import system and `import *` probe on a module: a stand-in has none.
_MODULE_PROTOCOL = frozenset(("__path__", "__file__", "__all__", "__cached__", "__builtins__", "__getattr__"))


_import = builtins.__import__


def _defers(globals, cause):
    """Whether the importing code is the body of a module being loaded, in
    another package than the compiled module (a package's own imports of its
    compiled core fail as they would in CPython without it)."""
    spec = globals.get("__spec__") if globals else None
    if not getattr(spec, "_initializing", False):
        return False
    importer = (globals.get("__name__") or "").partition(".")[0]
    return importer != (cause.name or "").partition(".")[0]


def __import__(name, globals=None, locals=None, fromlist=(), level=0):
    try:
        return _import(name, globals, locals, fromlist, level)
    except ImportError as error:
        cause = _compiled_cause(error)
        if cause is None or level != 0 or not _defers(globals, cause):
            raise
        message = f"{name} could not be imported: {cause}"
        # `import a.b` binds `a`; `from a import x` reads `x` from the result.
        module = _UnavailableModule(name if fromlist else name.partition(".")[0], message)
        return module


builtins.__import__ = __import__
_fxvm_metadata.install()
sys.meta_path.append(CompiledExtensionFinder)
