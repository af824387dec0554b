"""torch.testing: comparing tensors as PyTorch's test suites do, and random
tensors to test with."""

from torch.testing._comparison import assert_close
from torch.testing._creation import make_tensor

__all__ = ["assert_close", "make_tensor"]
