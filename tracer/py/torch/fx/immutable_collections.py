"""Lists and dicts that node arguments are stored as: reading works as usual,
changing one raises, so that ``node.users`` can never go stale."""

__all__ = ["immutable_list", "immutable_dict"]

_HOW_TO_CHANGE = """If you are attempting to modify the kwargs or args of a torch.fx.Node object,
instead create a new copy of it and assign the copy to the node:

    new_args = ...  # copy and mutate args
    node.args = new_args"""


def _refuse(self, *args, **kwargs):
    raise TypeError(f"{type(self).__name__!r} object does not support mutation. {_HOW_TO_CHANGE}")


class immutable_list(list):
    """An immutable version of :class:`list`."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __hash__(self):
        return hash(tuple(self))

    def __reduce__(self):
        return (type(self), (tuple(self),))


class immutable_dict(dict):
    """An immutable version of :class:`dict`."""

    __delitem__ = __ior__ = __setitem__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __hash__(self):
        return hash(frozenset(self.items()))

    def __reduce__(self):
        return (type(self), (tuple(self.items()),))
