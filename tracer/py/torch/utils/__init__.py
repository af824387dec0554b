"""``torch.utils``: helpers shared by ``torch.fx``."""
