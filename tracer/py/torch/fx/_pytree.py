"""``torch.fx._pytree``: flattening call arguments against a known spec."""

from torch.utils._pytree import tree_flatten

__all__ = ["tree_flatten_spec"]


def tree_flatten_spec(pytree, spec):
    """The leaves of ``pytree``, which must have the structure ``spec``."""
    leaves, actual = tree_flatten(pytree)
    if actual != spec:
        raise RuntimeError(f"Tried to flatten {pytree} with spec {spec}, but its structure is {actual}")
    return leaves
