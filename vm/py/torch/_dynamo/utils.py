"""``torch._dynamo.utils``: the helpers model libraries import."""

__all__ = ["is_compile_supported"]


def is_compile_supported(device_type):
    """Whether compiled code runs on ``device_type``: libraries ask it to pick
    their pure-PyTorch fallbacks (torchvision's ``roi_align``), which fxvm
    runs on the CPU, its only device."""
    return device_type == "cpu"
