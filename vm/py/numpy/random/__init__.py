"""``numpy.random``: the legacy ``RandomState`` API (and the module-level
functions on its global instance) with numpy's exact MT19937 streams, and
``default_rng``'s ``Generator`` on PCG64 with numpy's exact streams."""

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


from numpy.random._generator import BitGenerator, Generator, PCG64, SeedSequence, default_rng

__all__ = sorted(name for name in dir() if not name.startswith("_"))

# numpy's other bit generators, not provided yet: asking for one says so.
_NEWER = {"PCG64DXSM", "Philox", "SFC64", "MT19937"}


def __getattr__(name):
    if name in _NEWER:
        raise AttributeError(
            f"numpy.random.{name}: fxvm's numpy has the legacy random API and default_rng's Generator on PCG64, "
            "but not numpy's other bit generators"
        )
    raise AttributeError(f"module 'numpy.random' has no attribute '{name}'")
