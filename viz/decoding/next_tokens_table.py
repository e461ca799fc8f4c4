"""A table of a decoder-only model's likeliest next tokens at each position of its input."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from attnlens.record.next_tokens import NextTokens

ORDINALS = ("1st", "2nd", "3rd")


def ordinal(rank: int) -> str:
    """1st, 2nd, 3rd, 4th … for rank 1, 2, 3, 4 …"""
    return ORDINALS[rank - 1] if rank <= len(ORDINALS) else f"{rank}th"


def next_tokens_table(
    nt: NextTokens,
    rows: int | None = None,
    display: Callable[[Sequence[str]], Sequence[str]] = list,
) -> pd.DataFrame:
    """One row per position (the first `rows` of them when given): the token there, the one
    that follows it in the text (none after the last), then the k likeliest next tokens, each
    beside its probability. display: token strings as a person reads them (a lens's
    display_tokens); the rows keep the order of the input."""
    T = len(nt.tokens) if rows is None else min(rows, len(nt.tokens))
    shown = list(display(nt.tokens))
    table: dict[str, Sequence[object]] = {
        "position": list(range(T)),
        "token": shown[:T],
        "next in text": [shown[i + 1] if i + 1 < len(shown) else None for i in range(T)],
    }
    probs = np.asarray(nt.top_probs[:T], dtype=np.float64)  # (T, k)
    for r in range(nt.k):
        table[ordinal(r + 1)] = [display([row[r]])[0] for row in nt.top_tokens[:T]]
        table[f"p({ordinal(r + 1)})"] = [float(p) for p in probs[:, r]]
    return pd.DataFrame(table)
