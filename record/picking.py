"""Picking one kind, layer and head out of a Trace, with errors that name the value and limit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnlens.record.trace import Kind, Trace

KIND_TITLES: dict[str, str] = {
    "encoder_self": "encoder self-attention",
    "decoder_self": "decoder self-attention",
    "cross": "cross-attention (decoder → encoder)",
}


# tokens that end a text or a segment: the Heads page measures the weight they draw
END_TOKENS = frozenset({"</s>", "<eos>", "[SEP]", "<|endoftext|>"})
# every special token ([CLS], [SEP], <s>, </s>, …): the norm shares' (analysis/norm_shares.py)
SPECIALS = frozenset({*END_TOKENS, "[CLS]", "<s>", "<|endoftext|>", "<|begin_of_text|>"})


def special_keys(tokens: Sequence[str]) -> list[int]:
    """The positions of special tokens ([CLS], [SEP], <s>, </s>, …) among the keys."""
    return [j for j, token in enumerate(tokens) if token in SPECIALS]


def attention_of(trace: Trace, kind: Kind) -> np.ndarray:
    """The (L, H, Q, K) attention of one kind, or a ValueError naming the kinds there are."""
    weights = trace.attention(kind)
    if weights is None:
        there = ", ".join(trace.kinds) or "none"
        raise ValueError(f"{trace.model.name} records no {kind} attention; it has {there}")
    return weights


def allowed_of(trace: Trace, kind: Kind) -> np.ndarray:
    """The (Q, K) mask of one kind; all True when the record holds none."""
    mask = trace.mask(kind)
    if mask is not None:
        return np.asarray(mask, dtype=bool)
    Q, K = attention_of(trace, kind).shape[2:]
    return np.ones((Q, K), dtype=bool)


def check_layer(weights: np.ndarray, layer: int) -> None:
    """A ValueError unless 0 ≤ layer < L."""
    L = weights.shape[0]
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} is outside 0..{L - 1} ({L} layers)")


def check_head(weights: np.ndarray, head: int) -> None:
    """A ValueError unless 0 ≤ head < H."""
    H = weights.shape[1]
    if not 0 <= head < H:
        raise ValueError(f"head {head} is outside 0..{H - 1} ({H} heads)")


def true_source_hits(weights: np.ndarray, reference: Sequence[int]) -> np.ndarray:
    """(L, H) counts of output rows (0..len(reference)-1) of cross-attention weights
    (L, H, Q, K) whose largest weight is on the row's true source position."""
    Q, K = weights.shape[2:]
    if len(reference) > Q or any(not 0 <= k < K for k in reference):
        raise ValueError(
            f"a reference of {len(reference)} output tokens pointing into 0..{K - 1} does not "
            f"fit this record's {Q} target and {K} source positions"
        )
    argmax = weights[:, :, : len(reference)].argmax(-1)  # (L, H, R)
    counts: np.ndarray = (argmax == np.asarray(reference, dtype=int)).sum(-1)
    return counts


def earlier_matches(tokens: Sequence[object]) -> list[tuple[int, int]]:
    """(q, j) for every position q whose token occurred before, at j (the latest such j with
    j + 1 < q): an induction head at q looks at j + 1."""
    last: dict[object, int] = {}
    pairs = []
    for q, tok in enumerate(tokens):
        j = last.get(tok)
        if j is not None and j + 1 < q:
            pairs.append((q, j))
        last[tok] = q
    return pairs
