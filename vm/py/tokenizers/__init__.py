"""``tokenizers`` for fxvm: the Python API of Hugging Face's tokenizers
(0.23) over the same Rust core (the ``tokenizers`` crate, through
``_fxvm_tokenizers``). A tokenizer and its parts round-trip through the
crate's JSON — ``tokenizer.json`` files load and save as in the package.
``Tokenizer.from_pretrained`` needs the network and says so; the
``implementations`` helpers, ``NormalizedString``/``PreTokenizedString``
and custom Python components are not here yet."""

import enum
import json

import _fxvm_metadata
import _fxvm_tokenizers

from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers
from tokenizers._component import Component

__all__ = [
    "AddedToken",
    "Encoding",
    "Regex",
    "Tokenizer",
    "decoders",
    "models",
    "normalizers",
    "pre_tokenizers",
    "processors",
    "trainers",
]

__version__ = _fxvm_metadata.VERSIONS["tokenizers"]


class Regex:
    """A pattern for ``Split``/``Replace`` (instead of a literal string)."""

    def __init__(self, pattern):
        self.pattern = pattern


class OffsetReferential(enum.Enum):
    ORIGINAL = "original"
    NORMALIZED = "normalized"


class OffsetType(enum.Enum):
    BYTE = "byte"
    CHAR = "char"


class SplitDelimiterBehavior(enum.Enum):
    REMOVED = "removed"
    ISOLATED = "isolated"
    MERGED_WITH_PREVIOUS = "merged_with_previous"
    MERGED_WITH_NEXT = "merged_with_next"
    CONTIGUOUS = "contiguous"


class AddedToken:
    """A token added to the vocabulary: how it matches (``single_word``,
    ``lstrip``, ``rstrip``, ``normalized``) and whether it is ``special``."""

    def __init__(self, content, single_word=False, lstrip=False, rstrip=False, normalized=None, special=False):
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.special = special
        self.normalized = (not special) if normalized is None else normalized

    def __getstate__(self):
        return {
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }

    def __setstate__(self, state):
        self.__dict__.update(state)

    @classmethod
    def _from_state(cls, state):
        return cls(
            state["content"],
            state["single_word"],
            state["lstrip"],
            state["rstrip"],
            state["normalized"],
            state["special"],
        )

    def __str__(self):
        return self.content

    def __repr__(self):
        flag = lambda b: "True" if b else "False"  # noqa: E731
        return f'AddedToken("{self.content}", rstrip={flag(self.rstrip)}, lstrip={flag(self.lstrip)}, single_word={flag(self.single_word)}, normalized={flag(self.normalized)}, special={flag(self.special)})'

    def __eq__(self, other):
        if isinstance(other, AddedToken):
            return self.__getstate__() == other.__getstate__()
        return NotImplemented

    def __hash__(self):
        return hash(self.content)


# The native class is the package's (`tokenizers.Encoding`).
Encoding = _fxvm_tokenizers.Encoding


def _added_state(token, special):
    if isinstance(token, AddedToken):
        return token.__getstate__()
    if isinstance(token, str):
        return AddedToken(token, special=special).__getstate__()
    raise TypeError("Input must be a List[Union[str, AddedToken]]")


_PARTS = {
    "normalizer": normalizers.Normalizer,
    "pre_tokenizer": pre_tokenizers.PreTokenizer,
    "post_processor": processors.PostProcessor,
    "decoder": decoders.Decoder,
    "model": models.Model,
}


class Tokenizer:
    """A tokenizer: a model with its normalizer, pre-tokenizer,
    post-processor and decoder, added tokens, padding and truncation."""

    def __init__(self, model):
        empty = {
            "version": "1.0",
            "truncation": None,
            "padding": None,
            "added_tokens": [],
            "normalizer": None,
            "pre_tokenizer": None,
            "post_processor": None,
            "decoder": None,
            "model": model._state,
        }
        object.__setattr__(self, "_native", _fxvm_tokenizers.Tokenizer(json.dumps(empty, ensure_ascii=False)))

    @classmethod
    def _of(cls, native):
        tokenizer = cls.__new__(cls)
        object.__setattr__(tokenizer, "_native", native)
        return tokenizer

    @classmethod
    def from_str(cls, json):
        return cls._of(_fxvm_tokenizers.Tokenizer(json))

    @classmethod
    def from_file(cls, path):
        with open(path, encoding="utf-8") as f:
            return cls.from_str(f.read())

    @classmethod
    def from_buffer(cls, buffer):
        return cls.from_str(bytes(buffer).decode("utf-8"))

    @classmethod
    def from_pretrained(cls, identifier, revision="main", token=None):
        raise Exception(
            f"fxvm has no network access to download the tokenizer '{identifier}': save its tokenizer.json locally and use Tokenizer.from_file"
        )

    def to_str(self, pretty=False):
        return self._native.to_str(pretty)

    def save(self, path, pretty=True):
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_str(pretty))

    def __getstate__(self):
        return self.to_str().encode()

    def __setstate__(self, state):
        object.__setattr__(self, "_native", _fxvm_tokenizers.Tokenizer(bytes(state).decode()))

    def __repr__(self):
        return f'Tokenizer(version="1.0", truncation={self.truncation}, padding={self.padding}, ...)'

    # The parts, read and set as components.
    def __getattr__(self, name):
        if name in _PARTS:
            return _PARTS[name]._from_json(self._native.get(name))
        raise AttributeError(f"'Tokenizer' object has no attribute '{name}'")

    @property
    def encode_special_tokens(self):
        return self._native.get_encode_special_tokens()

    @encode_special_tokens.setter
    def encode_special_tokens(self, value):
        self._native.set_encode_special_tokens(bool(value))

    def __setattr__(self, name, value):
        if name == "encode_special_tokens":
            object.__setattr__(self, name, value)
            return
        if name not in _PARTS:
            raise AttributeError(f"'Tokenizer' object attribute '{name}' is read-only")
        if value is not None and not isinstance(value, Component):
            raise TypeError(f"{name} must be a tokenizers {_PARTS[name].__name__}")
        self._native.set(name, None if value is None else value._json())

    def encode(self, sequence, pair=None, is_pretokenized=False, add_special_tokens=True):
        return self._native.encode(sequence, pair, is_pretokenized, add_special_tokens)

    def encode_batch(self, input, is_pretokenized=False, add_special_tokens=True):
        return self._native.encode_batch(list(input), is_pretokenized, add_special_tokens)

    encode_batch_fast = encode_batch

    def decode(self, ids, skip_special_tokens=True):
        return self._native.decode(list(ids), skip_special_tokens)

    def decode_batch(self, sequences, skip_special_tokens=True):
        return self._native.decode_batch([list(s) for s in sequences], skip_special_tokens)

    def token_to_id(self, token):
        return self._native.token_to_id(token)

    def id_to_token(self, id):
        return self._native.id_to_token(id)

    def get_vocab(self, with_added_tokens=True):
        return self._native.get_vocab(with_added_tokens)

    def get_vocab_size(self, with_added_tokens=True):
        return self._native.get_vocab_size(with_added_tokens)

    def get_added_tokens_decoder(self):
        return {i: AddedToken._from_state(json.loads(t)) for i, t in self._native.added_tokens().items()}

    def add_tokens(self, tokens):
        return self._native.add_tokens([json.dumps(_added_state(t, False)) for t in tokens], False)

    def add_special_tokens(self, tokens):
        return self._native.add_tokens([json.dumps(_added_state(t, True)) for t in tokens], True)

    def num_special_tokens_to_add(self, is_pair):
        return self._native.num_special_tokens_to_add(is_pair)

    @property
    def padding(self):
        text = self._native.get("padding")
        if text is None:
            return None
        p = json.loads(text)
        strategy = p["strategy"]
        return {
            "length": strategy["Fixed"] if isinstance(strategy, dict) else None,
            "pad_to_multiple_of": p["pad_to_multiple_of"],
            "pad_id": p["pad_id"],
            "pad_token": p["pad_token"],
            "pad_type_id": p["pad_type_id"],
            "direction": p["direction"].lower(),
        }

    def enable_padding(
        self, direction="right", pad_id=0, pad_type_id=0, pad_token="[PAD]", length=None, pad_to_multiple_of=None
    ):
        if direction not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{direction}`")
        strategy = "BatchLongest" if length is None else {"Fixed": length}
        params = {
            "strategy": strategy,
            "direction": direction.capitalize(),
            "pad_to_multiple_of": pad_to_multiple_of,
            "pad_id": pad_id,
            "pad_type_id": pad_type_id,
            "pad_token": pad_token,
        }
        self._native.set("padding", json.dumps(params))

    def no_padding(self):
        self._native.set("padding", None)

    @property
    def truncation(self):
        text = self._native.get("truncation")
        if text is None:
            return None
        t = json.loads(text)
        strategy = {"LongestFirst": "longest_first", "OnlyFirst": "only_first", "OnlySecond": "only_second"}[
            t["strategy"]
        ]
        return {
            "max_length": t["max_length"],
            "stride": t["stride"],
            "strategy": strategy,
            "direction": t["direction"].lower(),
        }

    def enable_truncation(self, max_length, stride=0, strategy="longest_first", direction="right"):
        strategies = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
        if strategy not in strategies:
            raise ValueError(
                "Unknown `strategy`: `" + strategy + "`. Use one of `longest_first`, `only_first`, or `only_second`"
            )
        if direction not in ("left", "right"):
            raise ValueError(f"Unknown `direction`: `{direction}`. Use one of `left` or `right`.")
        params = {
            "direction": direction.capitalize(),
            "max_length": max_length,
            "strategy": strategies[strategy],
            "stride": stride,
        }
        self._native.set("truncation", json.dumps(params))

    def no_truncation(self):
        self._native.set("truncation", None)

    def train_from_iterator(self, iterator, trainer=None, length=None):
        trainer = trainer or self.model.get_trainer()
        texts = []
        for item in iterator:
            texts.extend([item] if isinstance(item, str) else item)
        trainer._update(self._native.train(trainer._json(), texts))

    def train(self, files, trainer=None):
        texts = []
        for path in files:
            with open(path, encoding="utf-8") as f:
                texts.extend(f.read().splitlines(keepends=True))
        self.train_from_iterator(texts, trainer)
