"""Every head of one kind at a glance, computed at trace time from its exact weights: a pooled
overview of each head and the statistics the pages and experiments read first (docs/python.md,
"Long inputs")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True, eq=False)
class Summary:
    """One kind's heads at a glance, computed at trace time from the exact weights a block of
    rows at a time (no step holds more than one block of rows of every head of one layer):
    a pooled overview of each head and the statistics the pages and experiments read first.
    Row i of the overview covers queries row_edges[i] to row_edges[i + 1] − 1 (likewise keys)."""

    overview_max: np.ndarray  # (L, H, B_q, B_k) float16: each block's largest weight
    # (L, H, B_q, B_k) float16: each block's mean weight over all its cells, a masked cell
    # counting as 0 (the sum of the block's weights ÷ its rows × keys)
    overview_mean: np.ndarray
    row_edges: np.ndarray  # (B_q + 1,) int64
    col_edges: np.ndarray  # (B_k + 1,) int64
    entropy: np.ndarray  # (L, H) float32: mean over queries of −Σ p log p, in nats
    previous: np.ndarray  # (L, H) float32: mean weight on the key just before the query's own
    first: np.ndarray  # (L, H) float32: mean weight on key 0 (a first-token sink)
    induction: np.ndarray  # (L, H) float32: mean weight on the key after the latest earlier
    # occurrence of the query's own token, over the queries that have one; NaN without any
    # the rest of the Heads page's statistics (None in records written before they were kept)
    own: np.ndarray | None = None  # (L, H) float32: mean weight on the query's own position
    distance: np.ndarray | None = None  # (L, H) float32: mean over queries of Σⱼ pᵢⱼ |i − j|
    end: np.ndarray | None = None  # (L, H) float32: mean weight on end tokens; NaN without any
    # (L, H, B_q, B_k) float16: each block's mean of αᵢⱼ ‖f_h(xⱼ)‖ over all its cells (a masked
    # cell counting as 0), record/norms.py's measure "norm"; None where the record has no norms
    # (or was written before this was kept)
    overview_norm_mean: np.ndarray | None = None
    # the Heads page's norm shares (analysis/norm_shares.py, from the column sums of the first
    # key and the special tokens): (L, H) float32 each, NaN where the text has no special token;
    # special the weight's share on them, the others (None without norms) the share of
    # Σᵢⱼ αᵢⱼ ‖f_h(xⱼ)‖ the first key, and the special tokens, gave
    special: np.ndarray | None = None
    first_norm: np.ndarray | None = None
    special_norm: np.ndarray | None = None
    # (L, H, B_q, B_k) float16: each block's largest αᵢⱼ ‖f_h(xⱼ)‖, beside the weights' largest;
    # None where the record has no norms (or was written before this was kept)
    overview_norm_max: np.ndarray | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        fields = {name: getattr(self, name) for name in SUMMARY_FIELDS}
        return {name: value for name, value in fields.items() if value is not None}

    def same(self, other: Summary) -> bool:
        """Exact equality of every field (NaN equal to NaN: a statistic no query had)."""
        mine, theirs = self.arrays(), other.arrays()
        return mine.keys() == theirs.keys() and all(
            np.array_equal(mine[f], theirs[f], equal_nan=mine[f].dtype.kind == "f") for f in mine
        )


SUMMARY_FIELDS = ("overview_max", "overview_mean", "row_edges", "col_edges", "entropy",
                  "previous", "first", "induction", "own", "distance", "end",
                  "overview_norm_mean", "special", "first_norm", "special_norm",
                  "overview_norm_max")  # fmt: skip
# absent from older records (and the norms' from any record without norms)
LATER_FIELDS = frozenset({"own", "distance", "end", "overview_norm_mean", "special", "first_norm",
                          "special_norm", "overview_norm_max"})  # fmt: skip
NO_NORM_OVERVIEW = "this record keeps no overview of the norms (recorded without norms, or "
NO_NORM_OVERVIEW += "before attnlens kept one)"


def edges(n: int, blocks: int) -> np.ndarray:
    """Boundaries of at most `blocks` blocks of one width covering 0..n (the last may be
    shorter): every block the same size, so pooling is a reshape."""
    width = max(1, -(-n // blocks))
    return np.append(np.arange(0, n, width), n).astype(np.int64)


def summary_tree(summaries: dict[str, Summary]) -> dict[str, dict[str, np.ndarray]]:
    """The record's "summaries" object: per kind, each field's array."""
    return {kind: s.arrays() for kind, s in summaries.items()}


def summaries_from(tree: dict[str, Any]) -> dict[str, Summary]:
    """Summaries back from summary_tree(...) (JSON lists or arrays alike)."""
    types = {"overview_max": np.float16, "overview_mean": np.float16, "row_edges": np.int64,
             "col_edges": np.int64, "overview_norm_mean": np.float16,
             "overview_norm_max": np.float16}  # fmt: skip
    return {
        kind: Summary(
            **{
                f: np.asarray(fields[f], dtype=types.get(f, np.float32))
                for f in SUMMARY_FIELDS
                if f in fields or f not in LATER_FIELDS
            }
        )
        for kind, fields in tree.items()
    }
