"""Which heads wrote a token, on a Hugging Face decoder (hf/attribution.py), as the lens part
`Attribution`: a decode record's token strings (or text read as `trace` reads it) to ids, the
record out; None with the reason on an encoder-only model or a layout attnlens does not state."""

from __future__ import annotations

from typing import TYPE_CHECKING

from attnlens.model.lenses.hf.attribution import hf_attribution, why_no_layout
from attnlens.model.lenses.hf.encoding import (
    encode_prompt,
    encode_source,
    encode_target,
    start_id,
)
from attnlens.model.lenses.own_attribution import checked, described, token_id
from attnlens.model.lenses.parts import Attribution, Tokens
from attnlens.record.attribution import LogitAttribution
from attnlens.record.errors import InputError

if TYPE_CHECKING:
    from attnlens.model.lenses.hf.lens import HFLens


def hf_part(lens: HFLens) -> tuple[Attribution | None, str]:
    """The part, or None and why not ("" for an encoder-only model: the contract's reason)."""
    if lens.architecture == "encoder":
        return None, ""
    model_type = str(lens.model.config.model_type)
    why = why_no_layout(lens.model, model_type, lens.name)
    if why:
        return None, why
    vocab, name, limit = lens.vocab_ids, lens.name, lens.max_tokens
    seq2seq = lens.architecture == "encoder-decoder"

    def of(source: Tokens | None, tokens: Tokens, token: str) -> LogitAttribution:
        src = None
        if seq2seq:
            if not source:
                raise InputError(f"{name} is an encoder-decoder: its attribution needs a source")
            src = checked(source, vocab, name, limit)
        ids = checked(tokens, vocab, name, limit)
        target = token_id(token, vocab, name)
        return hf_attribution(lens.model, model_type, lens.info, ids, len(ids) - 1, target,
                              described(name, tokens, token), src)  # fmt: skip

    def tokens_of(text: str, target: str | None) -> tuple[Tokens | None, Tokens]:
        names = lens.names
        if not seq2seq:
            prompt = encode_prompt(lens.tokenizer, text, target, limit, name)
            return None, tuple(names[i] for i in prompt.ids)
        src = encode_source(lens.tokenizer, text, limit, name)
        fed: tuple[int, ...] = ()
        if target is not None:
            fed = encode_target(lens.tokenizer, target, limit, name, None).ids
        start = start_id(lens.model, lens.tokenizer)
        return tuple(names[i] for i in src.ids), tuple(names[i] for i in (start, *fed))

    return Attribution(of, tokens_of), ""
