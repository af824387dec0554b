"""``torch._dynamo.source``: where a symbolic value comes from; a constant
source is named by the caller (its name decides the symbol's number)."""

__all__ = ["ConstantSource"]


class ConstantSource:
    def __init__(self, source_name):
        self.source_name = source_name

    @property
    def name(self):
        return self.source_name

    def __repr__(self):
        return f"ConstantSource(source_name={self.source_name!r})"
