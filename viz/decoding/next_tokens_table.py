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
    """One row per position (when `rows` are given and the text is longer, the first rows - 1
    and the last, where a continuation starts): the token there, the one that follows it in the
    text (none after the last), then the k likeliest next tokens, each beside its probability.
    display: token strings as a person reads them (a lens's display_tokens); the rows keep
    the order of the input."""
    at = shown_positions(len(nt.tokens), rows)
    shown = list(display(nt.tokens))
    table: dict[str, Sequence[object]] = {
        "position": at,
        "token": [shown[i] for i in at],
        "next in text": [shown[i + 1] if i + 1 < len(shown) else None for i in at],
    }
    probs = np.asarray(nt.top_probs, dtype=np.float64)[at]  # (rows, k)
    for r in range(nt.k):
        table[ordinal(r + 1)] = [display([nt.top_tokens[i][r]])[0] for i in at]
        table[f"p({ordinal(r + 1)})"] = [float(p) for p in probs[:, r]]
    return pd.DataFrame(table)


def shown_positions(T: int, rows: int | None) -> list[int]:
    """The positions a table of at most `rows` shows of T: every one, or the first rows - 1
    and the last (the issue: the first 100 of a long input left out its last position, the one
    a continuation starts from)."""
    if rows is None or rows >= T:
        return list(range(T))
    return [*range(max(rows - 1, 0)), T - 1]
