"""``numpy.random.RandomState``: numpy's legacy generator. The engine and
the bit-exact draws (doubles, the polar normal, masked bounded integers,
shuffle swaps) are native (``_fxvm_numpy.MT19937``); the distributions'
arithmetic and argument handling follow numpy's ``mtrand``."""

import builtins
import operator

import torch

import _fxvm_numpy
from numpy import _dtypes
from numpy._array import _FLOAT64, _INT64, _compute, _wrap, ndarray
from numpy._convert import asarray
from numpy._dtypes import _info


def _count(size):
    if size is None:
        return None, 1
    shape = builtins.tuple(size) if isinstance(size, (builtins.tuple, builtins.list)) else (operator.index(size),)
    shape = builtins.tuple(operator.index(s) for s in shape)
    n = 1
    for s in shape:
        if s < 0:
            raise ValueError("negative dimensions are not allowed")
        n *= s
    return shape, n


def _legacy_seed(seed):
    """The engine's seed: an int in [0, 2**32) or a sequence of them."""
    if isinstance(seed, ndarray) and seed.ndim == 0:
        seed = builtins.int(seed)
    if isinstance(seed, (builtins.int, _dtypes.integer)) and not isinstance(seed, builtins.bool):
        seed = builtins.int(seed)
        if not 0 <= seed <= 0xFFFFFFFF:
            raise ValueError("Seed must be between 0 and 2**32 - 1")
        return seed
    if isinstance(seed, (builtins.float, _dtypes.floating)):
        raise TypeError("Cannot cast scalar from dtype('float64') to dtype('int64') according to the rule 'safe'")
    words = asarray(seed).ravel().tolist()
    if not words:
        raise ValueError("Seed must be non-empty")
    for w in words:
        if not isinstance(w, builtins.int) or not 0 <= w <= 0xFFFFFFFF:
            raise ValueError("Seed values must be between 0 and 2**32 - 1")
    return words


def _shuffle(engine, x):
    """Shuffles ``x`` (an array or a mutable sequence) in place, in the order
    ``engine.shuffled_order`` draws."""
    order = engine.shuffled_order(builtins.len(x))
    if isinstance(x, ndarray):
        x._t.copy_(x._t[order].clone())
        return
    items = [x[i] for i in order.tolist()]
    for i, v in builtins.enumerate(items):
        x[i] = v


def _permutation(engine, x):
    """``arange(x)`` permuted (for an int), or a permuted copy of ``x``."""
    if isinstance(x, (builtins.int, _dtypes.integer)):
        return _wrap(engine.shuffled_order(builtins.int(x)), _INT64)
    a = asarray(x)
    if a.ndim == 0:
        raise IndexError("x must be an integer or at least 1-dimensional")
    order = engine.shuffled_order(a.shape[0])
    return _wrap(a._t[order].clone(), a._info)


_P_MESSAGES = {
    "legacy": (
        "'a' and 'p' must have same size",
        "probabilities are not non-negative",
        "probabilities do not sum to 1",
    ),
    "generator": (
        "a and p must have same size",
        "Probabilities are not non-negative",
        "Probabilities do not sum to 1. See Notes section of docstring for more information.",
    ),
}


def _probabilities(p, pop_size, api="legacy"):
    """``choice``'s ``p`` checked as numpy checks it (with the messages of
    ``RandomState`` or of ``Generator``), as a float64 tensor."""
    size_message, negative_message, sum_message = _P_MESSAGES[api]
    probs = asarray(p).astype(float)
    if probs.ndim != 1:
        raise ValueError("p must be 1-dimensional")
    if probs.size != pop_size:
        raise ValueError(size_message)
    pt = probs._t
    if builtins.bool((pt < 0).any()):
        raise ValueError(negative_message)
    if builtins.abs(builtins.float(pt.sum()) - 1.0) > 1e-8:
        raise ValueError(sum_message)
    return pt


def _weighted(engine, probs, n):
    """``n`` indices drawn by weight: a double each, found in the cdf."""
    cdf = torch.cumsum(probs, 0)
    cdf = cdf / cdf[-1]
    return torch.searchsorted(cdf, engine.doubles(n), right=True)


def _weighted_distinct(engine, probs, n):
    """``n`` distinct indices drawn by weight, as numpy draws them: rounds
    of doubles over the weights not yet taken, each round keeping its new
    indices in their order of first appearance."""
    if builtins.int((probs > 0).sum()) < n:
        raise ValueError("Fewer non-zero entries in p than size")
    found = []
    pt = probs.clone()
    while builtins.len(found) < n:
        if found:
            pt[torch.tensor(found)] = 0
        new = _weighted(engine, pt, n - builtins.len(found)).tolist()
        found.extend(builtins.dict.fromkeys(new))
    return torch.tensor(found[:n], dtype=torch.int64)


def _entropy_seed():
    import os

    return builtins.list(builtins.int.from_bytes(os.urandom(4), "little") for _ in builtins.range(624))


class RandomState:
    """numpy's legacy random generator (Mersenne Twister), stream for stream."""

    def __init__(self, seed=None):
        self._mt = _fxvm_numpy.MT19937(_entropy_seed() if seed is None else _legacy_seed(seed))

    def __repr__(self):
        return f"RandomState(MT19937) at 0x{id(self):X}"

    def seed(self, seed=None):
        self._mt.seed(_entropy_seed() if seed is None else _legacy_seed(seed))

    def get_state(self, legacy=True):
        key, pos, gauss = self._mt.get_state()
        words = _wrap(key.to(torch.int32), _dtypes._BY_NAME["uint32"])
        if legacy:
            return ("MT19937", words, pos, builtins.int(gauss is not None), 0.0 if gauss is None else gauss)
        return {
            "bit_generator": "MT19937",
            "state": {"key": words, "pos": pos},
            "has_gauss": builtins.int(gauss is not None),
            "gauss": 0.0 if gauss is None else gauss,
        }

    def set_state(self, state):
        if isinstance(state, builtins.dict):
            key, pos = state["state"]["key"], state["state"]["pos"]
            has_gauss, gauss = state.get("has_gauss", 0), state.get("gauss", 0.0)
        else:
            if state[0] != "MT19937":
                raise ValueError("set_state can only be used with legacy MT19937 state instances.")
            key, pos = state[1], state[2]
            has_gauss, gauss = (state[3], state[4]) if builtins.len(state) > 3 else (0, 0.0)
        words = asarray(key)
        if words.size != 624:
            raise ValueError("state must be 624 elements")
        self._mt.set_state(
            _compute(words.astype(_dtypes._BY_NAME["uint32"].dtype)).to(torch.int64),
            builtins.int(pos),
            builtins.float(gauss) if has_gauss else None,
        )

    # ----- continuous
    def _doubles(self, size):
        shape, n = _count(size)
        t = self._mt.doubles(n)
        if shape is None:
            return t[0].item()
        return t.reshape(shape)

    def random_sample(self, size=None):
        r = self._doubles(size)
        return r if isinstance(r, builtins.float) else _wrap(r, _FLOAT64)

    def random(self, size=None):
        return self.random_sample(size)

    def rand(self, *args):
        return self.random_sample(args if args else None)

    def _gauss(self, size):
        shape, n = _count(size)
        t = self._mt.gaussians(n)
        if shape is None:
            return t[0].item()
        return t.reshape(shape)

    def standard_normal(self, size=None):
        r = self._gauss(size)
        return r if isinstance(r, builtins.float) else _wrap(r, _FLOAT64)

    def randn(self, *args):
        return self.standard_normal(args if args else None)

    def _broadcast_size(self, size, *params):
        arrays = [asarray(p) for p in params]
        if size is None and builtins.all(a.ndim == 0 for a in arrays):
            return None, arrays
        if size is None:
            size = torch.broadcast_shapes(*[a.shape for a in arrays])
        return size, arrays

    def normal(self, loc=0.0, scale=1.0, size=None):
        size, (loc_a, scale_a) = self._broadcast_size(size, loc, scale)
        if builtins.bool((_compute(scale_a) < 0).any()):
            raise ValueError("scale < 0")
        g = self._gauss(size)
        if size is None:
            return builtins.float(loc) + builtins.float(scale) * g
        t = _compute(loc_a).to(torch.float64) + _compute(scale_a).to(torch.float64) * g
        return _wrap(t, _FLOAT64)

    def uniform(self, low=0.0, high=1.0, size=None):
        size, (low_a, high_a) = self._broadcast_size(size, low, high)
        lo = _compute(low_a).to(torch.float64)
        span = _compute(high_a).to(torch.float64) - lo
        if not builtins.bool(torch.isfinite(span).all()):
            raise OverflowError("Range exceeds valid bounds")
        u = self._doubles(size)
        if size is None:
            return lo.item() + span.item() * u
        return _wrap(lo + span * u, _FLOAT64)

    def standard_exponential(self, size=None):
        return self._draw("standard_exponential", size, ())

    def exponential(self, scale=1.0, size=None):
        size, (scale_a,) = self._broadcast_size(size, scale)
        if builtins.bool((_compute(scale_a) < 0).any()):
            raise ValueError("scale < 0")
        e = self.standard_exponential(size)
        if size is None:
            return builtins.float(scale) * e
        return _wrap(_compute(scale_a).to(torch.float64) * e._t, _FLOAT64)

    def _draw(self, kind, size, params, checks=(), discrete=False):
        """Samples of a native distribution: parameters broadcast against
        each other and ``size``; a scalar without ``size``."""
        arrays = [asarray(p).astype(float) for p in params]
        for (i, bad), message in checks:
            if arrays[i].size and builtins.bool(asarray(bad(arrays[i])).any()):
                raise ValueError(message)
        shape, n = _count(size)
        if shape is None and builtins.all(a.ndim == 0 for a in arrays):
            v = self._mt.sample(kind, [[a.item()] for a in arrays], 1)[0].item()
            return builtins.int(v) if discrete else v
        if shape is None:
            shape, n = _count(builtins.tuple(torch.broadcast_shapes(*[a.shape for a in arrays])))
        flat = [
            a._t.reshape(-1).tolist() if a.size == 1 else torch.broadcast_to(a._t, shape).reshape(-1).tolist()
            for a in arrays
        ]
        t = self._mt.sample(kind, flat, n).reshape(shape)
        return _wrap(t.to(torch.int64), _INT64) if discrete else _wrap(t, _FLOAT64)

    def gumbel(self, loc=0.0, scale=1.0, size=None):
        return self._draw("gumbel", size, (loc, scale), [(_negative(1), "scale < 0")])

    def laplace(self, loc=0.0, scale=1.0, size=None):
        return self._draw("laplace", size, (loc, scale), [(_negative(1), "scale < 0")])

    def logistic(self, loc=0.0, scale=1.0, size=None):
        return self._draw("logistic", size, (loc, scale), [(_negative(1), "scale < 0")])

    def lognormal(self, mean=0.0, sigma=1.0, size=None):
        return self._draw("lognormal", size, (mean, sigma), [(_negative(1), "sigma < 0")])

    def rayleigh(self, scale=1.0, size=None):
        return self._draw("rayleigh", size, (scale,), [(_negative(0), "scale < 0")])

    def standard_cauchy(self, size=None):
        return self._draw("standard_cauchy", size, ())

    def pareto(self, a, size=None):
        return self._draw("pareto", size, (a,), [(_not_positive(0), "a <= 0")])

    def weibull(self, a, size=None):
        return self._draw("weibull", size, (a,), [(_negative(0), "a < 0")])

    def power(self, a, size=None):
        return self._draw("power", size, (a,), [(_not_positive(0), "a <= 0")])

    def triangular(self, left, mode, right, size=None):
        lo, mid, hi = (asarray(x).astype(float) for x in (left, mode, right))
        if builtins.bool(asarray(lo > mid).any()):
            raise ValueError("left > mode")
        if builtins.bool(asarray(mid > hi).any()):
            raise ValueError("mode > right")
        if builtins.bool(asarray(lo == hi).any()):
            raise ValueError("left == right")
        return self._draw("triangular", size, (lo, mid, hi))

    def wald(self, mean, scale, size=None):
        return self._draw(
            "wald", size, (mean, scale), [(_not_positive(0), "mean <= 0"), (_not_positive(1), "scale <= 0")]
        )

    def standard_gamma(self, shape, size=None):
        return self._draw("standard_gamma", size, (shape,), [(_negative(0), "shape < 0")])

    def gamma(self, shape, scale=1.0, size=None):
        return self._draw("gamma", size, (shape, scale), [(_negative(0), "shape < 0"), (_negative(1), "scale < 0")])

    def chisquare(self, df, size=None):
        return self._draw("chisquare", size, (df,), [(_not_positive(0), "df <= 0")])

    def noncentral_chisquare(self, df, nonc, size=None):
        return self._draw(
            "noncentral_chisquare", size, (df, nonc), [(_not_positive(0), "df <= 0"), (_negative(1), "nonc < 0")]
        )

    def f(self, dfnum, dfden, size=None):
        return self._draw(
            "f", size, (dfnum, dfden), [(_not_positive(0), "dfnum <= 0"), (_not_positive(1), "dfden <= 0")]
        )

    def noncentral_f(self, dfnum, dfden, nonc, size=None):
        return self._draw(
            "noncentral_f",
            size,
            (dfnum, dfden, nonc),
            [(_not_positive(0), "dfnum <= 0"), (_not_positive(1), "dfden <= 0"), (_negative(2), "nonc < 0")],
        )

    def standard_t(self, df, size=None):
        return self._draw("standard_t", size, (df,), [(_not_positive(0), "df <= 0")])

    def beta(self, a, b, size=None):
        return self._draw("beta", size, (a, b), [(_not_positive(0), "a <= 0"), (_not_positive(1), "b <= 0")])

    def poisson(self, lam=1.0, size=None):
        lam_a = asarray(lam).astype(float)
        if builtins.bool(asarray((lam_a < 0) | (lam_a != lam_a)).any()):
            raise ValueError("lam < 0 or lam is NaN")
        if builtins.bool(asarray(lam_a > 9.223372006484771e18).any()):
            raise ValueError("lam value too large")
        return self._draw("poisson", size, (lam_a,), discrete=True)

    def negative_binomial(self, n, p, size=None):
        return self._draw(
            "negative_binomial",
            size,
            (n, p),
            [(_not_positive(0), "n <= 0"), (_outside(1, 0.0, 1.0), "p < 0, p > 1 or p is NaN")],
            discrete=True,
        )

    def geometric(self, p, size=None):
        return self._draw(
            "geometric",
            size,
            (p,),
            [(_outside(0, 0.0, 1.0, low_open=True), "p <= 0, p > 1 or p contains NaNs")],
            discrete=True,
        )

    def logseries(self, p, size=None):
        return self._draw(
            "logseries",
            size,
            (p,),
            [(_outside(0, 0.0, 1.0, high_open=True), "p < 0, p >= 1 or p is NaN")],
            discrete=True,
        )

    def binomial(self, n, p, size=None):
        n_a = asarray(n)
        if n_a._info.kind == "f":
            n_a = n_a.astype(_INT64.dtype)
        return self._draw(
            "binomial",
            size,
            (n_a, p),
            [(_negative(0), "n < 0"), (_outside(1, 0.0, 1.0), "p < 0, p > 1 or p is NaN")],
            discrete=True,
        )

    def zipf(self, a, size=None):
        return self._draw(
            "zipf", size, (a,), [((0, lambda x: (x <= 1.0) | (x != x)), "a <= 1 or a is NaN")], discrete=True
        )

    def multinomial(self, n, pvals, size=None):
        pvals = asarray(pvals).astype(float)
        if pvals.ndim != 1:
            raise ValueError("pvals must be a 1-d sequence")
        total = builtins.float(pvals[:-1]._t.sum()) if pvals.size > 1 else 0.0
        if total > 1.0 + 1e-12:
            raise ValueError("sum(pvals[:-1]) > 1.0")
        shape, count = _count(size)
        t = self._mt.multinomial(builtins.int(n), pvals._t.tolist(), count)
        return _wrap(t.reshape((() if shape is None else shape) + (pvals.size,)), _INT64)

    def dirichlet(self, alpha, size=None):
        alpha = asarray(alpha).astype(float)
        if alpha.ndim != 1:
            raise ValueError("alpha must be a one-dimensional sequence of floats")
        if builtins.bool(asarray((alpha < 0) | (alpha != alpha)).any()):
            raise ValueError("alpha < 0 or alpha contains NaNs")
        shape, n = _count(size)
        k = alpha.size
        # numpy draws sample by sample, one standard gamma per component.
        draws = self._mt.sample("standard_gamma", [alpha._t.repeat(n).tolist()], n * k).reshape(n, k)
        draws = draws / draws.sum(1, keepdim=True)
        return _wrap(draws.reshape((() if shape is None else shape) + (k,)), _FLOAT64)

    # ----- integers
    def randint(self, low, high=None, size=None, dtype=int):
        only_high = high is None
        if only_high:
            low, high = 0, low
        info = _info(dtype)
        if info.kind not in "biu":
            raise TypeError(f"Unsupported dtype dtype('{info.name}') for randint")
        if asarray(low).ndim or asarray(high).ndim:
            raise NotImplementedError("fxvm's numpy draws randint with scalar bounds")
        lo, hi = builtins.int(low), builtins.int(high) - 1
        if lo > hi:
            raise ValueError("high <= 0" if only_high else "low >= high")
        bounds = (0, 1) if info.kind == "b" else _dtypes._int_bounds(info)
        if lo < bounds[0]:
            raise ValueError(f"low is out of bounds for {info.name}")
        if hi > bounds[1]:
            raise ValueError(f"high is out of bounds for {info.name}")
        shape, n = _count(size)
        bits = 1 if info.kind == "b" else 8 * info.itemsize
        offsets = self._mt.bounded(hi - lo, n, bits)
        t = offsets + lo if lo else offsets
        if shape is None:
            v = t[0].item()
            return builtins.bool(v) if info.kind == "b" else v
        return _wrap(t.reshape(shape).to(info.storage), info)

    def random_integers(self, low, high=None, size=None):
        if high is None:
            low, high = 1, low
        return self.randint(low, builtins.int(high) + 1, size)

    def bytes(self, length):
        n = (length - 1) // 4 + 1 if length else 0
        words = self._mt.bounded(0xFFFFFFFF, n, 32).to(torch.int32)
        return _fxvm_numpy.tensor_bytes(words)[:length]

    # ----- sequences
    def shuffle(self, x):
        _shuffle(self._mt, x)

    def permutation(self, x):
        return _permutation(self._mt, x)

    def choice(self, a, size=None, replace=True, p=None):
        pool = None
        if isinstance(a, (builtins.int, _dtypes.integer)):
            pop_size = builtins.int(a)
            if pop_size <= 0:
                raise ValueError("a must be greater than 0 unless no samples are taken")
        else:
            pool = asarray(a)
            if pool.ndim != 1:
                raise ValueError("a must be 1-dimensional")
            pop_size = pool.shape[0]
            if pop_size == 0:
                raise ValueError("'a' cannot be empty unless no samples are taken")
        probs = None if p is None else _probabilities(p, pop_size)
        shape, n = _count(size)
        if replace:
            if probs is not None:
                idx = _weighted(self._mt, probs, n)
            else:
                idx = self._mt.bounded(pop_size - 1, n, 64)
        else:
            if n > pop_size:
                raise ValueError("Cannot take a larger sample than population when 'replace=False'")
            if probs is not None:
                idx = _weighted_distinct(self._mt, probs, n)
            else:
                idx = self._mt.shuffled_order(pop_size)[:n]
        if shape is None:
            i = idx[0].item()
            return i if pool is None else pool[i]
        idx = idx.reshape(shape)
        if pool is None:
            return _wrap(idx, _INT64)
        return _wrap(pool._t[idx], pool._info)


# Parameter checks: (which parameter, what makes it invalid).
def _negative(i):
    return i, lambda a: a < 0


def _not_positive(i):
    return i, lambda a: a <= 0


def _outside(i, low, high, low_open=False, high_open=False):
    def bad(a):
        below = (a <= low) if low_open else (a < low)
        above = (a >= high) if high_open else (a > high)
        return below | above | (a != a)

    return i, bad


_global = RandomState()

seed = _global.seed
get_state = _global.get_state
set_state = _global.set_state
random_sample = _global.random_sample
random = _global.random
ranf = _global.random_sample
sample = _global.random_sample
rand = _global.rand
randn = _global.randn
standard_normal = _global.standard_normal
normal = _global.normal
uniform = _global.uniform
standard_exponential = _global.standard_exponential
exponential = _global.exponential
randint = _global.randint
random_integers = _global.random_integers
bytes = _global.bytes
shuffle = _global.shuffle
permutation = _global.permutation
choice = _global.choice
gumbel = _global.gumbel
laplace = _global.laplace
logistic = _global.logistic
lognormal = _global.lognormal
rayleigh = _global.rayleigh
standard_cauchy = _global.standard_cauchy
pareto = _global.pareto
weibull = _global.weibull
power = _global.power
triangular = _global.triangular
wald = _global.wald
standard_gamma = _global.standard_gamma
gamma = _global.gamma
chisquare = _global.chisquare
noncentral_chisquare = _global.noncentral_chisquare
f = _global.f
noncentral_f = _global.noncentral_f
standard_t = _global.standard_t
beta = _global.beta
poisson = _global.poisson
negative_binomial = _global.negative_binomial
geometric = _global.geometric
logseries = _global.logseries
dirichlet = _global.dirichlet
binomial = _global.binomial
zipf = _global.zipf
multinomial = _global.multinomial
