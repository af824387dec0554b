"""``tokenizers.normalizers``: text clean-up before splitting."""

from tokenizers._component import Component, state_of

__all__ = [
    "BertNormalizer",
    "ByteLevel",
    "Lowercase",
    "NFC",
    "NFD",
    "NFKC",
    "NFKD",
    "Nmt",
    "Normalizer",
    "Precompiled",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
]


class Normalizer(Component):
    _kinds = {}


def _pattern(pattern):
    from tokenizers import Regex

    return {"Regex": pattern.pattern} if isinstance(pattern, Regex) else {"String": pattern}


NFC, NFD, NFKC, NFKD, Lowercase, StripAccents, Nmt, ByteLevel = (
    Normalizer._without_settings(n, __name__)
    for n in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents", "Nmt", "ByteLevel")
)


class BertNormalizer(Normalizer):
    def __init__(self, clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=True):
        super().__init__(
            {
                "type": "BertNormalizer",
                "clean_text": clean_text,
                "handle_chinese_chars": handle_chinese_chars,
                "strip_accents": strip_accents,
                "lowercase": lowercase,
            }
        )


class Sequence(Normalizer):
    def __init__(self, normalizers):
        super().__init__({"type": "Sequence", "normalizers": [state_of(n) for n in normalizers]})


class Replace(Normalizer):
    def __init__(self, pattern, content):
        super().__init__({"type": "Replace", "pattern": _pattern(pattern), "content": content})


class Strip(Normalizer):
    def __init__(self, left=True, right=True):
        super().__init__({"type": "Strip", "strip_left": left, "strip_right": right})


class Prepend(Normalizer):
    def __init__(self, prepend):
        super().__init__({"type": "Prepend", "prepend": prepend})


class Precompiled(Normalizer):
    def __init__(self, precompiled_charsmap):
        import base64

        super().__init__(
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(bytes(precompiled_charsmap)).decode()}
        )


for _cls in (BertNormalizer, Sequence, Replace, Strip, Prepend, Precompiled):
    Normalizer._register(_cls.__name__, _cls)
del _cls
