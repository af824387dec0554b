"""``numpy.random``: the legacy ``RandomState`` API (and the module-level
functions on its global instance) with numpy's exact MT19937 streams."""

from numpy.random.mtrand import (
    RandomState,
    bytes,
    choice,
    exponential,
    get_state,
    normal,
    permutation,
    rand,
    randint,
    randn,
    random,
    random_integers,
    random_sample,
    ranf,
    sample,
    seed,
    set_state,
    shuffle,
    standard_exponential,
    standard_normal,
    uniform,
)


def default_rng(seed=None):
    raise NotImplementedError("fxvm's numpy has the legacy np.random API (RandomState, np.random.seed) but not yet np.random.default_rng (PCG64)")


__all__ = [
    "RandomState", "bytes", "choice", "default_rng", "exponential", "get_state", "normal", "permutation", "rand", "randint",
    "randn", "random", "random_integers", "random_sample", "ranf", "sample", "seed", "set_state", "shuffle",
    "standard_exponential", "standard_normal", "uniform",
]
