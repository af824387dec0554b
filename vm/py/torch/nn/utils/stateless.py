"""``functional_call``: a module called with some of its parameters and
buffers replaced by given tensors (by dotted name), restored afterwards —
what meta-learning and ``torch.func`` code call a model through."""

import contextlib

__all__ = ["functional_call"]


def _owner(module, name):
    """The submodule holding ``name`` and the attribute's last name."""
    *path, attr = name.split(".")
    for part in path:
        module = getattr(module, part)
    return module, attr


def _swap(module, name, value):
    """Sets ``name`` to ``value`` where it lives (parameter, buffer or
    attribute) and returns what was there."""
    owner, attr = _owner(module, name)
    for table in (owner._parameters, owner._buffers):
        if attr in table:
            old = table[attr]
            table[attr] = value
            return old
    old = getattr(owner, attr, None)
    # Plain attributes go through object.__setattr__: a Module's own
    # __setattr__ would refuse a tensor where a parameter was.
    object.__setattr__(owner, attr, value)
    return old


def _merge(dicts):
    if isinstance(dicts, dict):
        return dicts
    merged, repeated = {}, []
    for d in dicts:
        for key, value in d.items():
            if key in merged and key not in repeated:
                repeated.append(key)
            merged[key] = value
    if repeated:
        raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of functional call is ambiguous")
    return merged


@contextlib.contextmanager
def _reparametrize_module(module, values, tie_weights=True, strict=False):
    if tie_weights:
        # A replaced tensor that other names share (tied weights) is replaced there too.
        named = dict(module.named_parameters(remove_duplicate=False))
        named.update(dict(module.named_buffers(remove_duplicate=False)))
        by_id = {}
        for name, t in named.items():
            by_id.setdefault(id(t), []).append(name)
        tied = {}
        for name, value in values.items():
            for other in by_id.get(id(named.get(name)), []) if name in named else []:
                if other not in values:
                    tied[other] = value
        values = {**values, **tied}
    if strict:
        expected = set(dict(module.named_parameters())) | set(dict(module.named_buffers()))
        missing = sorted(expected - set(values))
        unexpected = sorted(set(values) - expected)
        errors = []
        if unexpected:
            errors.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            errors.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {module._get_name()}:\n\t" + "\n\t".join(errors))
    saved = {}
    try:
        for name, value in values.items():
            saved[name] = _swap(module, name, value)
        yield
    finally:
        for name, old in saved.items():
            _swap(module, name, old)


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """``module(*args, **kwargs)`` with the named parameters and buffers
    replaced by the given tensors for this call only."""
    values = _merge(parameter_and_buffer_dicts)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, values, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
