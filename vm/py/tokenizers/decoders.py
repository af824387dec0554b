"""``tokenizers.decoders``: turning tokens back into text."""

from tokenizers._component import Component, state_of

__all__ = [
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "CTC",
    "Decoder",
    "Fuse",
    "Metaspace",
    "Replace",
    "Sequence",
    "Strip",
    "WordPiece",
]


class Decoder(Component):
    _kinds = {}


ByteFallback, Fuse = (Decoder._without_settings(n, __name__) for n in ("ByteFallback", "Fuse"))


class ByteLevel(Decoder):
    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        super().__init__(
            {
                "type": "ByteLevel",
                "add_prefix_space": add_prefix_space,
                "trim_offsets": trim_offsets,
                "use_regex": use_regex,
            }
        )


class WordPiece(Decoder):
    def __init__(self, prefix="##", cleanup=True):
        super().__init__({"type": "WordPiece", "prefix": prefix, "cleanup": cleanup})


class Metaspace(Decoder):
    def __init__(self, replacement="▁", prepend_scheme="always", split=True):
        super().__init__(
            {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}
        )


class BPEDecoder(Decoder):
    def __init__(self, suffix="</w>"):
        super().__init__({"type": "BPEDecoder", "suffix": suffix})


class CTC(Decoder):
    def __init__(self, pad_token="<pad>", word_delimiter_token="|", cleanup=True):
        super().__init__(
            {"type": "CTC", "pad_token": pad_token, "word_delimiter_token": word_delimiter_token, "cleanup": cleanup}
        )


class Replace(Decoder):
    def __init__(self, pattern, content):
        from tokenizers.normalizers import _pattern

        super().__init__({"type": "Replace", "pattern": _pattern(pattern), "content": content})


class Strip(Decoder):
    def __init__(self, content=" ", left=0, right=0):
        super().__init__({"type": "Strip", "content": content, "start": left, "stop": right})


class Sequence(Decoder):
    def __init__(self, decoders):
        super().__init__({"type": "Sequence", "decoders": [state_of(d) for d in decoders]})


for _cls in (ByteLevel, WordPiece, Metaspace, BPEDecoder, CTC, Replace, Strip, Sequence):
    Decoder._register(_cls.__name__, _cls)
del _cls
