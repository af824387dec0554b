"""``tokenizers.processors``: special tokens around encoded sequences."""

from tokenizers._component import Component, state_of

__all__ = ["BertProcessing", "ByteLevel", "PostProcessor", "RobertaProcessing", "Sequence", "TemplateProcessing"]


class PostProcessor(Component):
    _kinds = {}

    def num_special_tokens_to_add(self, is_pair):
        from tokenizers import Tokenizer
        from tokenizers.models import WordLevel

        t = Tokenizer(WordLevel({}, unk_token=None))
        t.post_processor = self
        return t.num_special_tokens_to_add(is_pair)


def _template(template):
    """A template as the crate's pieces: ``"[CLS] $A [SEP] $B:1"``."""
    if template is None:
        return None
    if isinstance(template, str):
        template = template.split()
    pieces = []
    for item in template:
        name, _, type_id = item.partition(":")
        type_id = int(type_id) if type_id else 0
        if name.startswith("$"):
            sequence = name[1:] or "A"
            if sequence.isdigit():
                type_id, sequence = int(sequence), "A"
            pieces.append({"Sequence": {"id": sequence, "type_id": type_id}})
        else:
            pieces.append({"SpecialToken": {"id": name, "type_id": type_id}})
    return pieces


class TemplateProcessing(PostProcessor):
    def __init__(self, single=None, pair=None, special_tokens=None):
        tokens = {}
        for token in special_tokens or []:
            if isinstance(token, dict):
                tokens[token["id"]] = {"id": token["id"], "ids": list(token["ids"]), "tokens": list(token["tokens"])}
            else:
                name, token_id = token
                tokens[name] = {"id": name, "ids": [token_id], "tokens": [name]}
        single = _template(single) or [{"Sequence": {"id": "A", "type_id": 0}}]
        pair = _template(pair) or single + [{"Sequence": {"id": "B", "type_id": 1}}]
        super().__init__({"type": "TemplateProcessing", "single": single, "pair": pair, "special_tokens": tokens})

    def __repr__(self):
        # As the crate prints its template pieces and special tokens.
        def piece(p):
            ((kind, fields),) = p.items()
            name = fields["id"] if kind == "Sequence" else f'"{fields["id"]}"'
            return f"{kind}(id={name}, type_id={fields['type_id']})"

        def token(t):
            ids = ", ".join(str(i) for i in t["ids"])
            tokens = ", ".join(f'"{x}"' for x in t["tokens"])
            return f'SpecialToken(id="{t["id"]}", ids=[{ids}], tokens=[{tokens}])'

        single = ", ".join(piece(p) for p in self._state["single"])
        pair = ", ".join(piece(p) for p in self._state["pair"])
        special = ", ".join(f'"{k}":{token(v)}' for k, v in self._state["special_tokens"].items())
        return f"TemplateProcessing(single=[{single}], pair=[{pair}], special_tokens={{{special}}})"


class BertProcessing(PostProcessor):
    def __init__(self, sep, cls):
        super().__init__({"type": "BertProcessing", "sep": list(sep), "cls": list(cls)})


class RobertaProcessing(PostProcessor):
    def __init__(self, sep, cls, trim_offsets=True, add_prefix_space=True):
        super().__init__(
            {
                "type": "RobertaProcessing",
                "sep": list(sep),
                "cls": list(cls),
                "trim_offsets": trim_offsets,
                "add_prefix_space": add_prefix_space,
            }
        )


class ByteLevel(PostProcessor):
    def __init__(self, add_prefix_space=None, trim_offsets=True, use_regex=True):
        state = {
            "type": "ByteLevel",
            "add_prefix_space": True if add_prefix_space is None else add_prefix_space,
            "trim_offsets": trim_offsets,
            "use_regex": use_regex,
        }
        super().__init__(state)


class Sequence(PostProcessor):
    def __init__(self, processors):
        super().__init__({"type": "Sequence", "processors": [state_of(p) for p in processors]})


for _cls in (TemplateProcessing, BertProcessing, RobertaProcessing, ByteLevel, Sequence):
    PostProcessor._register(_cls.__name__, _cls)
del _cls
