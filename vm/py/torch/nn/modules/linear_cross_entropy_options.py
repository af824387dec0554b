"""Options of ``F.linear_cross_entropy``'s chunked path. fxvm computes the
loss one way; the options are accepted and kept, as configuration."""

import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    allow_retain_graph: bool = False
    batch_chunk_size: object = None
    chunking_method: str = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None
