"""``torch.fx._pytree``: flattening call arguments against a known spec."""

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec):
    """The leaves of ``pytree`` in the order of ``spec``: sequences are read by
    position and dicts by the spec's keys, so a list matches a tuple spec."""
    if spec.is_leaf():
        return [pytree]
    if isinstance(pytree, dict):
        children = [pytree[k] for k in spec.context]
    else:
        children = [pytree[i] for i in range(spec.num_children)]
    leaves = []
    for child, child_spec in zip(children, spec.children_specs):
        leaves += tree_flatten_spec(child, child_spec)
    return leaves
