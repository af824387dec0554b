"""Loads ``torch._C._fx``, the native IR. It is a built-in module inside the
built-in ``torch._C``, which is not a package, so the import system cannot
reach it by the usual submodule import."""

import importlib.machinery
import importlib.util
import sys

import torch


def _load():
    name = "torch._C._fx"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.machinery.BuiltinImporter.find_spec(name)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        torch._C._fx = module
    return module


fx = _load()
