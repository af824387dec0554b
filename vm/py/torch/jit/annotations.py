"""``torch.jit.annotations``: the annotation helpers TorchScript reads;
eager code evaluates them once, when a function is defined."""

from typing import Any, Callable, Dict, List, Optional, Tuple, Union  # noqa: F401 (re-exported as PyTorch does)

__all__ = [
    "Any",
    "BroadcastingList1",
    "BroadcastingList2",
    "BroadcastingList3",
    "Callable",
    "Dict",
    "List",
    "Optional",
    "Tuple",
    "Union",
]


class BroadcastingListCls:
    """``BroadcastingList2[int]``: an int or a list of two ints, to
    TorchScript; subscripting gives nothing, as in PyTorch."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingListCls()
BroadcastingList2 = BroadcastingListCls()
BroadcastingList3 = BroadcastingListCls()
