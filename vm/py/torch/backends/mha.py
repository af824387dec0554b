"""``torch.backends.mha``: the switch for the Transformer layers' fused
inference path, which changes what an encoder returns at padded positions."""

_fastpath_enabled = True


def get_fastpath_enabled():
    return _fastpath_enabled


def set_fastpath_enabled(value):
    global _fastpath_enabled
    _fastpath_enabled = bool(value)
