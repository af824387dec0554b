"""``torch.utils._pytree``: flattening nested containers into leaves and a
``TreeSpec`` that rebuilds them. Containers are the registered node types:
tuple, list, dict, OrderedDict, defaultdict, deque and named tuples, plus
whatever libraries register (transformers registers its model outputs);
everything else is a leaf."""

import dataclasses
from collections import OrderedDict, defaultdict, deque, namedtuple

__all__ = [
    "LeafSpec",
    "MappingKey",
    "SequenceKey",
    "GetAttrKey",
    "NodeDef",
    "SUPPORTED_NODES",
    "TreeSpec",
    "is_namedtuple",
    "is_namedtuple_class",
    "is_namedtuple_instance",
    "keystr",
    "key_get",
    "register_dataclass",
    "register_pytree_node",
    "tree_all",
    "tree_all_only",
    "tree_any",
    "tree_any_only",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_is_leaf",
    "tree_iter",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_",
    "tree_map_only",
    "tree_map_only_",
    "tree_map_with_path",
    "tree_structure",
    "tree_unflatten",
    "treespec_pprint",
]


NodeDef = namedtuple("NodeDef", ["type", "flatten_fn", "unflatten_fn", "flatten_with_keys_fn"])

# type -> NodeDef; `namedtuple` stands for every named tuple class.
SUPPORTED_NODES = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}


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
        return isinstance(other, TreeSpec) and (self.type, self.context, self.children_specs) == (
            other.type,
            other.context,
            other.children_specs,
        )

    def __hash__(self):
        # Hashable as PyTorch's frozen dataclass is (GraphModules key their
        # constants by it); a dict's key list hashes as a tuple.
        context = tuple(self.context) if isinstance(self.context, list) else self.context
        return hash((self.type, context, tuple(self.children_specs)))

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def children(self):
        return list(self.children_specs)

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

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

    @property
    def num_nodes(self):
        return 1

    def __repr__(self, indent=0):
        return "*"


_LEAF_SPEC = LeafSpec()


def treespec_pprint(treespec):
    """The spec drawn with its leaves as ``*`` (``repr`` of a tree of stars)."""
    return repr(tree_unflatten([_Star()] * treespec.num_leaves, treespec))


class _Star:
    def __repr__(self):
        return "*"


# Key paths: how `tree_flatten_with_path` names where each leaf sits.


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    key: object

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as the Python that reads it: ``['a'][1].b``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    for k in kp:
        obj = k.get(obj)
    return obj


# Registration.


def register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
):
    """Makes ``cls`` a container: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x``."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _private_register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    to_str_fn=None,
    maybe_from_str_fn=None,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
):
    """The older spelling of ``register_pytree_node`` (PyTorch warns)."""
    import warnings

    warnings.warn(
        "torch.utils._pytree._register_pytree_node is deprecated. Please use torch.utils._pytree.register_pytree_node instead.",
        FutureWarning,
        stacklevel=2,
    )
    _private_register_pytree_node(
        cls,
        flatten_fn,
        unflatten_fn,
        serialized_type_name=serialized_type_name,
        flatten_with_keys_fn=flatten_with_keys_fn,
    )


def _private_register_pytree_node(
    cls,
    flatten_fn,
    unflatten_fn,
    *,
    serialized_type_name=None,
    to_dumpable_context=None,
    from_dumpable_context=None,
    flatten_with_keys_fn=None,
):
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
    if serialized_type_name is None:
        serialized_type_name = f"{cls.__module__}.{cls.__qualname__}"
    SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def _deregister_pytree_node(cls):
    SUPPORTED_NODES.pop(cls, None)


def register_dataclass(cls, *, field_names=None, drop_field_names=None):
    """Makes the dataclass ``cls`` a container of its fields (``field_names``,
    by default every field with ``init=True`` not in ``drop_field_names``)."""
    if field_names is None:
        if not dataclasses.is_dataclass(cls):
            raise ValueError(
                f"field_names must be specified with a list of all fields used to initialize {cls}, as it is not a dataclass."
            )
        dropped = set(drop_field_names or ())
        field_names = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in dropped]
    names = list(field_names)

    def flatten(obj):
        return [getattr(obj, n) for n in names], names

    def unflatten(values, context):
        return cls(**dict(zip(context, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(n), getattr(obj, n)) for n in names], names

    register_pytree_node(cls, flatten, unflatten, flatten_with_keys_fn=flatten_with_keys)


# The built-in containers.


def is_namedtuple_class(cls):
    return (
        isinstance(cls, type)
        and issubclass(cls, tuple)
        and isinstance(getattr(cls, "_fields", None), tuple)
        and callable(getattr(cls, "_make", None))
    )


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def _tuple_flatten(d):
    return list(d), None


def _tuple_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return list(d), None


def _list_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], list(d.keys())


def _ordereddict_unflatten(values, context):
    return OrderedDict(zip(context, values))


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_flatten_with_keys(d):
    return [(MappingKey(k), v) for k, v in d.items()], [d.default_factory, list(d.keys())]


def _defaultdict_unflatten(values, context):
    factory, keys = context
    return defaultdict(factory, zip(keys, values))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_flatten_with_keys(d):
    return [(SequenceKey(i), v) for i, v in enumerate(d)], d.maxlen


def _deque_unflatten(values, context):
    return deque(values, maxlen=context)


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_flatten_with_keys(d):
    return [(GetAttrKey(f), v) for f, v in zip(d._fields, d)], type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


for _cls, _flatten, _unflatten, _with_keys, _name in (
    (tuple, _tuple_flatten, _tuple_unflatten, _tuple_flatten_with_keys, "builtins.tuple"),
    (list, _list_flatten, _list_unflatten, _list_flatten_with_keys, "builtins.list"),
    (dict, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys, "builtins.dict"),
    (namedtuple, _namedtuple_flatten, _namedtuple_unflatten, _namedtuple_flatten_with_keys, "collections.namedtuple"),
    (
        OrderedDict,
        _ordereddict_flatten,
        _ordereddict_unflatten,
        _ordereddict_flatten_with_keys,
        "collections.OrderedDict",
    ),
    (
        defaultdict,
        _defaultdict_flatten,
        _defaultdict_unflatten,
        _defaultdict_flatten_with_keys,
        "collections.defaultdict",
    ),
    (deque, _deque_flatten, _deque_unflatten, _deque_flatten_with_keys, "collections.deque"),
):
    _private_register_pytree_node(
        _cls, _flatten, _unflatten, serialized_type_name=_name, flatten_with_keys_fn=_with_keys
    )
del _cls, _flatten, _unflatten, _with_keys, _name


def _get_node_type(tree):
    return namedtuple if is_namedtuple_instance(tree) else type(tree)


def _is_leaf(tree, is_leaf=None):
    return (is_leaf is not None and is_leaf(tree)) or _get_node_type(tree) not in SUPPORTED_NODES


def tree_is_leaf(tree, is_leaf=None):
    return _is_leaf(tree, is_leaf)


# Flattening.


def tree_flatten(tree, is_leaf=None):
    """(leaves, spec) of ``tree``."""
    leaves = []
    spec = _flatten(tree, is_leaf, leaves)
    return leaves, spec


def _flatten(tree, is_leaf, leaves):
    if _is_leaf(tree, is_leaf):
        leaves.append(tree)
        return _LEAF_SPEC
    node_type = _get_node_type(tree)
    children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
    return TreeSpec(node_type, context, [_flatten(child, is_leaf, leaves) for child in children])


def tree_unflatten(leaves, treespec):
    """Rebuilds the tree ``treespec`` describes from ``leaves``."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(
            f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance of PyTreeSpec but got item of type {type(treespec)}."
        )
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(
            f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec refers to a pytree that holds {treespec.num_leaves} items ({treespec})."
        )
    return _unflatten(iter(leaves), treespec)


def _unflatten(it, spec):
    if spec.is_leaf():
        return next(it)
    children = [_unflatten(it, c) for c in spec.children_specs]
    return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)


def tree_iter(tree, is_leaf=None):
    """The leaves of ``tree``, lazily."""
    if _is_leaf(tree, is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[_get_node_type(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf)


def tree_leaves(tree, is_leaf=None):
    return list(tree_iter(tree, is_leaf))


def arg_tree_leaves(*args, **kwargs):
    """The leaves of ``(args, kwargs)`` as a call passes them (kwargs only if any)."""
    leaves = tree_leaves(list(args))
    if kwargs:
        leaves += tree_leaves(kwargs)
    return leaves


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def _flatten_up_to(spec, tree):
    """The subtrees of ``tree`` at the leaves of ``spec`` (a tree of the same
    structure, possibly deeper)."""
    if spec.is_leaf():
        return [tree]
    node_type = _get_node_type(tree)
    if node_type is not spec.type:
        raise ValueError(f"Node type mismatch; expected {spec.type}, but got {node_type}.")
    children, context = SUPPORTED_NODES[node_type].flatten_fn(tree)
    if len(children) != spec.num_children:
        raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got {len(children)}.")
    if context != spec.context:
        raise ValueError(f"Node context mismatch for custom node type {spec.type}.")
    out = []
    for child, child_spec in zip(children, spec.children_specs):
        out += _flatten_up_to(child_spec, child)
    return out


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree`` with ``func`` applied to each leaf (with the matching
    subtrees of ``rests`` as further arguments)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat_rests = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *flat_rests)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    """Calls ``func`` on each leaf for its effect; returns ``tree``."""
    leaves, spec = tree_flatten(tree, is_leaf)
    flat_rests = [_flatten_up_to(spec, r) for r in rests]
    for xs in zip(leaves, *flat_rests):
        func(*xs)
    return tree


def map_only(type_or_types):
    """``fn`` turned into one that maps only leaves of the given type(s)."""

    def wrapper(func):
        def wrapped(x):
            return func(x) if isinstance(x, type_or_types) else x

        return wrapped

    return wrapper


def tree_map_only(type_or_types, func, tree, is_leaf=None):
    return tree_map(map_only(type_or_types)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types, func, tree, is_leaf=None):
    return tree_map_(map_only(type_or_types)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, pred, tree, is_leaf=None):
    return all(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


def tree_any_only(type_or_types, pred, tree, is_leaf=None):
    return any(pred(x) for x in tree_iter(tree, is_leaf) if isinstance(x, type_or_types))


# Key paths.


def _with_keys(tree, is_leaf, path, out):
    if _is_leaf(tree, is_leaf):
        out.append((path, tree))
        return _LEAF_SPEC
    node_type = _get_node_type(tree)
    node = SUPPORTED_NODES[node_type]
    _, context = node.flatten_fn(tree)
    if node.flatten_with_keys_fn is not None:
        keyed, _ = node.flatten_with_keys_fn(tree)
    else:
        children, _ = node.flatten_fn(tree)
        keyed = [(SequenceKey(i), c) for i, c in enumerate(children)]
    return TreeSpec(node_type, context, [_with_keys(child, is_leaf, path + (key,), out) for key, child in keyed])


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key path, leaf)], spec) of ``tree``."""
    out = []
    spec = _with_keys(tree, is_leaf, (), out)
    return out, spec


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    keyed, spec = tree_flatten_with_path(tree, is_leaf)
    flat_rests = [_flatten_up_to(spec, r) for r in rests]
    return tree_unflatten([func(kp, x, *xs) for (kp, x), *xs in zip(keyed, *flat_rests)], spec)
