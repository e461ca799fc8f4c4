"""Which heads wrote a token, on our own decoders (model/net/attribution.py), as the lens part
`Attribution`: token strings in (a decode record's, or text read as `trace` reads it), the
record out, the walk's memory checked against the record budget first."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from attnlens.model.budget import check_budget
from attnlens.model.lenses.lens import ids_of_tokens
from attnlens.model.lenses.parts import Attribution, Tokens
from attnlens.model.net.attribution import causal_attribution, seq2seq_attribution
from attnlens.model.net.config import TransformerConfig
from attnlens.model.net.tokenizer import BOS
from attnlens.record.attribution import LogitAttribution
from attnlens.record.errors import InputError

if TYPE_CHECKING:
    from attnlens.model.lenses.causal import CausalLens
    from attnlens.model.lenses.seq2seq import Seq2SeqLens

WHAT, HINT = "direct logit attribution", "attribute a token at an earlier step"


def walk_bytes(c: TransformerConfig, S: int, T: int) -> int:
    """What attributing at the last of T decoder positions (reading S source positions) holds
    besides the model: every layer's states, twice (the walk and the model's own pass), and
    every head's weights of each kind of attention."""
    states = 2 * (c.N + 1) * (S + T) * c.d_model
    weights = 2 * c.N * c.h * T * (T + S)
    return 4 * (states + weights)


def token_id(token: str, vocab: Mapping[str, int], name: str) -> int:
    """The id of the token asked about, or an InputError naming it."""
    if not isinstance(token, str) or token not in vocab:
        raise InputError(f"{token!r} is not a token of {name}'s vocabulary: nothing to attribute")
    return vocab[token]


def checked(tokens: Sequence[str], vocab: Mapping[str, int], name: str, limit: int) -> list[int]:
    """The decoder's ids: at least one position, at most `limit`."""
    if not tokens:
        raise InputError("no decoder position to attribute at: give at least the start token")
    if len(tokens) > limit:
        raise InputError(f"{len(tokens)} decoder positions, but {name} has {limit}")
    return ids_of_tokens(tokens, vocab, name)


def described(name: str, tokens: Sequence[str], token: str) -> dict[str, object]:
    return {"model": name, "token": token, "tokens": tuple(tokens)}


def causal_part(lens: CausalLens) -> Attribution:
    """lm and induction: the start token, the text and any target on the decoder side."""
    index, name, c = lens.tokenizer.index, lens.name, lens.config

    def of(source: Tokens | None, tokens: Tokens, token: str) -> LogitAttribution:
        ids = checked(tokens, index, name, c.max_len)
        target = token_id(token, index, name)
        check_budget(walk_bytes(c, 0, len(ids)), WHAT, HINT)
        return causal_attribution(lens.net, ids, len(ids) - 1, target,
                                  described(name, tokens, token))  # fmt: skip

    def tokens_of(text: str, target: str | None) -> tuple[Tokens | None, Tokens]:
        return None, tuple(lens.prompt(text, target)[1])

    return Attribution(of, tokens_of)


def seq2seq_part(lens: Seq2SeqLens) -> Attribution:
    """translate (and our other encoder-decoders): the source read by the encoder, the start
    token and any target on the decoder side; decoder self- and cross-attention heads."""
    index, name, c = lens.tokenizer.index, lens.name, lens.config

    def of(source: Tokens | None, tokens: Tokens, token: str) -> LogitAttribution:
        if not source:
            raise InputError(f"{name} is an encoder-decoder: its attribution needs a source")
        src = checked(source, index, name, c.max_len)
        ids = checked(tokens, index, name, c.max_len)
        target = token_id(token, index, name)
        check_budget(walk_bytes(c, len(src), len(ids)), WHAT, HINT)
        return seq2seq_attribution(lens.net, src, ids, len(ids) - 1, target,
                                   described(name, tokens, token))  # fmt: skip

    def tokens_of(text: str, target: str | None) -> tuple[Tokens | None, Tokens]:
        _, source, _ = lens.source_ids(text)
        fed = [] if target is None else lens.encode(target, "target", lens.max_tokens)[0].tokens
        return tuple(source), (BOS, *fed)

    return Attribution(of, tokens_of)
