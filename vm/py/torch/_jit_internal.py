"""What PyTorch keeps in ``torch._jit_internal`` that other modules read:
``boolean_dispatched``, the functions that pick one of two implementations
by a boolean argument (``F.max_pool2d`` by ``return_indices``)."""

import weakref

# fn -> {"if_true", "if_false", "index", "default", "arg_name"}, as PyTorch's.
boolean_dispatched = weakref.WeakKeyDictionary()
