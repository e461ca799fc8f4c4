"""Each position's likeliest next tokens from a decoder-only model's logits (record/next_tokens.py),
shared by our causal lens and Hugging Face's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from attnlens.model.budget import check_budget
from attnlens.record.errors import InputError
from attnlens.record.next_tokens import NextTokens

MAX_TOP = 20  # next tokens a position may ask for: the record stays k × T, small
SOFTMAX_ROWS = 256  # positions whose softmax over the vocabulary is held at once


def check_top(k: object) -> int:
    """k, the next tokens kept per position, or an InputError naming the limit."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_TOP:
        raise InputError(f"k must be a whole number from 1 to {MAX_TOP}, got {k!r}")
    return k


def check_logits_budget(T: int, vocab: int) -> None:
    """Refuse, naming the sizes, when a forward pass's logits (T × V float32) would not fit."""
    check_budget(T * vocab * 4, "next-token logits")


@torch.inference_mode()
def top_next(
    logits: torch.Tensor, k: int, tokens: Sequence[str], names: Sequence[str]
) -> NextTokens:
    """The k likeliest next tokens at each of logits' T positions, (T, V), under its softmax,
    a block of positions at a time (a long input's T × V softmax is as large as its logits).
    names: the token string of each id (an id past them, a padded vocabulary's, is named
    by number)."""
    if logits.ndim != 2 or logits.size(0) != len(tokens):
        raise InputError(f"logits have shape {tuple(logits.shape)}, not ({len(tokens)}, V)")
    k = min(check_top(k), logits.size(1))
    probs, ids = [], []
    for i in range(0, logits.size(0), SOFTMAX_ROWS):
        block = torch.softmax(logits[i : i + SOFTMAX_ROWS].float(), dim=-1)  # (rows, V)
        p, j = block.topk(k, dim=-1)  # (rows, k) each, descending
        probs.append(p)
        ids.append(j)
    top_probs = torch.cat(probs).cpu().numpy().astype(np.float32)  # (T, k)
    top_ids = torch.cat(ids).cpu().numpy().astype(np.int64)  # (T, k)
    n = len(names)
    top_tokens = tuple(
        tuple(names[int(j)] if j < n else f"<id {int(j)}>" for j in row) for row in top_ids
    )
    return NextTokens(tuple(tokens), top_ids, top_tokens, top_probs)
