"""``nn.Parameter``: a Tensor that a Module registers as a parameter."""

import torch


class Parameter(torch.Tensor):
    """A tensor marked as a module parameter (``requires_grad=True`` by default)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = torch.empty(0)
        return torch.Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (Parameter, (self.detach(), self.requires_grad))


class Buffer(torch.Tensor):
    """Marks a tensor assigned to a Module attribute as a buffer."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = torch.empty(0)
        t = torch.Tensor._make_subclass(cls, data, False)
        t.persistent = persistent
        return t
