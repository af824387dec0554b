"""Loads fxvm's built-in modules named inside the built-in ``torch._C``
(``torch._C._autograd``, ``torch._C._fx``…). ``torch._C`` is not a
package, so the import system cannot reach them by the usual submodule
import."""

import importlib.machinery
import importlib.util
import sys

from torch import _C


def load(name):
    """The built-in module ``name`` (``torch._C.<x>``), also set on ``torch._C``."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.machinery.BuiltinImporter.find_spec(name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        setattr(_C, name.rsplit(".", 1)[1], module)
    return module
