"""``torch.backends.cudnn``: the flags scripts set, kept; no cuDNN is present."""

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def is_available():
    return False


def version():
    return None
