"""``torch.fx.node``: the ``Node`` class (native, in ``torch._C._fx``) and the
helpers that walk node arguments."""

import operator
import typing

import torch

# PyTorch's torch.fx.node defines these helpers; they are native here.
from torch._C._fx import (
    Node,
    _format_arg,  # noqa: F401
    _get_qualified_name,  # noqa: F401
    _type_repr,  # noqa: F401
    map_aggregate,
    map_arg,
)

__all__ = ["Node", "map_arg", "map_aggregate", "has_side_effect"]

BaseArgumentTypes = typing.Union[str, int, float, bool, complex, torch.dtype, torch.Tensor, torch.device]
Target = typing.Union[typing.Callable[..., typing.Any], str]
Argument = typing.Optional[typing.Any]

# Calls that dead-code elimination must keep although nothing uses their value.
_side_effectful_functions = {operator.setitem}
if hasattr(torch, "_assert"):
    _side_effectful_functions.add(torch._assert)

# Random ops change the generator's state, so they are never dead.
_RANDOM_FUNCTIONS = {
    getattr(torch, name)
    for name in (
        "rand",
        "randn",
        "randint",
        "randperm",
        "rand_like",
        "randn_like",
        "randint_like",
        "normal",
        "poisson",
        "bernoulli",
        "multinomial",
    )
    if hasattr(torch, name)
}


def has_side_effect(fn):
    """Registers ``fn`` so that ``Graph.eliminate_dead_code`` keeps its calls."""
    _side_effectful_functions.add(fn)
    return fn


def _is_impure_function(target, impure_random=True):
    try:
        return target in _RANDOM_FUNCTIONS or target in _side_effectful_functions
    except TypeError:  # unhashable targets are never registered
        return False
