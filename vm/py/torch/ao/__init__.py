"""``torch.ao``: PyTorch's architecture-optimisation tools (quantization,
pruning). fxvm runs float models; see ``torch.ao.quantization``."""
