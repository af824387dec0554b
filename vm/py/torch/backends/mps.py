"""``torch.backends.mps``: no Metal device."""


def is_available():
    return False


def is_built():
    return False
