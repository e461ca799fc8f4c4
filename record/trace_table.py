"""A Trace as a long table, one row per (kind, layer, head, query, key), made a few MB at a
time so that no writer holds the whole table (docs/python.md)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from attnlens.record.export import NUMBER_CHARS, csv_cell_bytes
from attnlens.record.kinds import Kind

if TYPE_CHECKING:
    from attnlens.record.trace import Trace

FRAME_COLUMNS = ("kind", "layer", "head", "query", "key", "query_token", "key_token", "weight")
FRAME_PIECE_ROWS = 1 << 14  # rows per piece of the long table: a few MB, whatever the record


def frame_pieces(
    trace: Trace,
    kind: Kind | None = None,
    layer: int | None = None,
    head: int | None = None,
    rows: int = FRAME_PIECE_ROWS,
) -> Iterator[pd.DataFrame]:
    """The long table's rows in order, as tables of at most about `rows` rows each (a whole
    query row at least)."""
    for k in trace.kinds if kind is None else (kind,):
        if k not in trace.kinds:
            continue
        L, H, Q, K = trace.shape_of(k)
        step = max(1, rows // max(1, K))
        for lay in range(L) if layer is None else (layer,):
            for hd in range(H) if head is None else (head,):
                for start in range(0, Q, step):
                    yield _block(trace, k, lay, hd, start, min(Q, start + step))


def csv_bound(
    trace: Trace, kind: Kind | None = None, layer: int | None = None, head: int | None = None
) -> int:
    """At most how many bytes the long table's CSV takes, counted without writing it."""
    total = len(",".join(FRAME_COLUMNS)) + 1
    for k in trace.kinds if kind is None else (kind,):
        if k not in trace.kinds:
            continue
        L, H, Q, K = trace.shape_of(k)
        layers = range(L) if layer is None else range(layer, layer + 1)
        heads = range(H) if head is None else range(head, head + 1)
        pairs = len(layers) * len(heads)
        numbers = sum(len(str(i)) + 1 for i in layers) * len(heads) + sum(
            len(str(i)) + 1 for i in heads
        ) * len(layers)
        q_tokens, k_tokens = trace.tokens(k)
        per_q = sum(len(str(i)) + 1 + csv_cell_bytes(t) for i, t in enumerate(q_tokens))
        per_k = sum(len(str(i)) + 1 + csv_cell_bytes(t) for i, t in enumerate(k_tokens))
        fixed = len(k) + 1 + NUMBER_CHARS  # kind, and the weight with its line end
        total += pairs * Q * K * fixed + numbers * Q * K + pairs * (K * per_q + Q * per_k)
    return total


def _block(trace: Trace, kind: Kind, layer: int, head: int, start: int, stop: int) -> pd.DataFrame:
    """Query rows start..stop-1 of one head in long format."""
    weights = trace.head(kind, layer, head, slice(start, stop))  # (stop - start, K)
    K = weights.shape[-1]
    query, key = (a.ravel() for a in np.indices((stop - start, K)))
    query = query + start
    q_tokens, k_tokens = trace.tokens(kind)
    n = query.size
    return pd.DataFrame(
        {
            "kind": np.full(n, kind),
            "layer": np.full(n, layer, dtype=np.int64),
            "head": np.full(n, head, dtype=np.int64),
            "query": query.astype(np.int64),
            "key": key.astype(np.int64),
            "query_token": np.asarray(q_tokens, dtype=object)[query],
            "key_token": np.asarray(k_tokens, dtype=object)[key],
            "weight": weights.ravel(),
        }
    )
