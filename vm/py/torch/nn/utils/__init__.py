"""``torch.nn.utils``."""
