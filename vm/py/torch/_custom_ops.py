"""``torch._custom_ops``: PyTorch's earlier custom-operator API, kept for
code that still imports it; each call maps onto ``torch.library``."""

from torch import library

__all__ = ["custom_op", "impl", "impl_abstract"]


def custom_op(qualname, func_or_schema=None):
    """Declares ``ns::name`` from a schema string, or from an annotated
    function (used as a decorator)."""

    def declare(func):
        schema = library.infer_schema(func, mutates_args=())
        library.define(qualname, schema)
        return func

    if isinstance(func_or_schema, str):
        library.define(qualname, func_or_schema)
        return None
    return declare if func_or_schema is None else declare(func_or_schema)


def impl(qualname, *, device_types=("cpu", "cuda"), func=None):
    """The kernel of ``qualname`` for ``device_types``."""
    return library.impl(qualname, device_types, func)


def impl_abstract(qualname, *, func=None):
    """The fake (meta) implementation of ``qualname``."""
    return library.register_fake(qualname, func)
