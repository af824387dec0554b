"""``torch.autograd.graph``: the class of ``grad_fn`` objects, and the
saved-tensor hook contexts."""

from torch._native import load as _load

Node = _load("torch._C._autograd").Node

__all__ = ["Node", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]


class saved_tensors_hooks:
    """``pack_hook(tensor)`` when the graph saves a tensor for backward and
    ``unpack_hook(packed)`` when backward reads it. fxvm's engine keeps saved
    tensors as they are, so entering this context raises rather than
    silently ignoring the hooks."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        raise NotImplementedError(
            "fxvm does not run saved tensor hooks (torch.autograd.graph.saved_tensors_hooks): saved tensors stay as they are"
        )

    def __exit__(self, *args):
        return None


class save_on_cpu(saved_tensors_hooks):
    """Saves tensors for backward on the CPU: where fxvm keeps every tensor
    already, so the saved tensors stay as they are."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(lambda tensor: tensor, lambda tensor: tensor)
        self.pin_memory = pin_memory
        self.device_type = device_type

    def __enter__(self):
        return self


class disable_saved_tensors_hooks:
    """Forbids saved-tensor hooks inside the context (fxvm runs none)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        return self

    def __exit__(self, *args):
        return None
