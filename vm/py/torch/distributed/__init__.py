"""``torch.distributed`` on one process: fxvm has no process groups or
collective backends, so ``is_available()`` is False (libraries then take
their single-process path); the queries answer as PyTorch does before
``init_process_group``, which raises, naming what is missing."""

__all__ = [
    "Backend",
    "ReduceOp",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_available",
    "is_initialized",
]

_NOT_INITIALIZED = "Default process group has not been initialized, please make sure to call init_process_group."


def is_available():
    """Whether collective communication can run: not in fxvm."""
    return False


def is_initialized():
    return False


def is_torchelastic_launched():
    return False


class ReduceOp:
    """How collectives combine values (names only: nothing runs them)."""

    SUM = "SUM"
    AVG = "AVG"
    PRODUCT = "PRODUCT"
    MIN = "MIN"
    MAX = "MAX"
    BAND = "BAND"
    BOR = "BOR"
    BXOR = "BXOR"
    PREMUL_SUM = "PREMUL_SUM"


class Backend(str):
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"


class group:
    WORLD = None


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, **kwargs):
    raise RuntimeError("torch.distributed is not available in fxvm: it runs one process, with no collective backend")


def _uninitialized(*args, **kwargs):
    raise ValueError(_NOT_INITIALIZED)


get_rank = get_world_size = destroy_process_group = barrier = _uninitialized
all_reduce = all_gather = broadcast = reduce = gather = scatter = _uninitialized
