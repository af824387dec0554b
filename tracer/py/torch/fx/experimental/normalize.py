"""Normalising call sites: arguments matched to signatures and written as
keywords (``NormalizeArgs``), and ``torch.add``-style calls spelled as the
operators they are (``NormalizeOperators``)."""

import operator

import torch
import torch.fx as fx
from torch.fx import Transformer
from torch.fx.node import map_aggregate
from torch.fx.operator_schemas import create_type_hint, normalize_function, normalize_module

from .schema_type_annotation import AnnotateTypesWithSchema

__all__ = ["NormalizeArgs", "NormalizeOperators"]


class NormalizeArgs(Transformer):
    """Rewrites each call's arguments to match its target's signature, with
    defaults filled in, as keywords in positional order (or keeping the
    positional ones when ``normalize_to_only_use_kwargs`` is false). Calls
    whose target cannot be matched (varargs, ambiguous overloads) stay."""

    def __init__(self, module, normalize_to_only_use_kwargs=True):
        super().__init__(module)
        self.node_map = {}
        self.normalize_to_only_use_kwargs = normalize_to_only_use_kwargs

    def run_node(self, n):
        args, kwargs = self.fetch_args_kwargs_from_env(n)

        def get_type(arg):
            # torch.fx reads the type of the node being normalised here.
            return n.meta.get("type") if isinstance(arg, fx.Node) else type(arg)

        arg_types = tuple(create_type_hint(t) for t in map_aggregate(n.args, get_type))
        kwarg_types = {k: get_type(v) for k, v in kwargs.items()}
        if n.op == "call_function":
            out = self.call_function(n.target, args, kwargs, arg_types, kwarg_types)
        else:
            out = super().run_node(n)
        if n.op != "output":
            self.node_map[out] = n
            out.node.meta = n.meta
            out.node.type = n.type
        return out

    def call_function(self, target, args, kwargs, arg_types=None, kwarg_types=None):
        assert callable(target), f"Expected callable target, got {type(target)}"
        normalized = normalize_function(target, args, kwargs, arg_types, kwarg_types, self.normalize_to_only_use_kwargs)
        if normalized:
            new_args, new_kwargs = normalized
            return self.tracer.create_proxy("call_function", target, new_args, new_kwargs)
        return super().call_function(target, args, kwargs)

    def call_module(self, target, args, kwargs):
        assert isinstance(target, str), f"Expected str target, got {type(target)}"
        normalized = normalize_module(self.module, target, args, kwargs, self.normalize_to_only_use_kwargs)
        if normalized:
            return super().call_module(target, *normalized)
        return super().call_module(target, args, kwargs)


class NormalizeOperators(AnnotateTypesWithSchema):
    """Spells two-argument ``torch.add``/``mul``/``sub``/``div``/
    ``floor_divide``/``remainder`` and comparisons as the Python operators
    (``operator.add`` …) they mean on tensors."""

    binary_magic_method_remap = {
        torch.add: operator.add,
        torch.mul: operator.mul,
        torch.sub: operator.sub,
        torch.div: operator.truediv,
        torch.floor_divide: operator.floordiv,
        torch.remainder: operator.mod,
        torch.eq: operator.eq,
        torch.ne: operator.ne,
        torch.lt: operator.lt,
        torch.le: operator.le,
        torch.gt: operator.gt,
        torch.ge: operator.ge,
    }

    def call_function(self, target, args, kwargs):
        assert callable(target), f"Expected callable target, got {type(target)}"
        if target in self.binary_magic_method_remap and len(args) == 2:
            return super().call_function(self.binary_magic_method_remap[target], args, {})
        return super().call_function(target, args, kwargs)
