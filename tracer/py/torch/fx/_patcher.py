"""The patcher of a trace and the code-object rewrite, both native (the
``torch._C._fx_patches`` module of the ``patches`` crate)."""

from torch._native import load as _load

_patches = _load("torch._C._fx_patches")
Patcher = _patches.Patcher
Wrappers = _patches.Wrappers
public_callable_ids = _patches.public_callable_ids
patch_function_args = _patches.patch_function_args

__all__ = ["Patcher", "Wrappers", "patch_function_args", "public_callable_ids"]
