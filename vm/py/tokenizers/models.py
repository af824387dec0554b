"""``tokenizers.models``: the vocabularies that turn words into tokens."""

import json

from tokenizers._component import Component

__all__ = ["BPE", "Model", "Unigram", "WordLevel", "WordPiece"]


class Model(Component):
    _kinds = {}

    def get_trainer(self):
        from tokenizers import trainers

        return {
            "BPE": trainers.BpeTrainer,
            "WordPiece": trainers.WordPieceTrainer,
            "WordLevel": trainers.WordLevelTrainer,
            "Unigram": trainers.UnigramTrainer,
        }[self._state["type"]]()

    def token_to_id(self, token):
        return self._vocab().get(token)

    def id_to_token(self, id):
        for token, i in self._vocab().items():
            if i == id:
                return token
        return None

    def _vocab(self):
        vocab = self._state.get("vocab", {})
        if isinstance(vocab, list):
            return {piece: i for i, (piece, _) in enumerate(vocab)}
        return vocab

    def save(self, folder, prefix=None):
        import os

        name = f"{prefix}-vocab.json" if prefix else "vocab.json"
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self._vocab(), f, ensure_ascii=False)
        files = [path]
        if self._state["type"] == "BPE":
            merges = os.path.join(folder, f"{prefix}-merges.txt" if prefix else "merges.txt")
            with open(merges, "w", encoding="utf-8") as f:
                f.write("#version: 0.2\n")
                for a, b in self._state["merges"]:
                    f.write(f"{a} {b}\n")
            files.append(merges)
        return files


def _read_vocab(vocab):
    if isinstance(vocab, str):
        with open(vocab, encoding="utf-8") as f:
            return json.load(f)
    return dict(vocab or {})


class BPE(Model):
    def __init__(
        self,
        vocab=None,
        merges=None,
        cache_capacity=None,
        dropout=None,
        unk_token=None,
        continuing_subword_prefix=None,
        end_of_word_suffix=None,
        fuse_unk=None,
        byte_fallback=False,
        ignore_merges=False,
    ):
        super().__init__(
            {
                "type": "BPE",
                "dropout": dropout,
                "unk_token": unk_token,
                "continuing_subword_prefix": continuing_subword_prefix,
                "end_of_word_suffix": end_of_word_suffix,
                "fuse_unk": bool(fuse_unk),
                "byte_fallback": byte_fallback,
                "ignore_merges": ignore_merges,
                "vocab": _read_vocab(vocab),
                "merges": [list(m) for m in (merges or [])],
            }
        )

    @staticmethod
    def read_file(vocab, merges):
        with open(merges, encoding="utf-8") as f:
            pairs = [tuple(line.split()) for line in f if line.strip() and not line.startswith("#version")]
        return _read_vocab(vocab), pairs

    @classmethod
    def from_file(cls, vocab, merges, **kwargs):
        vocab, merges = cls.read_file(vocab, merges)
        return cls(vocab, merges, **kwargs)


class WordPiece(Model):
    def __init__(self, vocab=None, unk_token="[UNK]", max_input_chars_per_word=100, continuing_subword_prefix="##"):
        super().__init__(
            {
                "type": "WordPiece",
                "unk_token": unk_token,
                "continuing_subword_prefix": continuing_subword_prefix,
                "max_input_chars_per_word": max_input_chars_per_word,
                "vocab": _read_vocab(vocab),
            }
        )

    @staticmethod
    def read_file(vocab):
        with open(vocab, encoding="utf-8") as f:
            return {line.rstrip("\n"): i for i, line in enumerate(f)}

    @classmethod
    def from_file(cls, vocab, **kwargs):
        return cls(cls.read_file(vocab), **kwargs)


class WordLevel(Model):
    def __init__(self, vocab=None, unk_token=None):
        super().__init__({"type": "WordLevel", "vocab": _read_vocab(vocab), "unk_token": unk_token})


class Unigram(Model):
    def __init__(self, vocab=None, unk_id=None, byte_fallback=False):
        super().__init__(
            {
                "type": "Unigram",
                "unk_id": unk_id,
                "vocab": [list(v) for v in (vocab or [])],
                "byte_fallback": byte_fallback,
            }
        )


for _cls in (BPE, WordPiece, WordLevel, Unigram):
    Model._register(_cls.__name__, _cls)
del _cls
