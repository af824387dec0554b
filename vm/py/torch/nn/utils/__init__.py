"""``torch.nn.utils``."""

from torch.nn.utils import rnn
