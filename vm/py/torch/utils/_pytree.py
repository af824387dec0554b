"""``torch.utils._pytree``: flattening nested tuples, lists and dicts into
leaves and a ``TreeSpec`` that rebuilds them."""

from collections import OrderedDict, namedtuple

__all__ = ["TreeSpec", "LeafSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_leaves"]


class TreeSpec:
    """The structure of a flattened tree: node type, context and children."""

    def __init__(self, type, context, children_specs):
        self.type = type
        self.context = context
        self.children_specs = children_specs
        self.num_leaves = sum(c.num_leaves for c in children_specs)

    def is_leaf(self):
        return False

    def __eq__(self, other):
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs) == (other.type, other.context, other.children_specs)

    def __hash__(self):
        # Hashable as PyTorch's frozen dataclass is (GraphModules key their
        # constants by it); a dict's key list hashes as a tuple.
        context = tuple(self.context) if isinstance(self.context, list) else self.context
        return hash((self.type, context, tuple(self.children_specs)))

    @property
    def num_children(self):
        return len(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def children(self):
        return list(self.children_specs)

    def __repr__(self, indent=0):
        text = f"TreeSpec({self.type.__name__}, {self.context}, ["
        if self.children_specs:
            indent += 2
            text += self.children_specs[0].__repr__(indent)
            text += "," if len(self.children_specs) > 1 else ""
            text += ",".join("\n" + " " * indent + c.__repr__(indent) for c in self.children_specs[1:])
        return text + "])"


class LeafSpec(TreeSpec):
    def __init__(self):
        self.type = None
        self.context = None
        self.children_specs = []
        self.num_leaves = 1

    def is_leaf(self):
        return True

    def __repr__(self, indent=0):
        return "*"


def _children(tree):
    """(children, context) of a container node, or None for a leaf."""
    t = type(tree)
    if t in (tuple, list):
        return list(tree), None
    if t in (dict, OrderedDict):
        return list(tree.values()), list(tree.keys())
    if isinstance(tree, tuple) and hasattr(t, "_fields"):
        return list(tree), t
    return None


def _rebuild(spec, children):
    if spec.type in (tuple, list):
        return spec.type(children)
    if spec.type in (dict, OrderedDict):
        return spec.type(zip(spec.context, children))
    if spec.type is namedtuple:
        return spec.context(*children)
    raise TypeError(f"cannot unflatten into {spec.type}")


def tree_flatten(tree):
    """(leaves, spec) of ``tree``."""
    node = _children(tree)
    if node is None:
        return [tree], LeafSpec()
    children, context = node
    leaves, specs = [], []
    for child in children:
        child_leaves, child_spec = tree_flatten(child)
        leaves += child_leaves
        specs.append(child_spec)
    kind = namedtuple if isinstance(context, type) else type(tree)
    return leaves, TreeSpec(kind, context, specs)


def tree_unflatten(leaves, spec):
    """Rebuilds the tree ``spec`` describes from ``leaves``."""
    leaves = list(leaves)
    if len(leaves) != spec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a pytree that holds {spec.num_leaves} items ({spec}).")
    return _unflatten(iter(leaves), spec)


def _unflatten(it, spec):
    if spec.is_leaf():
        return next(it)
    return _rebuild(spec, [_unflatten(it, c) for c in spec.children_specs])


def arg_tree_leaves(*args, **kwargs):
    """The leaves of ``(args, kwargs)`` as a call passes them (kwargs only if any)."""
    leaves = tree_leaves(list(args))
    if kwargs:
        leaves += tree_leaves(kwargs)
    return leaves


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)
