"""``torch.fx.passes``: graph passes."""
