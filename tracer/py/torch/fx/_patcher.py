"""The patcher of a trace and the code-object rewrite, both native (the
``torch._C._fx_patches`` module of the ``patches`` crate)."""

from torch.fx._native import load as _load

_patches = _load("torch._C._fx_patches")
Patcher = _patches.Patcher
patch_function_args = _patches.patch_function_args

__all__ = ["Patcher", "patch_function_args"]
