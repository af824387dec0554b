"""fxvm's own Python API: ``global_function`` (capture a function or module
once, replay the captured graph afterwards) and ``typing`` for its input
signatures. ``torch.compile`` runs on the same machinery."""

from fxvm import typing
from fxvm._compile import CompiledFunction, SignatureError, global_function, profile

__all__ = ["CompiledFunction", "SignatureError", "global_function", "profile", "typing"]
