"""``torch.accelerator``: fxvm runs on the CPU only, so there is none."""

__all__ = ["current_accelerator", "device_count", "is_available"]


def is_available():
    return False


def current_accelerator(check_available=False):
    return None


def device_count():
    return 0
