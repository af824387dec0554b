"""``numpy.random``: the legacy ``RandomState`` API (and the module-level
functions on its global instance) with numpy's exact MT19937 streams."""

from numpy.random.mtrand import (
    RandomState,
    beta,
    binomial,
    chisquare,
    dirichlet,
    f,
    gamma,
    geometric,
    gumbel,
    laplace,
    logistic,
    lognormal,
    logseries,
    multinomial,
    negative_binomial,
    noncentral_chisquare,
    noncentral_f,
    pareto,
    poisson,
    power,
    rayleigh,
    standard_cauchy,
    standard_gamma,
    standard_t,
    triangular,
    wald,
    weibull,
    zipf,
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


__all__ = sorted(name for name in dir() if not name.startswith("_"))

# numpy's newer API, not provided yet: asking for it says so.
_NEWER = {
    "default_rng",
    "Generator",
    "BitGenerator",
    "SeedSequence",
    "PCG64",
    "PCG64DXSM",
    "Philox",
    "SFC64",
    "MT19937",
}


def __getattr__(name):
    if name in _NEWER:
        raise AttributeError(
            f"numpy.random.{name}: fxvm's numpy has the legacy random API (np.random.seed, RandomState) "
            "but not yet the Generator API (default_rng, bit generators)"
        )
    raise AttributeError(f"module 'numpy.random' has no attribute '{name}'")
