"""The parts of a tokenizer (models, normalizers, pre-tokenizers,
post-processors, decoders, trainers) as the JSON the ``tokenizers`` crate
reads and writes: each object is its JSON state; the native tokenizer
builds the real part from it."""

import json

__all__ = ["Component"]


def _show(value):
    """A value as the package's reprs show it (JSON-like strings and maps)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_show(k)}:{_show(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, Component):
        return repr(value)
    return repr(value)


class Component:
    """A tokenizer part: ``_state`` is its JSON object; subclasses build it
    from their constructor's arguments."""

    # The key naming the kind of part in its JSON ("type", or for trainers
    # the single outer key).
    _kinds = {}

    def __init__(self, state):
        object.__setattr__(self, "_state", state)

    @classmethod
    def _register(cls, name, subclass):
        cls._kinds[name] = subclass

    @classmethod
    def _without_settings(cls, name, module):
        """A kind of part that has no settings (its JSON is ``{"type": name}``)."""
        kind = type(
            name, (cls,), {"__init__": lambda self: Component.__init__(self, {"type": name}), "__module__": module}
        )
        cls._register(name, kind)
        return kind

    @classmethod
    def _from_json(cls, text):
        """The part a JSON text describes, as its Python class."""
        if text is None:
            return None
        state = json.loads(text)
        kind = cls._kinds.get(state.get("type"), cls)
        obj = kind.__new__(kind)
        Component.__init__(obj, state)
        return obj

    def _json(self):
        return json.dumps(self._state, ensure_ascii=False, separators=(",", ":"))

    def __getstate__(self):
        return self._json().encode()

    def __setstate__(self, state):
        object.__setattr__(self, "_state", json.loads(state))

    def __getattr__(self, name):
        state = object.__getattribute__(self, "_state")
        if name in state:
            return state[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name in self._state:
            self._state[name] = value
        else:
            object.__setattr__(self, name, value)

    def __repr__(self):
        fields = ", ".join(f"{k}={_show(v)}" for k, v in self._state.items() if k != "type")
        return f"{self._state.get('type', type(self).__name__)}({fields})"

    def __eq__(self, other):
        return isinstance(other, Component) and self._state == other._state


def state_of(part):
    """The JSON object of a part given as a Component (or already a dict)."""
    return part._state if isinstance(part, Component) else part
