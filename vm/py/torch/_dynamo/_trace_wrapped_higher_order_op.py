"""``TransformGetItemToIndex``: a mode under which ``tensor[i]`` with int
and tensor indices is advanced indexing by tensors (as vmapped mask
functions need, transformers' ``masking_utils`` among them)."""

import torch
from torch.overrides import TorchFunctionMode
from torch.utils import _pytree as pytree

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.Tensor.__getitem__:
            tensor, index = args[0], args[1]
            if not isinstance(tensor, torch.Tensor):
                raise AssertionError(f"expected torch.Tensor, got {type(tensor)}")
            leaves = pytree.tree_leaves(index)
            if all(isinstance(x, (torch.Tensor, int)) for x in leaves):
                indices = tuple(torch.tensor(x) if isinstance(x, int) else x for x in leaves)
                return tensor[indices]
        return func(*args, **(kwargs or {}))
