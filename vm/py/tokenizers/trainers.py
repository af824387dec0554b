"""``tokenizers.trainers``: learning a model's vocabulary from text."""

import json

__all__ = ["BpeTrainer", "Trainer", "UnigramTrainer", "WordLevelTrainer", "WordPieceTrainer"]


def _tokens(tokens):
    from tokenizers import AddedToken

    return [(t if isinstance(t, AddedToken) else AddedToken(t, special=True)).__getstate__() for t in tokens or []]


class Trainer:
    """A trainer's settings, as the crate's JSON (``{"BpeTrainer": {...}}``)."""

    def __init__(self, kind, state):
        self._kind = kind
        self._state = state

    def _json(self):
        return json.dumps({self._kind: self._state}, ensure_ascii=False)

    def _update(self, text):
        self._state = json.loads(text)[self._kind]

    def __getstate__(self):
        return self._json().encode()

    def __getattr__(self, name):
        state = self.__dict__.get("_state", {})
        if name in state:
            return state[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class BpeTrainer(Trainer):
    def __init__(
        self,
        vocab_size=30000,
        min_frequency=0,
        show_progress=True,
        special_tokens=None,
        limit_alphabet=None,
        initial_alphabet=None,
        continuing_subword_prefix=None,
        end_of_word_suffix=None,
        max_token_length=None,
        words=None,
    ):
        super().__init__(
            "BpeTrainer",
            {
                "min_frequency": min_frequency,
                "vocab_size": vocab_size,
                "show_progress": False,
                "progress_format": "Indicatif",
                "special_tokens": _tokens(special_tokens),
                "limit_alphabet": limit_alphabet,
                "initial_alphabet": sorted(set(initial_alphabet or [])),
                "continuing_subword_prefix": continuing_subword_prefix,
                "end_of_word_suffix": end_of_word_suffix,
                "max_token_length": max_token_length,
                "words": dict(words or {}),
            },
        )


class WordPieceTrainer(Trainer):
    def __init__(
        self,
        vocab_size=30000,
        min_frequency=0,
        show_progress=True,
        special_tokens=None,
        limit_alphabet=None,
        initial_alphabet=None,
        continuing_subword_prefix="##",
        end_of_word_suffix=None,
    ):
        super().__init__(
            "WordPieceTrainer",
            {
                "bpe_trainer": {
                    "min_frequency": min_frequency,
                    "vocab_size": vocab_size,
                    "show_progress": False,
                    "progress_format": "Indicatif",
                    "special_tokens": _tokens(special_tokens),
                    "limit_alphabet": limit_alphabet,
                    "initial_alphabet": sorted(set(initial_alphabet or [])),
                    "continuing_subword_prefix": continuing_subword_prefix,
                    "end_of_word_suffix": end_of_word_suffix,
                    "max_token_length": None,
                    "words": {},
                }
            },
        )


class WordLevelTrainer(Trainer):
    def __init__(self, vocab_size=30000, min_frequency=0, show_progress=True, special_tokens=None):
        super().__init__(
            "WordLevelTrainer",
            {
                "min_frequency": min_frequency,
                "vocab_size": vocab_size,
                "show_progress": False,
                "special_tokens": _tokens(special_tokens),
                "words": {},
            },
        )


class UnigramTrainer(Trainer):
    def __init__(
        self,
        vocab_size=8000,
        show_progress=True,
        special_tokens=None,
        initial_alphabet=None,
        shrinking_factor=0.75,
        unk_token=None,
        max_piece_length=16,
        n_sub_iterations=2,
    ):
        super().__init__(
            "UnigramTrainer",
            {
                "show_progress": False,
                "vocab_size": vocab_size,
                "n_sub_iterations": n_sub_iterations,
                "shrinking_factor": shrinking_factor,
                "special_tokens": _tokens(special_tokens),
                "initial_alphabet": sorted(set(initial_alphabet or [])),
                "unk_token": unk_token,
                "max_piece_length": max_piece_length,
                "seed_size": 1000000,
                "words": {},
            },
        )
