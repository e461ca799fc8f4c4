"""The decoding run of our own models (encoder-decoder and decoder-only, any tokenizer) alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from model.budget import check_budget, decode_bytes
from model.decoding import DecodeRun, DecodeSettings, Vocabulary, search
from model.tokenizer import Tokenizer
from model.trace import ModelInfo


def decode_own(
    stepper: Any,
    settings: DecodeSettings,
    tok: Tokenizer,
    source: Sequence[int] | None,
    prefix: Sequence[int],
    shown: Sequence[str],
    info: ModelInfo,
    warnings: Sequence[str],
) -> DecodeRun:
    """Check the record fits the memory budget, search, and wrap the result as a DecodeRun.

    shown: the tokens the record lists as its input (the source, or a decoder-only prompt).
    """
    context = len(source) if source is not None else len(prefix)
    needed = decode_bytes(info.n_layers, info.n_heads, context, settings.max_len, settings.width)
    check_budget(needed, "decode", "use a shorter max length or fewer beams")
    # <pad>, <s> and <unk> are never targets in training; were one chosen, the output text
    # (which drops specials) would no longer spell the output tokens
    banned = (tok.pad_id, tok.bos_id, tok.unk_id)
    vocab = Vocabulary(tok.vocab, tok.eos_id, lambda ids: tok.decode(list(ids)), banned)
    steps, hypotheses = search(stepper, settings, source, prefix, vocab)
    return DecodeRun(
        settings.strategy, settings.params(tok.vocab), tuple(shown), hypotheses, steps, info,
        tuple(warnings),
    )  # fmt: skip
