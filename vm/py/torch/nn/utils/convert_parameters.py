"""Parameters as one flat vector and back, as ``torch.nn.utils`` has them."""

import torch

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    return torch.cat([param.view(-1) for param in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, torch.Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {torch.typename(vec)}")
    pointer = 0
    for param in parameters:
        count = param.numel()
        param.data = vec[pointer : pointer + count].view_as(param).data
        pointer += count
