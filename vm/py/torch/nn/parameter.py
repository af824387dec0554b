"""``nn.Parameter``: a Tensor that a Module registers as a parameter."""

import collections

import torch
from torch._utils import _rebuild_parameter


class Parameter(torch.Tensor):
    """A tensor marked as a module parameter (``requires_grad=True`` by default)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = torch.empty(0)
        return torch.Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        # PyTorch's: the data cloned, without the gradient or attributes.
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(memory_format=torch.preserve_format), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self.requires_grad, collections.OrderedDict()))


class Buffer(torch.Tensor):
    """Marks a tensor assigned to a Module attribute as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = torch.empty(0)
        t = torch.Tensor._make_subclass(cls, data, False)
        t.persistent = persistent
        return t
