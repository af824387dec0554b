"""numpy's ``Generator`` API: ``default_rng``, ``Generator`` on the PCG64 bit
generator, and ``SeedSequence``, stream for stream as numpy draws them. The
engine and its draws (doubles, floats, Lemire's bounded integers, masked
shuffles, the ziggurat normal) are native (``_fxvm_numpy.PCG64``)."""

import builtins
import operator
import secrets

import torch

import _fxvm_numpy
from numpy import _dtypes
from numpy._array import _FLOAT64, _INT64, _scalar, _wrap, ndarray
from numpy._convert import asarray
from numpy._dtypes import _info
from numpy.random.mtrand import _count, _permutation, _probabilities, _shuffle, _weighted, _weighted_distinct

__all__ = ["BitGenerator", "Generator", "PCG64", "SeedSequence", "default_rng"]

_UINT64 = _dtypes._BY_NAME["uint64"]


def _words(value, what):
    """numpy's uint32 words of an entropy value: an int (least significant
    word first) or a sequence of them (each one's words in turn)."""
    if isinstance(value, ndarray):
        value = value.tolist()
    if isinstance(value, (builtins.int, _dtypes.integer)) and not isinstance(value, builtins.bool):
        value = builtins.int(value)
        if value < 0:
            raise ValueError(f"expected non-negative integer for {what}")
        words = []
        while True:
            words.append(value & 0xFFFFFFFF)
            value >>= 32
            if not value:
                return words
    if isinstance(value, (builtins.list, builtins.tuple)):
        return [w for item in value for w in _words(item, what)]
    raise TypeError(f"SeedSequence expects int or sequence of ints for {what} but received {value!r}")


class SeedSequence:
    """Entropy (an int or ints; 128 fresh bits when None) and a spawn key,
    mixed as numpy mixes them into the state of a bit generator."""

    def __init__(self, entropy=None, *, spawn_key=(), pool_size=4, n_children_spawned=0):
        if pool_size != 4:
            raise NotImplementedError("fxvm's SeedSequence has numpy's default pool size (4) only")
        self.entropy = secrets.randbits(128) if entropy is None else entropy
        self.spawn_key = builtins.tuple(spawn_key)
        self.pool_size = pool_size
        self.n_children_spawned = n_children_spawned
        self._entropy_words = _words(self.entropy, "entropy")
        self._spawn_words = _words(builtins.list(self.spawn_key), "spawn_key")

    def __repr__(self):
        parts = [f"    entropy={self.entropy!r},"]
        if self.spawn_key:
            parts.append(f"    spawn_key={self.spawn_key!r},")
        if self.n_children_spawned:
            parts.append(f"    n_children_spawned={self.n_children_spawned!r},")
        return "SeedSequence(\n" + "\n".join(parts) + "\n)"

    def spawn(self, n_children):
        start = self.n_children_spawned
        self.n_children_spawned += n_children
        return [
            SeedSequence(self.entropy, spawn_key=self.spawn_key + (i,), pool_size=self.pool_size)
            for i in builtins.range(start, start + n_children)
        ]


class BitGenerator:
    """The base of numpy's bit generators (fxvm has PCG64)."""


class PCG64(BitGenerator):
    """numpy's default bit generator: a 128-bit LCG with the XSL-RR output."""

    def __init__(self, seed=None):
        self._seed_seq = seed if isinstance(seed, SeedSequence) else SeedSequence(seed)
        self._engine = _fxvm_numpy.PCG64(self._seed_seq._entropy_words, self._seed_seq._spawn_words)

    @property
    def seed_seq(self):
        return self._seed_seq

    @property
    def state(self):
        state, inc, buffered = self._engine.get_state()
        return {
            "bit_generator": "PCG64",
            "state": {"state": state, "inc": inc},
            "has_uint32": builtins.int(buffered is not None),
            "uinteger": 0 if buffered is None else buffered,
        }

    @state.setter
    def state(self, value):
        if not isinstance(value, builtins.dict) or value.get("bit_generator") != "PCG64":
            raise ValueError("state must be for a PCG64")
        inner = value["state"]
        buffered = builtins.int(value["uinteger"]) if value.get("has_uint32") else None
        self._engine.set_state(builtins.int(inner["state"]), builtins.int(inner["inc"]), buffered)

    def random_raw(self, size=None, output=True):
        shape, n = _count(size)
        values = self._engine.raw(n)
        if not output:
            return None
        if shape is None:
            return _scalar(_UINT64, values[0])
        # uint64 is kept in int64 storage, wrapped.
        t = torch.tensor([v - 2**64 if v >= 2**63 else v for v in values], dtype=torch.int64)
        return _wrap(t.reshape(shape).to(_UINT64.storage), _UINT64)

    def spawn(self, n_children):
        return [PCG64(child) for child in self._seed_seq.spawn(n_children)]


def _float_info(dtype, what):
    info = _info(dtype)
    if info.name not in ("float64", "float32"):
        raise TypeError(f"Unsupported dtype dtype('{info.name}') for {what}")
    return info


class Generator:
    """numpy's ``Generator``: its methods draw from the bit generator exactly
    as numpy's do."""

    def __init__(self, bit_generator):
        if not isinstance(bit_generator, PCG64):
            raise TypeError("fxvm's Generator draws from a PCG64 bit generator")
        self._bit_generator = bit_generator
        self._engine = bit_generator._engine

    def __repr__(self):
        return f"Generator(PCG64) at 0x{builtins.id(self):X}"

    @property
    def bit_generator(self):
        return self._bit_generator

    def spawn(self, n_children):
        return [Generator(bg) for bg in self._bit_generator.spawn(n_children)]

    def _fill(self, draw, size, info):
        shape, n = _count(size)
        t = draw(n)
        if shape is None:
            value = t[0].item()
            return value if info is _FLOAT64 else _scalar(info, value)
        return _wrap(t.reshape(shape), info)

    def random(self, size=None, dtype=_FLOAT64, out=None):
        info = _float_info(dtype, "random")
        draw = self._engine.doubles if info.name == "float64" else self._engine.floats
        return self._deliver(self._fill(draw, size, info), out)

    def standard_normal(self, size=None, dtype=_FLOAT64, out=None):
        info = _float_info(dtype, "standard_normal")
        if info.name != "float64":
            raise NotImplementedError("fxvm's Generator draws float64 normals (numpy's float32 ziggurat differs)")
        return self._deliver(self._fill(self._engine.normals, size, info), out)

    def _deliver(self, value, out):
        if out is None:
            return value
        out[...] = value
        return out

    def _scaled(self, draw, offset, factor, size):
        """``offset + factor * draws`` (float64 arrays), shaped by ``size`` or
        by the parameters broadcast; a float for scalars without ``size``."""
        shape, n = _count(size)
        if shape is None:
            shape = builtins.tuple(torch.broadcast_shapes(offset.shape, factor.shape))
            if not shape:
                return builtins.float(offset) + builtins.float(factor) * draw(1)[0].item()
            shape, n = _count(shape)
        return _wrap(offset._t + factor._t * draw(n).reshape(shape), _FLOAT64)

    def normal(self, loc=0.0, scale=1.0, size=None):
        loc_a, scale_a = asarray(loc).astype(float), asarray(scale).astype(float)
        if builtins.bool((scale_a < 0).any()):
            raise ValueError("scale < 0")
        return self._scaled(self._engine.normals, loc_a, scale_a, size)

    def uniform(self, low=0.0, high=1.0, size=None):
        low_a, high_a = asarray(low).astype(float), asarray(high).astype(float)
        return self._scaled(self._engine.doubles, low_a, asarray(high_a - low_a), size)

    def integers(self, low, high=None, size=None, dtype=_INT64, endpoint=False):
        if high is None:
            low, high = 0, low
        info = _info(dtype)
        if info.kind not in "iu" or info.itemsize < 4:
            raise NotImplementedError(
                f"fxvm's Generator draws int32, int64, uint32 and uint64 integers, not {info.name}"
            )
        if asarray(low).ndim or asarray(high).ndim:
            raise NotImplementedError("fxvm's Generator draws integers with scalar bounds")
        lo, hi = operator.index(low), operator.index(high) - (0 if endpoint else 1)
        if lo > hi:
            raise ValueError("low > high" if endpoint else "low >= high")
        bounds = _dtypes._int_bounds(info)
        if lo < bounds[0]:
            raise ValueError(f"low is out of bounds for {info.name}")
        if hi > bounds[1]:
            raise ValueError(f"high is out of bounds for {info.name}")
        shape, n = _count(size)
        t = self._engine.bounded(lo if lo < 2**63 else lo - 2**64, hi - lo, n)
        if shape is None:
            v = t[0].item()
            return _scalar(info, v + 2**64 if v < 0 and info.kind == "u" else v)
        return _wrap(t.reshape(shape).to(info.storage), info)

    def permutation(self, x, axis=0):
        if axis != 0:
            raise NotImplementedError("fxvm's Generator permutes along axis 0")
        return _permutation(self._engine, x)

    def shuffle(self, x, axis=0):
        if axis != 0:
            raise NotImplementedError("fxvm's Generator shuffles along axis 0")
        _shuffle(self._engine, x)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True):
        if axis != 0:
            raise NotImplementedError("fxvm's Generator.choice draws along axis 0")
        pool = None
        if isinstance(a, (builtins.int, _dtypes.integer)):
            pop_size = builtins.int(a)
            if pop_size <= 0 and size != 0:
                raise ValueError("a must be a positive integer unless no samples are taken")
        else:
            pool = asarray(a)
            if pool.ndim == 0:
                raise ValueError("a must be a sequence or an integer, not 0-d array")
            pop_size = pool.shape[0]
            if pop_size == 0 and size != 0:
                raise ValueError("a cannot be empty unless no samples are taken")
        probs = None if p is None else _probabilities(p, pop_size, "generator")
        shape, n = _count(size)
        if n == 0:
            idx = torch.zeros(0, dtype=torch.int64)
        elif replace:
            idx = self._engine.bounded(0, pop_size - 1, n) if probs is None else _weighted(self._engine, probs, n)
        elif n > pop_size:
            raise ValueError("Cannot take a larger sample than population when replace is False")
        elif probs is not None:
            idx = _weighted_distinct(self._engine, probs, n)
        else:
            idx = self._engine.sample(pop_size, n, builtins.bool(shuffle))
        if shape is None:
            i = idx[0].item()
            return _scalar(_INT64, i) if pool is None else pool[i]
        idx = _wrap(idx.reshape(shape), _INT64)
        return idx if pool is None else pool[idx]


def default_rng(seed=None):
    """A ``Generator`` on PCG64 seeded from ``seed`` (an int, ints, a
    ``SeedSequence``, a bit generator or a ``Generator``, which is returned
    as is)."""
    if isinstance(seed, Generator):
        return seed
    if isinstance(seed, BitGenerator):
        return Generator(seed)
    return Generator(PCG64(seed))
