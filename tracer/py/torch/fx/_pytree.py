"""``torch.fx._pytree``: flattening call arguments against a known spec."""

from collections import OrderedDict

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec):
    """The leaves of ``pytree`` in the order of ``spec``: sequences are read by
    position and dicts (the spec's type) by the spec's keys, so a list matches a tuple spec."""
    if spec.is_leaf():
        return [pytree]
    # By the spec's type, not the value's: while re-tracing saved code the
    # value is a Proxy that only the spec describes.
    if spec.type in (dict, OrderedDict):
        children = [pytree[k] for k in spec.context]
    else:
        children = [pytree[i] for i in range(spec.num_children)]
    leaves = []
    for child, child_spec in zip(children, spec.children_specs):
        leaves += tree_flatten_spec(child, child_spec)
    return leaves
