"""``torch.utils``: ``data`` (datasets, samplers, ``DataLoader``) and the
pytree helpers ``torch.fx`` uses."""


def __getattr__(name):
    # `torch.utils.data` is reachable after `import torch`, as in PyTorch.
    if name == "data":
        import importlib

        return importlib.import_module("torch.utils.data")
    raise AttributeError(f"module 'torch.utils' has no attribute '{name}'")
