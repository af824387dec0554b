"""``torch.fx.passes.shape_prop``: runs a GraphModule on example inputs and
records each node's tensor shape, dtype and stride in ``node.meta``."""

from typing import Any, NamedTuple, Optional

import torch
from torch.fx.interpreter import Interpreter
from torch.fx.node import map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    shape: torch.Size
    dtype: torch.dtype
    requires_grad: bool
    stride: tuple
    memory_format: Optional[Any]
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result, include_contiguity=True):
    memory_format = None
    if include_contiguity:
        for query_format in (torch.contiguous_format, torch.channels_last, torch.channels_last_3d):
            if result.is_contiguous(memory_format=query_format):
                memory_format = query_format
                break
    return TensorMetadata(
        result.shape, result.dtype, result.requires_grad, result.stride(), memory_format, result.is_quantized, {}
    )


class ShapeProp(Interpreter):
    """Executes the module node by node, storing ``TensorMetadata`` (for tensor
    results, nested as the result is) under ``node.meta['tensor_meta']`` and
    the result's type under ``node.meta['type']``."""

    def __init__(self, gm, fake_mode=None):
        super().__init__(gm)
        self.fake_mode = fake_mode

    def run_node(self, n):
        result = super().run_node(n)
        found_tensor = False

        def extract_tensor_meta(obj):
            nonlocal found_tensor
            if isinstance(obj, torch.Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract_tensor_meta)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args):
        """Runs the module on ``args``; returns its result."""
        return super().run(*args)
