"""``tokenizers.pre_tokenizers``: splitting text into words before the model."""

from tokenizers._component import Component, state_of

__all__ = [
    "BertPreTokenizer",
    "ByteLevel",
    "CharDelimiterSplit",
    "Digits",
    "FixedLength",
    "Metaspace",
    "PreTokenizer",
    "Punctuation",
    "Sequence",
    "Split",
    "UnicodeScripts",
    "Whitespace",
    "WhitespaceSplit",
]


class PreTokenizer(Component):
    _kinds = {}


def _behavior(behavior):
    return {
        "removed": "Removed",
        "isolated": "Isolated",
        "merged_with_previous": "MergedWithPrevious",
        "merged_with_next": "MergedWithNext",
        "contiguous": "Contiguous",
    }[behavior]


Whitespace, WhitespaceSplit, BertPreTokenizer, UnicodeScripts = (
    PreTokenizer._without_settings(n, __name__)
    for n in ("Whitespace", "WhitespaceSplit", "BertPreTokenizer", "UnicodeScripts")
)


class ByteLevel(PreTokenizer):
    def __init__(self, add_prefix_space=True, trim_offsets=True, use_regex=True):
        super().__init__(
            {
                "type": "ByteLevel",
                "add_prefix_space": add_prefix_space,
                "trim_offsets": trim_offsets,
                "use_regex": use_regex,
            }
        )

    @staticmethod
    def alphabet():
        """The 256 characters byte-level BPE maps bytes to."""
        return sorted(_BYTE_CHARS)


def _byte_chars():
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars, extra = [], 0
    for b in range(256):
        if b in printable:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + extra))
            extra += 1
    return chars


_BYTE_CHARS = _byte_chars()


class Metaspace(PreTokenizer):
    def __init__(self, replacement="▁", prepend_scheme="always", split=True):
        super().__init__(
            {"type": "Metaspace", "replacement": replacement, "prepend_scheme": prepend_scheme, "split": split}
        )


class Split(PreTokenizer):
    def __init__(self, pattern, behavior, invert=False):
        from tokenizers.normalizers import _pattern

        super().__init__(
            {"type": "Split", "pattern": _pattern(pattern), "behavior": _behavior(behavior), "invert": invert}
        )


class CharDelimiterSplit(PreTokenizer):
    def __init__(self, delimiter):
        super().__init__({"type": "CharDelimiterSplit", "delimiter": delimiter})


class Digits(PreTokenizer):
    def __init__(self, individual_digits=False):
        super().__init__({"type": "Digits", "individual_digits": individual_digits})


class Punctuation(PreTokenizer):
    def __init__(self, behavior="isolated"):
        super().__init__({"type": "Punctuation", "behavior": _behavior(behavior)})


class FixedLength(PreTokenizer):
    def __init__(self, length=5):
        super().__init__({"type": "FixedLength", "length": length})


class Sequence(PreTokenizer):
    def __init__(self, pretokenizers):
        super().__init__({"type": "Sequence", "pretokenizers": [state_of(p) for p in pretokenizers]})


for _cls in (ByteLevel, Metaspace, Split, CharDelimiterSplit, Digits, Punctuation, FixedLength, Sequence):
    PreTokenizer._register(_cls.__name__, _cls)
del _cls
